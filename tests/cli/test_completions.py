"""Shell completions are generated from the Typer app; the committed ones must be current."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from contrastcat_cli.completions import generate

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


def test_committed_completions_are_current():
    for name, text in generate().items():
        committed = (COMPLETIONS / name).read_text(encoding="utf-8")
        assert committed == text, f"completions/{name} is stale: run python -m contrastcat_cli.completions completions"


def test_completions_know_every_command_option_and_method():
    scripts = generate()
    for fragment in ("build-refs", "refs-used", "kendall", "words", "strict-gamma", "reference-select", "ig-steps",
                     "contrastcat contrastcat-plus contrastcat-lrp attcat cat tis rawatt rollout", "top-maps", "refine-score"):
        for name, text in scripts.items():
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
