"""The command line answers what needs no model without importing the libraries of the work:
--help, a command's --help, the completions and the refusals of bad options and missing files
import neither torch, transformers, numpy nor h5py, and reading records (render, merge) imports
no torch, transformers or h5py (``python -X importtime`` lists every module
a process imported). benchmarks/startup.py times them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from contrastcat_cli.app import COMMANDS

from ..helpers import OFFLINE, record

HEAVY = ("torch", "transformers", "numpy", "h5py", "matplotlib", "scipy", "safetensors", "tokenizers", "pandas")


def imported(*arguments: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages a ``contrastcat ARGUMENTS`` process imported, and how it ended."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "contrastcat_cli", *arguments], capture_output=True, text=True,
        env={**os.environ, **OFFLINE}, timeout=120,
    )
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names, done


@pytest.mark.parametrize("arguments", [
    ("--help",), ("explain", "--help"), ("compare", "--help"), ("evaluate", "--help"), ("completions", "bash"),
    ("models", "--help"),
])
def test_help_and_completions_import_no_model_library(arguments):
    names, done = imported(*arguments)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "typer" in names  # the listing is read: the app itself was imported
    assert not names & set(HEAVY), sorted(names & set(HEAVY))


def test_refusals_that_need_no_model_import_none(tmp_path):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(json.dumps({"text": "a good film"}) + "\n")
    for arguments, said in [
        (("evaluate", str(tmp_path / "missing.jsonl")), "missing.jsonl: no such file"),
        (("explain", str(inputs), "--method", "atcat"), "unknown method 'atcat'"),
        (("compare", str(inputs), "--method", "atcat,random"), "--method atcat: unknown method 'atcat'"),
        (("compare", str(inputs), "--method", "attcat[layers=x],random"), "layers must be all or a positive"),
        (("explain", str(inputs), "--batch-size", "0"), "--batch-size must be"),
        # the methods' own flags, checked before the run loads anything
        (("explain", str(inputs), "--rho", "banana"), "--rho must be one of mean+std"),
        (("explain", str(inputs), "--layers", "x"), "--layers must be all or a positive"),
        (("explain", str(inputs), "--seed", "9" * 30), "--seed must be at most"),
        (("explain", str(inputs), "--refs", str(tmp_path / "nope.h5")), "nope.h5: no such reference library file"),
        (("render", str(tmp_path / "missing.jsonl")), "no such file"),
    ]:
        names, done = imported(*arguments)
        assert done.returncode == 2 and said in done.stderr, (arguments, done.stderr[-1500:])
        assert not names & set(HEAVY), (arguments, sorted(names & set(HEAVY)))


def test_render_merge_and_models_list_load_no_model_library(tmp_path):
    """Showing or merging records, or listing the embedded models, needs no model: a shell loop
    over many files pays no torch."""
    records = tmp_path / "records.jsonl"
    text = " ".join(str(i) for i in range(10, 20))  # the stub record's ten tokens, at their offsets
    offsets = [[0, 0]] + [[3 * i, 3 * i + 2] for i in range(10)] + [[0, 0]]
    records.write_text(json.dumps(record(text=text, offsets=offsets).to_dict()) + "\n")
    for arguments, said, code in [
        (("render", str(records), "--color", "never"), "", 0),
        (("render", str(records), "--html", str(tmp_path / "page.html")), "page.html", 0),
        # merge's modules are all imported before it reads a line: its refusal shows what it loads
        (("merge", str(records), "-o", str(tmp_path / "merged.jsonl")), "not a contrastcat part file", 2),
        (("models", "list", "--json"), "", 0),
    ]:
        names, done = imported(*arguments)
        assert done.returncode == code and said in done.stderr, (arguments, done.stderr[-1500:])
        assert not names & {"torch", "transformers", "h5py", "tokenizers", "safetensors"}, (arguments, sorted(names & set(HEAVY)))
    assert "10" in (tmp_path / "page.html").read_text() and not (tmp_path / "merged.jsonl").exists()


def _answer(application, arguments: list[str]) -> tuple[int, str]:
    from typer.testing import CliRunner

    result = CliRunner().invoke(application, arguments, prog_name="contrastcat", env={"COLUMNS": "100"})
    return result.exit_code, result.output


@pytest.mark.parametrize("name", [name for name, _ in COMMANDS])
def test_a_process_given_one_command_answers_as_the_whole_app(name, tmp_path):
    """The console script builds only the command it was started for: its help, its refusals of a
    misspelt flag and of a bad value, and what it prints are the whole app's, word for word."""
    from contrastcat_cli.app import WHOLE_TREE, app, build_app

    alone = build_app(name)
    commands = set(typer_commands(alone))
    assert commands == (set(typer_commands(app)) if name in WHOLE_TREE else {name})
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(json.dumps({"text": "a good film"}) + "\n")
    for arguments in ([name, "--help"], [name, str(inputs), "--bogus"], [name, str(inputs), "--batch-size", "0"],
                      [name, "list", "--json"], [name, "bash"]):
        assert _answer(alone, arguments) == _answer(app, arguments), arguments


def typer_commands(application) -> list[str]:
    import typer

    return list(typer.main.get_command(application).commands)
