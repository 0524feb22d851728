"""Command options written once (``contrastcat.spec``): the flag, the keyword argument and the
check come from one field; each value is checked once, where it is read, and named as the caller
spells it; the command line's flags are exactly the options' own."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import ClassVar

import pytest
import typer

import contrastcat
from contrastcat import arguments as check
from contrastcat.api import EvaluateOptions, SanityOptions
from contrastcat.errors import BadInput
from contrastcat.spec import CommandOptions, InCall, OnCommandLine, option
from contrastcat_cli.app import app

from .helpers import assert_one_line_error, invoke

CALLS: list[tuple[str, object]] = []


def _counted(named, value):
    CALLS.append((named, value))
    return check.count(named, value)


@dataclass(frozen=True)
class Small(CommandOptions):
    command: ClassVar[str] = "small"

    size: int = option(3, "How many.", _counted, kind=int)
    name: str = option("x", "Which one.", check.text, flags=("--which", "-w"))
    loud: bool = option(False, "Print more.", check.flag, kind=bool, negatable=False, where="command")


def test_each_value_is_checked_once_and_named_as_the_caller_spells_it():
    CALLS.clear()
    read = Small.read({"size": 5}, InCall("small_file"))
    assert (read.size, read.name, read.loud) == (5, "x", False)
    assert CALLS == [("small_file: size", 5)]  # once; a default is not checked again
    with pytest.raises(BadInput, match=r"^small_file: size must be a whole number of at least 1, got 0$"):
        Small.read({"size": 0}, InCall("small_file"))
    with pytest.raises(BadInput, match=r"^--size must be a whole number of at least 1, got 0$"):
        Small.read({"size": 0, "name": "x", "loud": True}, OnCommandLine(), where="command")
    with pytest.raises(BadInput, match=r"^--which must be a non-empty string"):
        Small.read({"size": 1, "name": "", "loud": False}, OnCommandLine(), where="command")
    # The command line's own options are not the call's.
    with pytest.raises(BadInput, match=r"^small_file\(\) got an unexpected keyword argument 'loud' \(its options: size, name\)"):
        Small.read({"loud": True}, InCall("small_file"))
    assert Small.read({"loud": True}, OnCommandLine(), where="command").loud is True


def _flags(command_name: str) -> dict[str, tuple[str, ...]]:
    command = typer.main.get_command(app).commands[command_name]
    return {p.name: tuple(p.opts) for p in command.params if p.param_type_name == "option" and p.name != "help"}


@pytest.mark.parametrize("options, command_name", [(EvaluateOptions, "evaluate"), (SanityOptions, "sanity")])
def test_the_commands_flags_are_the_options_own(options, command_name):
    specs = {s.name: s for s in options.specs("command") if not s.argument}
    flags = _flags(command_name)
    assert flags.keys() == specs.keys()
    for name, spec in specs.items():
        assert set(spec.flags) <= set(flags[name]), name
    # The call takes every option but how the command prints, and names them as keywords.
    call = inspect.signature(getattr(contrastcat, f"{command_name}_file")).parameters
    assert set(call) == {s.name for s in options.specs("call")}
    assert {"as_json", "quiet"}.isdisjoint(call)


def test_a_bad_value_is_one_line_in_flag_terms_from_the_shell_and_keyword_terms_from_python(tmp_path):
    records = tmp_path / "attr.jsonl"
    records.write_text("")
    assert_one_line_error(invoke("evaluate", records, "--min-tokens", "0"), "--min-tokens must be a whole number")
    assert_one_line_error(invoke("evaluate", records, "--order", "up"), "--order must be a comma list of morf, lerf")
    assert_one_line_error(invoke("sanity", records, "--bootstrap", "7"), "--bootstrap must be 0 (off) or 100 to")
    with pytest.raises(BadInput, match=r"^evaluate_file: orders must be a comma list of morf, lerf, got 'up'$"):
        contrastcat.evaluate_file(records, orders="up")
    with pytest.raises(BadInput, match=r"^sanity_file: ci must be a finite number of at least 0.5"):
        contrastcat.sanity_file(records, ci=0.2)


def test_every_option_has_help_and_a_check():
    for options in (EvaluateOptions, SanityOptions):
        for spec in options.specs():
            assert callable(spec.check)
            assert spec.help or spec.where == "call", spec.name
        names = [f.name for f in dataclasses.fields(options) if "check" in f.metadata]
        assert len(names) == len(set(names))


@pytest.mark.parametrize("call, command", [(contrastcat.evaluate_file, "evaluate"), (contrastcat.sanity_file, "sanity")])
def test_a_report_and_a_picture_are_never_one_file(call, command, tmp_path):
    """One check for both commands, read with the options: named as the caller spells them."""
    pytest.importorskip("matplotlib")
    records, picture = tmp_path / "attr.jsonl", tmp_path / "both.png"
    records.write_text("")
    with pytest.raises(BadInput, match=rf"^{command}_file: plot and output both name .*both.png: the picture would"):
        call(records, output=picture, plot=picture)
    assert_one_line_error(invoke(command, records, "--plot", picture, "-o", picture), "--plot and --output both name")
    assert not picture.exists()


def test_code_below_the_options_names_them_as_the_caller_does(toy_dir, toy_library, tmp_path):
    """A check that needs the model or the library (after the options are read) still names
    the option as the caller spells it: the flag from the shell, the keyword from Python; no
    message is rewritten on its way to the terminal."""
    inputs, out = toy_dir / "inputs.jsonl", tmp_path / "out.jsonl"
    common = (inputs, "--refs", toy_library.path, "--method", "contrastcat", "-o", out, "-q")
    assert_one_line_error(invoke("explain", *common, "--layers", "99"), "--layers 99: the model has")
    assert_one_line_error(invoke("explain", *common, "--refs-used", "5000"), "--refs-used 5000 reads 5000 references")
    with pytest.raises(BadInput, match=r"^layers 99: the model has \d+ layers$"):
        contrastcat.explain_file(inputs, out, library=toy_library.path, layers=99)
    with pytest.raises(BadInput, match=r"^refs_used 5000 reads 5000 references"):
        contrastcat.explain_file(inputs, out, library=toy_library.path, refs_used=5000)
    assert not out.exists()


def test_a_kept_checkpoint_is_told_of_in_the_callers_terms(toy_dir, toy_library, tmp_path, monkeypatch):
    """The note of a checkpoint kept after an interrupt or a failure names --resume from the
    shell and resume from Python: explain passes its spelling to the resumable writer."""
    from pathlib import Path

    from contrastcat.output.checkpoint import kept_note
    from contrastcat.usecases import explain_file as use_case

    heard = []
    monkeypatch.setattr(use_case, "write_resumable", lambda output, run, *rest, **more: heard.append(run.named))
    common = (toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat", "--resume", "-q")
    assert invoke("explain", *common, "-o", tmp_path / "a.jsonl").exit_code == 0
    contrastcat.explain_file(toy_dir / "inputs.jsonl", tmp_path / "b.jsonl", library=toy_library.path,
                             method="attcat", resume=True)
    notes = [kept_note(Path("out.jsonl.partial"), 3, named) for named in heard]
    assert notes == [
        "3 record(s) kept in out.jsonl.partial: run the same command with --resume to continue",
        "3 record(s) kept in out.jsonl.partial: run the same command with resume to continue",
    ]
