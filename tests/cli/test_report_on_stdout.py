"""`-o -` puts exactly one JSON document on stdout (the tables go to stderr, or nowhere with
--quiet; --json or --markdown beside it is refused), and Ctrl-C after the report was written
says so. Before, evaluate/sanity printed the report and then the tables on stdout, and an
interrupt while the picture was drawn said "no output was written" over a written report."""

from __future__ import annotations

import json

import pytest

from ..helpers import assert_one_line_error, invoke


@pytest.fixture(scope="module")
def records(toy_dir, toy_library, tmp_path_factory):
    out = tmp_path_factory.mktemp("stdout") / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat,attcat",
                    "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("command", [["evaluate", "--bootstrap", "0"], ["sanity", "--bootstrap", "0"]])
def test_dash_o_dash_is_one_json_document(records, toy_library, command):
    name, *rest = command
    loud = invoke(name, records, "--refs", toy_library.path, *rest, "-o", "-")
    assert loud.exit_code == 0, loud.output
    document = json.loads(loud.stdout)  # the whole of stdout: one document
    assert isinstance(document, dict) and document
    assert "contrastcat" in loud.stderr  # the tables, on stderr
    quiet = invoke(name, records, "--refs", toy_library.path, *rest, "-o", "-", "-q")
    assert quiet.exit_code == 0 and json.loads(quiet.stdout) == document and quiet.stderr == ""


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_a_second_thing_on_stdout_is_refused(records, toy_library, flag):
    result = invoke("evaluate", records, "--refs", toy_library.path, "-o", "-", flag)
    assert_one_line_error(result, f"-o - writes the JSON report on stdout and {flag} prints there too")
    if flag == "--json":
        assert_one_line_error(invoke("sanity", records, "--refs", toy_library.path, "-o", "-", flag),
                              "-o - writes the JSON report on stdout and --json prints there too")


def test_ctrl_c_while_the_picture_is_drawn_says_the_report_was_written(records, toy_library, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from contrastcat.views import plots

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "plot_curves", interrupted)
    report, picture = tmp_path / "report.json", tmp_path / "curves.png"
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", report,
                    "--plot", picture, "-q")
    assert result.exit_code == 130
    assert result.stderr == (f"error: interrupted; the report ({report}) was written, "
                             f"the picture ({picture}) was not\n")
    assert json.loads(report.read_text()) and not picture.exists()


def test_dev_stdout_is_standard_output_too(records, toy_library):
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", "/dev/stdout")
    assert result.exit_code == 0, result.output
    assert "contrastcat" in result.stderr and "wrote report to standard output" in result.stderr
    assert isinstance(json.loads(result.stdout), dict)  # the whole of stdout: one document, no table


def test_ctrl_c_with_the_output_on_stdout_does_not_say_nothing_was_written(records, toy_library, monkeypatch):
    from contrastcat.usecases import evaluate_file

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate_file, "evaluate_records", interrupted)
    result = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", "-")
    assert result.exit_code == 130
    assert result.stderr == "error: interrupted; what reached standard output is incomplete\n"
    file_run = invoke("evaluate", records, "--refs", toy_library.path, "--bootstrap", "0", "-o", "report.json")
    assert file_run.stderr == "error: interrupted; no output was written\n"
