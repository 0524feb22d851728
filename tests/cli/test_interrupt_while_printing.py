"""Ctrl-C while the tables or the summary print, after the output was written whole: the message
says what was written (before, it said "no output was written" beside a new or replaced file)."""

from __future__ import annotations

import importlib.util
import json
import sys

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
    result = invoke("evaluate", records, "--refs", toy_library.path, "-q")  # no file: the tables cut short
    assert_one_line_error(result, "interrupted; the tables on standard output are incomplete", code=130)


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


# Every command that writes an output file (or a whole document on stdout) and then prints: Ctrl-C
# in what it prints after names every output written, the picture and a record file included.


def test_evaluate_and_sanity_name_the_picture(records, toy_library, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import contrastcat_cli.evaluate as evaluate_command
    import contrastcat_cli.sanity as sanity_command

    monkeypatch.setattr(evaluate_command, "_print", _interrupt)
    picture = tmp_path / "curves.png"
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "--plot", picture, "-q")
    assert_one_line_error(result, f"interrupted while printing; the picture was written whole to {picture}", code=130)
    assert picture.stat().st_size > 0
    report = tmp_path / "report.json"
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", report,
                    "--plot", picture, "-q")
    assert_one_line_error(
        result, f"the report was written whole to {report} and the picture to {picture}", code=130
    )
    monkeypatch.setattr(sanity_command, "_print", _interrupt)
    picture = tmp_path / "rho.png"
    result = invoke("sanity", records, "--refs", toy_library.path, "--bootstrap", "0", "--plot", picture, "-q")
    assert_one_line_error(result, f"interrupted while printing; the picture was written whole to {picture}", code=130)
    assert picture.stat().st_size > 0


def test_evaluate_says_so_while_the_gates_print(records, toy_library, tmp_path, monkeypatch):
    import contrastcat_cli.evaluate as command

    monkeypatch.setattr(command, "gates", _interrupt)
    report = tmp_path / "report.json"
    gate = ("--fail-under", "morf.aopc=0.99")
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", report, *gate, "-q")
    assert_one_line_error(result, f"interrupted while printing; the report was written whole to {report}", code=130)
    assert json.loads(report.read_text())["schema"] == "contrastcat/evaluate-report"
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", "-", *gate, "-q")
    assert_one_line_error(result, "the report was written whole to standard output", code=130)
    json.loads(result.stdout)  # the whole document, not "incomplete"


def test_explain_says_the_records_were_written(toy_dir, toy_library, tmp_path, monkeypatch):
    import contrastcat_cli.explain as command

    monkeypatch.setattr(command, "_summary", _interrupt)
    inputs = toy_dir / "inputs.jsonl"
    out = tmp_path / "attr.jsonl"
    result = invoke("explain", inputs, "--refs", toy_library.path, "--method", "random", "-o", out, "-q")
    assert_one_line_error(result, f"interrupted while printing; every record was written whole to {out}", code=130)
    assert len(out.read_text().splitlines()) == len(inputs.read_text().splitlines())
    result = invoke("explain", inputs, "--refs", toy_library.path, "--method", "random", "-o", "-", "-q")
    assert_one_line_error(result, "every record was written whole to standard output", code=130)
    assert len(result.stdout.splitlines()) == len(inputs.read_text().splitlines())
    part = tmp_path / "part0.jsonl"
    result = invoke("explain", inputs, "--refs", toy_library.path, "--method", "random", "--shard", "0/2",
                    "-o", part, "-q")
    assert_one_line_error(result, f"interrupted while printing; part 0/2 was written whole to {part}", code=130)


def test_merge_says_the_records_were_written(toy_dir, toy_library, tmp_path, monkeypatch):
    import contrastcat_cli.merge as command

    parts = []
    for index in (0, 1):
        parts.append(tmp_path / f"part{index}.jsonl")
        result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "random",
                        "--shard", f"{index}/2", "-o", parts[-1], "-q")
        assert result.exit_code == 0, result.output
    monkeypatch.setattr(command, "info", _interrupt)
    merged = tmp_path / "attr.jsonl"
    result = invoke("merge", *parts, "-o", merged)
    assert_one_line_error(result, f"interrupted while printing; every record was written whole to {merged}", code=130)
    assert len(merged.read_text().splitlines()) == len((toy_dir / "inputs.jsonl").read_text().splitlines())


