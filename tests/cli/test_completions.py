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


def test_each_command_completes_its_own_option_values_as_declared():
    """One declaration per option: the values a command's option offers (its check's or its own
    ``completes``), per command: explain's --target is not evaluate's."""
    script = COMPLETIONS / "contrastcat.bash"

    def offered(*words: str) -> list[str]:
        probe = (f'source "{script}"; COMP_WORDS=(contrastcat {" ".join(words)} ""); COMP_CWORD={len(words) + 1}; '
                 '_contrastcat; printf "%s\\n" "${COMPREPLY[@]}"')
        return subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.split()

    assert offered("explain", "--target") == ["pred", "gold", "all-active"]
    assert offered("evaluate", "--target") == ["pred", "gold", "record"]
    assert offered("explain", "--layers") == ["all", "1", "2", "3"]
    assert offered("compare", "--device") == ["auto", "cpu", "cuda"]
    assert offered("evaluate", "--order") == ["morf,lerf", "morf", "lerf"]
    assert offered("explain", "--text-field") == offered("compare", "--limit") == []  # free text: no file names
    from contrastcat.usecases.options.explain import ExplainOptions

    assert ExplainOptions.spec("target").completes == ("pred", "gold", "all-active")
    assert ExplainOptions.spec("output").completes == "path"  # its check (options.file_name) says so


def test_a_new_commands_options_complete_from_their_declarations_alone():
    """A command's options declared once (a check of fixed values, a file name, an explicit list)
    complete with no table anywhere else; free text offers nothing."""
    from dataclasses import dataclass
    from typing import ClassVar

    from contrastcat import arguments
    from contrastcat.spec import CommandOptions, option
    from contrastcat.usecases.options import file_name
    from contrastcat_cli.completions import bash
    from contrastcat_cli.completions import describe
    from contrastcat_cli.spec import command

    @dataclass(frozen=True)
    class ProbeOptions(CommandOptions):
        command: ClassVar[str] = "probe"
        shade: str = option("dark", "A shade.", arguments.one_of(("dark", "light")))
        into: str = option("-", "A file.", file_name, flags=("--into", "-i"))
        size: str = option("s", "A size.", arguments.text, completes=("s", "m"))
        note: str = option("", "Free text.", arguments.text)

    probe = typer.Typer()
    probe.command("probe")(command(ProbeOptions, lambda values: None, "Probe."))
    probe.command("other")(lambda: None)
    (described,) = [c for c in describe(typer.main.get_command(probe)) if c.name == "probe"]
    found = {option.long: option.completes for option in described.options}
    assert found == {"--shade": ("dark", "light"), "--into": "path", "--size": ("s", "m"), "--note": None,
                     "--help": None}
    script = bash([described])
    assert '--shade) COMPREPLY=($(compgen -W "dark light" -- "$cur")); return ;;' in script
    assert '--into|-i) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;' in script
    assert '--note) COMPREPLY=(); return ;;' in script
