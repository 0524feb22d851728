"""One definition per method option: strict names, and a method added at run time
reaches --list-methods, explain's flags and the shell completions with no other change."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

import pytest
import torch
import typer
from typer.testing import CliRunner

from contrastcat.capture.core import ACTIVATIONS
from contrastcat.errors import BadInput
from contrastcat.methods import (
    AttributionMethod,
    MethodOptions,
    build_method,
    build_methods,
    minmax,
    option,
    register,
    unregister,
)

from ..helpers import EXE, OFFLINE


def test_a_misspelt_option_is_an_error_listing_the_valid_ones():
    with pytest.raises(BadInput) as caught:
        build_method("contrastcat", ref_used=5)
    assert str(caught.value) == (
        "method contrastcat has no option 'ref_used' (its options: refs_used, refine, rho, deletion_grid, "
        "attention, reference_select, layers, seed, test_steps, test_measure)"
    )
    with pytest.raises(BadInput, match="method rollout has no option 'seed' \\(its options: none\\)"):
        build_method("rollout", seed=1)
    with pytest.raises(BadInput, match="method tis has no option 'cluster' \\(its options: clusters, seed\\)"):
        build_methods(["tis"], cluster=3)
    with pytest.raises(BadInput, match="no method has an option 'cluster' \\(options: refs_used, "):
        build_methods(["tis", "cat"], cluster=3)
    with pytest.raises(BadInput, match="option 'clusters' is not an option of cat, attcat"):
        build_methods(["cat", "attcat"], clusters=3)
    assert [m.settings() for m in build_methods(["cat", "tis"], clusters=3)] == [
        {"layers": "all"}, {"clusters": 3, "seed": 0}
    ]


def test_a_misspelt_flag_is_one_line_from_the_installed_cli(tmp_path):
    done = subprocess.run(
        [EXE, "explain", str(tmp_path / "in.jsonl"), "--ref-used", "5"],
        capture_output=True, text=True, env={**OFFLINE, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: No such option: --ref-used") and "--refs-used" in done.stderr


def test_options_are_validated_where_they_are_defined():
    with pytest.raises(BadInput, match="^`rho` must be one of mean\\+std, mean, mean-std, got 'median'$"):
        build_method("contrastcat", rho="median")
    with pytest.raises(BadInput, match="^`refs_used` must be 0 \\(AttCAT\\) or more$"):
        build_method("contrastcat", refs_used=-1)
    with pytest.raises(BadInput, match="^method tis: option clusters must be int, got True$"):
        build_method("tis", clusters=True)
    assert build_method("cat", layers="2").settings() == build_method("cat", layers=2).settings() == {"layers": 2}


@dataclass(frozen=True)
class DummyOptions(MethodOptions):
    dummy_strength: int = option(1, "Dummy: how far to favour the first token.", minimum=0)
    dummy_mode: str = option("plain", "Dummy: plain or loud.", choices=("plain", "loud"))


class Dummy(AttributionMethod):
    name = "dummy-first"
    summary = "a test's method: the first tokens score highest"
    Options = DummyOptions
    needs = frozenset({ACTIVATIONS})

    def candidate_maps(self, captured, library=None, passes=None):
        maps = []
        for length in captured.lengths:
            scores = torch.arange(length, 0, -1, dtype=torch.float32) ** (1 + self.options.dummy_strength)
            maps.append(minmax(scores)[None])
        return maps


@pytest.fixture
def dummy():
    register(Dummy)
    try:
        yield Dummy
    finally:
        unregister(Dummy.name)


def test_a_method_registered_at_run_time_reaches_the_cli_and_the_completions(dummy, toy_dir, tmp_path):
    from contrastcat_cli.app import build_app
    from contrastcat_cli.completions import generate

    app = build_app()
    runner = CliRunner()
    listing = runner.invoke(app, ["explain", "--list-methods"])
    assert listing.exit_code == 0 and "dummy-first" in listing.output and "--dummy-strength" in listing.output
    help_text = runner.invoke(app, ["explain", "--help"]).output
    assert "--dummy-strength" in help_text and "--dummy-mode" in help_text and "how far to favour" in help_text
    scripts = generate(typer.main.get_command(app))
    assert "--dummy-strength" in scripts["bash"] and "--dummy-strength" in scripts["zsh"]
    assert "-l dummy-strength -x -d 'Dummy: how far to favour the first token'" in scripts["fish"]
    assert "--dummy-mode) COMPREPLY=($(compgen -W \"plain loud\"" in scripts["bash"]
    out = tmp_path / "dummy.jsonl"
    result = runner.invoke(app, ["explain", str(toy_dir / "inputs.jsonl"), "--model", str(toy_dir / "model"),
                                 "--method", "dummy-first,attcat", "--dummy-strength", "3", "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    dummies = [r for r in records if r["method"] == "dummy-first"]
    assert dummies and all(r["settings"] == {"dummy_strength": 3, "dummy_mode": "plain", "mask_special": False}
                           for r in dummies)
    assert all(r["scores"][0] == 1.0 for r in dummies)
    bad = runner.invoke(app, ["explain", str(toy_dir / "inputs.jsonl"), "--model", str(toy_dir / "model"),
                              "--method", "attcat", "--dummy-mode", "quiet", "-q"])
    assert bad.exit_code == 2 and "--dummy-mode must be one of plain, loud, got 'quiet'" in bad.output
    # Registered only while the fixture runs: the default app knows nothing of it.
    from contrastcat_cli.app import app as default_app

    assert "--dummy-strength" not in runner.invoke(default_app, ["explain", "--help"]).output