def test_render_says_the_file_was_written(records, tmp_path, monkeypatch):
    import contrastcat_cli.render as command

    monkeypatch.setattr(command, "info", _interrupt)
    text = tmp_path / "marked.txt"
    result = invoke("render", records, "-o", text)
    assert_one_line_error(result, f"interrupted while printing; the text was written whole to {text}", code=130)
    assert text.stat().st_size > 0
    page = tmp_path / "attr.html"
    result = invoke("render", records, "--html", page)
    assert_one_line_error(result, f"interrupted while printing; the page was written whole to {page}", code=130)
    assert page.stat().st_size > 0


def test_the_wrote_notice_from_the_library_says_what_was_written(records, toy_library, tmp_path, monkeypatch):
    """evaluate's and sanity's "wrote …" notices are printed by the library, after the file is
    written: Ctrl-C there names it too (it said that no output was written)."""
    import contrastcat_cli.common as common

    real = common.info
    at = ["wrote"]  # the notice interrupted: the first "wrote …", or the one named here

    def interrupt_the_notice(message, quiet):
        if message.startswith(at[0]):
            raise KeyboardInterrupt
        real(message, quiet)

    monkeypatch.setattr(common, "info", interrupt_the_notice)
    report = tmp_path / "report.json"
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", report)
    assert_one_line_error(result, f"interrupted; the report ({report}) was written", code=130)
    assert json.loads(report.read_text())["schema"] == "contrastcat/evaluate-report"
    curves, at[0] = tmp_path / "curves.png", "wrote the curves"
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", report, "--plot", curves)
    assert result.exit_code == 130  # after the report's own "wrote" line
    assert result.stderr.splitlines()[-1] == (
        f"error: interrupted; the report ({report}) and the picture ({curves}) were written"
    )
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", "-", "--plot", curves)
    assert result.exit_code == 130 and result.stderr.splitlines()[-1] == (
        f"error: interrupted; the report (standard output) and the picture ({curves}) were written"
    )
    checked, picture, at[0] = tmp_path / "sanity.json", tmp_path / "sanity.png", "wrote"
    result = invoke("sanity", records, "--refs", toy_library.path, "-o", checked, "--plot", picture)
    assert_one_line_error(result, f"interrupted; the report ({checked}) was written", code=130)
    assert checked.stat().st_size > 0 and not picture.exists()


def test_a_document_cut_short_on_standard_output_is_said_to_be_incomplete(records, toy_library, tmp_path, monkeypatch):
    """``--json`` prints the report on standard output: Ctrl-C there leaves part of it, which is
    not "no output was written" (as it said); beside a picture written whole, both are named."""
    import contrastcat_cli.evaluate as evaluate_command
    import contrastcat_cli.render as render_command
    import contrastcat_cli.sanity as sanity_command

    monkeypatch.setattr(evaluate_command, "_print", _interrupt)
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "--json", "-q")
    assert_one_line_error(result, "interrupted; the JSON report on standard output is incomplete", code=130)
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "--markdown", "-q")
    assert_one_line_error(result, "interrupted; the Markdown table on standard output is incomplete", code=130)
    monkeypatch.setattr(sanity_command, "_print", _interrupt)
    result = invoke("sanity", records, "--refs", toy_library.path, "--bootstrap", "0", "--json", "-q")
    assert_one_line_error(result, "interrupted; the JSON report on standard output is incomplete", code=130)
    monkeypatch.setattr(render_command.api, "run_render", _interrupt)  # still reading: nothing printed
    assert_one_line_error(invoke("render", records), "interrupted; no output was written", code=130)

    def partly(*args, **kwargs):
        sys.stdout.write("the first ")
        raise KeyboardInterrupt

    monkeypatch.setattr(render_command.api, "run_render", partly)
    result = invoke("render", records)
    assert_one_line_error(result, "interrupted; the text on standard output is incomplete", code=130)
    result = invoke("render", records, "--html", "-")
    assert_one_line_error(result, "interrupted; the page on standard output is incomplete", code=130)
    result = invoke("render", records, "-o", tmp_path / "text.txt")  # a file: written whole or not at all
    assert_one_line_error(result, "interrupted; no output was written", code=130)
    if importlib.util.find_spec("matplotlib") is not None:
        picture = tmp_path / "curves.png"
        result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "--json", "--plot", picture, "-q")
        assert_one_line_error(
            result, f"the picture was written whole to {picture}; the JSON report on standard output is incomplete",
            code=130,
        )
