"""Ctrl-C while the tables or the summary print, after the output was written whole: the message
says what was written (before, it said "no output was written" beside a new or replaced file)."""

from __future__ import annotations

import json

import pytest

from ..helpers import assert_one_line_error, invoke


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.fixture(scope="module")
def records(toy_dir, toy_library, tmp_path_factory):
    out = tmp_path_factory.mktemp("records") / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "random", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return out


def test_evaluate_says_the_report_was_written(records, toy_library, tmp_path, monkeypatch):
    import contrastcat_cli.evaluate as command

    monkeypatch.setattr(command, "_print", _interrupt)
    report = tmp_path / "report.json"
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", report, "-q")
    assert_one_line_error(result, f"interrupted while printing; the report was written whole to {report}", code=130)
    assert json.loads(report.read_text())["schema"] == "contrastcat/evaluate-report"
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", "-", "-q")
    assert result.exit_code == 130 and "the report was written whole to standard output" in result.stderr
    json.loads(result.stdout)  # one whole document
    result = invoke("evaluate", records, "--refs", toy_library.path, "-q")  # no file: nothing was written
    assert_one_line_error(result, "interrupted; no output was written", code=130)


def test_sanity_and_build_refs_say_so_too(records, toy_dir, toy_library, tmp_path, monkeypatch):
    import contrastcat_cli.build_refs as build_command
    import contrastcat_cli.sanity as sanity_command

    monkeypatch.setattr(sanity_command, "_print", _interrupt)
    report = tmp_path / "sanity.json"
    result = invoke("sanity", records, "--refs", toy_library.path, "-o", report, "-q")
    assert_one_line_error(result, f"the report was written whole to {report}", code=130)
    assert report.stat().st_size > 0
    monkeypatch.setattr(build_command, "_summary", _interrupt)
    library = tmp_path / "refs.h5"
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", library, "-q")
    assert_one_line_error(result, f"interrupted while printing; the library was written whole to {library}", code=130)
    assert library.stat().st_size > 0
