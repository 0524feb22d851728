"""Shell completions are generated from the Typer app; the committed ones must be current."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import typer

from contrastcat_cli.app import app
from contrastcat_cli.completions import FILES, generate

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


def scripts() -> dict[str, str]:
    return generate(typer.main.get_command(app))


def test_committed_completions_are_current():
    for shell, text in scripts().items():
        committed = (COMPLETIONS / FILES[shell]).read_text(encoding="utf-8")
        assert committed == text, f"completions/{FILES[shell]} is stale: run make completions"


def test_completions_know_every_command_option_and_method():
    scripts_ = scripts()
    for fragment in ("build-refs", "refs-used", "kendall", "words", "strict-gamma", "reference-select", "ig-steps",
                     "contrastcat contrastcat-plus contrastcat-lrp attcat cat tis rawatt rollout", "top-maps", "refine-score"):
        for name, text in scripts_.items():
            assert fragment in text, (name, fragment)


@pytest.mark.parametrize("shell, name", [("bash", "contrastcat.bash"), ("zsh", "_contrastcat"), ("fish", "contrastcat.fish")])
def test_completion_scripts_parse(shell, name):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here")
    result = subprocess.run([shell, "-n", str(COMPLETIONS / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_bash_completes_subcommands_and_choices():
    script = COMPLETIONS / "contrastcat.bash"
    probe = (
        f'source "{script}"; '
        'COMP_WORDS=(contrastcat ex); COMP_CWORD=1; _contrastcat; echo "${COMPREPLY[@]}"; '
        'COMP_WORDS=(contrastcat explain --method a); COMP_CWORD=3; _contrastcat; echo "${COMPREPLY[@]}"; '
        'COMP_WORDS=(contrastcat explain --reference-select s); COMP_CWORD=3; _contrastcat; echo "${COMPREPLY[@]}"'
    )
    result = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
    assert result.stdout.splitlines() == ["explain", "attcat att-grads att-x-att-grads attnlrp all", "same"]


@pytest.mark.parametrize("shell, name", [("bash", "contrastcat.bash"), ("zsh", "_contrastcat"), ("fish", "contrastcat.fish")])
def test_the_command_prints_the_script_of_the_same_tree(shell, name):
    from tests.helpers import invoke

    result = invoke("completions", shell)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == (COMPLETIONS / name).read_text(encoding="utf-8")


def test_completions_complete_their_own_shells_and_refuse_others():
    from tests.helpers import invoke

    script = COMPLETIONS / "contrastcat.bash"
    probe = f'source "{script}"; COMP_WORDS=(contrastcat completions ""); COMP_CWORD=2; _contrastcat; echo "${{COMPREPLY[@]}}"'
    assert subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.split() == ["bash", "zsh", "fish"]
    result = invoke("completions", "tcsh")
    assert result.exit_code == 2 and "tcsh" in result.stderr and "Traceback" not in result.stderr
    result = invoke("completions")
    assert result.exit_code == 2 and result.stderr == "error: completions: name the shell: bash, zsh or fish\n"


def test_bash_completes_file_names_with_spaces_whole(tmp_path):
    (tmp_path / "my file.jsonl").write_text("")
    (tmp_path / "my*star.jsonl").write_text("")
    script = COMPLETIONS / "contrastcat.bash"
    probe = (
        f'source "{script}"; COMP_WORDS=(contrastcat render my); COMP_CWORD=2; _contrastcat; printf "<%s>\\n" "${{COMPREPLY[@]}}"; '
        'COMP_WORDS=(contrastcat render --html my); COMP_CWORD=3; _contrastcat; printf "<%s>\\n" "${COMPREPLY[@]}"'
    )
    shown = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, cwd=tmp_path).stdout.splitlines()
    assert sorted(shown) == sorted(["<my file.jsonl>", "<my*star.jsonl>"] * 2)


def test_a_variants_brackets_read_as_written_in_the_descriptions():
    """zsh's --option[description] escapes the brackets of a variant's syntax (unescaped, the first
    ']' ends the description); fish shows them as they are."""
    zsh = (COMPLETIONS / "_contrastcat").read_text(encoding="utf-8")
    fish = (COMPLETIONS / "contrastcat.fish").read_text(encoding="utf-8")
    assert "a variant as name\\[option=value,...\\]: the default" in zsh
    assert "a variant as name[option=value,...]: the default" in fish
    assert "name(option=value" not in zsh + fish
