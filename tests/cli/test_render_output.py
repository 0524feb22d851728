"""render -o FILE and --quiet, as the other commands have them: the file holds what stdout would show."""

from __future__ import annotations

import pytest

import contrastcat
from contrastcat.records.record import write_records
from tests.helpers import assert_one_line_error, invoke
from tests.helpers import word_piece_record as make_record


@pytest.fixture
def attr(tmp_path):
    path = tmp_path / "attr.jsonl"
    write_records(str(path), [
        make_record(), make_record(id="b", method="attcat", scores=[0.0, 1.0, 0.5, 0.25, 0.0, 0.0]), make_record(id=3),
    ])
    return path


@pytest.mark.parametrize("options", [(), ("--words",), ("--top", "2"), ("--compare", "contrastcat,attcat"), ("--limit", "1")])
def test_output_file_holds_what_stdout_shows(attr, tmp_path, options):
    shown = invoke("render", attr, *options, "--color", "never")
    assert shown.exit_code == 0, shown.output
    out = tmp_path / "view.txt"
    written = invoke("render", attr, *options, "-o", out)
    assert written.exit_code == 0, written.output
    assert out.read_text(encoding="utf-8") == shown.stdout and written.stdout == ""
    assert written.stderr == f"wrote {out}\n"
    assert invoke("render", attr, *options, "--output", "-").stdout == shown.stdout


def test_the_plain_text_by_hand(attr, tmp_path):
    out = tmp_path / "view.txt"
    assert invoke("render", attr, "--limit", "2", "-o", out).exit_code == 0
    # min-max over the shown tokens (0.2, 0.9, 0.1, 1.0 -> 0.11, 0.89, 0.00, 1.00), a blank line between records
    assert out.read_text(encoding="utf-8") == (
        "a  contrastcat → negative (p=0.970)\n[un 0.11][bel 0.89][ievably 0.00] [dull 1.00]\n\n"
        "b  attcat → negative (p=0.970)\n[un 1.00][bel 0.50][ievably 0.25] [dull 0.00]\n"
    )


def test_colour_in_a_file_only_when_asked(attr, tmp_path):
    out = tmp_path / "view.txt"
    assert invoke("render", attr, "-o", out).exit_code == 0
    assert "\x1b[" not in out.read_text(encoding="utf-8")
    assert invoke("render", attr, "-o", out, "--color", "always").exit_code == 0
    assert "\x1b[" in out.read_text(encoding="utf-8")


def test_quiet_says_nothing(attr, tmp_path):
    for options in (("-o", tmp_path / "v.txt"), ("--html", tmp_path / "v.html"), ("-q", "--html", tmp_path / "w.html")):
        result = invoke("render", attr, "--quiet", *options)
        assert result.exit_code == 0 and result.stderr == "" and result.stdout == "", result.output
    assert (tmp_path / "v.txt").read_text(encoding="utf-8").startswith("a  contrastcat")
    assert "<html" in (tmp_path / "v.html").read_text(encoding="utf-8")


def test_a_bad_record_or_both_outputs_leave_the_file_as_it_was(attr, tmp_path):
    out = tmp_path / "view.txt"
    out.write_text("kept\n", encoding="utf-8")
    result = invoke("render", attr, "-o", out, "--html", tmp_path / "p.html")
    assert_one_line_error(result, "--html", "--output", "not both")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(attr.read_text(encoding="utf-8") + '{"text": "x"}\n', encoding="utf-8")
    assert_one_line_error(invoke("render", bad, "-o", out), f"{bad}:4")
    assert out.read_text(encoding="utf-8") == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attr.jsonl", "bad.jsonl", "view.txt"]  # no page, no temp file


def test_the_api_writes_the_same(attr, tmp_path):
    out = tmp_path / "view.txt"
    run = contrastcat.render_file(attr, output=out, words=True)
    assert run.wrote == str(out) and list(run.blocks) == []
    assert out.read_text(encoding="utf-8") == invoke("render", attr, "--words").stdout
