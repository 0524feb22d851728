"""Lines are read up to a limit ($CONTRASTCAT_MAX_LINE_MIB): memory is bounded on any input.

A record keeps its text whole, so the longest line sets the memory a run needs; a line past
the limit is refused in one line naming file and line (skipped under --on-error skip, where the
input is JSON Lines), and is read past in small pieces, never held. Covered: the boundary
byte for byte, a BOM, the last line without its end, standard input read twice, the memory an
overlong line costs (tracemalloc), CSV fields longer than the csv module's own limit, record
files, part files and baseline reports, and the variable's own checks.
"""

from __future__ import annotations

import csv
import io
import json
import tracemalloc

import pytest

from contrastcat.errors import BadInput
from contrastcat.io import jsonl
from contrastcat.io.lines import LINE_LIMIT_ENV, LineSource, Overlong, line_limit, read_line
from contrastcat.records.inputs import InputFields, InputFile

from ..helpers import assert_one_line_error, invoke

MIB = 1 << 20


def test_the_boundary_byte_for_byte():
    # A line of `limit` bytes (its end, LF or CRLF, not counted) is read; one more byte is
    # refused, with or without a line end, and the line after an overlong one is read whole and
    # in its place. A CR before the CRLF is content, and counts.
    stream = io.BytesIO(b"abcd\n" + b"abcde\n" + b"abcd\r\n" + b"abcde\r\n" + b"abcd\r\r\n" + b"ok\n" + b"abcdefgh")
    got = []
    while raw := read_line(stream, 4):
        got.append(raw)
    assert got == [b"abcd\n", Overlong(4), b"abcd\r\n", Overlong(4), Overlong(4), b"ok\n", Overlong(4)]


@pytest.mark.parametrize("end", ["\n", "\r\n", ""])
@pytest.mark.parametrize("name", ["in.jsonl", "in.csv"])
def test_a_line_of_exactly_the_limit_is_read_whatever_its_end(tmp_path, small_limit, name, end):
    # The limit is a line's bytes without its end: a CRLF file's line was refused where the same
    # line ending in LF was read, and a CSV row counted its line end (a row of exactly 1 MiB was
    # "longer than 1 MiB"). One byte more is refused, whatever the end.
    path = tmp_path / name
    header, line = ("text\n", "a" * MIB) if name == "in.csv" else ("", '{"text": "' + "a" * (MIB - 12) + '"}')
    path.write_bytes((header + line + end).encode())
    assert [len(row.text) for row in InputFile(str(path)).rows()] == [MIB if name == "in.csv" else MIB - 12]
    path.write_bytes((header + "a" + line + end).encode())
    with pytest.raises(BadInput, match=rf"{name}:{1 + bool(header)}: a line longer than 1 MiB"):
        list(InputFile(str(path)).rows())


def test_a_csv_row_is_counted_in_bytes(tmp_path, small_limit):
    # The limit is in bytes (MiB), as a JSON Lines line's is: a CSV row counted in characters
    # took four times the limit in emoji (4 MB across 4 lines of a quoted field) that the same
    # text on one JSON Lines line was refused for.
    emoji = "\N{GRINNING FACE}" * 100_000  # 400,000 bytes, 100,000 characters
    path = tmp_path / "in.csv"
    path.write_text(f'text,label\n"{emoji}\n{emoji}\n{emoji}",1\nafter,0\n', encoding="utf-8")
    with pytest.raises(BadInput, match=r"in.csv:2: a row longer than 1 MiB; "):
        list(InputFile(str(path)).rows())
    jsonl_path = tmp_path / "in.jsonl"
    jsonl_path.write_text(json.dumps({"text": f"{emoji}\n{emoji}\n{emoji}"}, ensure_ascii=False) + "\n", "utf-8")
    with pytest.raises(BadInput, match=r"in.jsonl:1: a line longer than 1 MiB; "):
        list(InputFile(str(jsonl_path)).rows())
    # Within the limit in bytes (two lines: 800,000 bytes and more), the row is read whole.
    path.write_text(f'text,label\n"{emoji}\n{emoji}",1\nafter,0\n', encoding="utf-8")
    assert [row.text for row in InputFile(str(path)).rows()] == [f"{emoji}\n{emoji}", "after"]


def test_a_csv_row_at_the_limit_counts_the_line_ends_inside_it(tmp_path, small_limit):
    # The ends of the lines a quoted field spans are its text, and count; only the row's final
    # end does not.
    for end in ("\n", "\r\n"):
        first = "a" * (MIB // 2)
        row = f'"{first}{end}' + "b" * (MIB - len(first) - len(end) - 4) + '",1'
        assert len(row.encode()) == MIB
        path = tmp_path / "in.csv"
        path.write_text(f"text,label{end}{row}{end}", newline="")
        assert [len(r.text) for r in InputFile(str(path)).rows()] == [MIB - 4], repr(end)
        path.write_text(f"text,label{end}{row.replace('b', 'bb', 1)}{end}", newline="")
        with pytest.raises(BadInput, match=r"in.csv:2: a row longer than 1 MiB; "):
            list(InputFile(str(path)).rows())


def test_a_bom_is_not_counted_against_the_first_line():
    stream = io.BytesIO(b"\xef\xbb\xbfabcd\nabcd\n")
    assert read_line(stream, 4, b"\xef\xbb\xbf") == b"abcd\n"
    assert read_line(stream, 4) == b"abcd\n"


def test_an_overlong_line_is_never_held(tmp_path):
    # 40 MiB on one line, limit 1 MiB: reading past it must cost the limit, not the line.
    path = tmp_path / "in.jsonl"
    with path.open("wb") as stream:
        stream.write(b'{"text": "')
        for _ in range(40):
            stream.write(b"x" * MIB)
        stream.write(b'"}\n{"text": "short"}\n')
    tracemalloc.start()
    try:
        lines = list(LineSource(str(path), limit=MIB).lines())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == [(1, Overlong(MIB)), (2, '{"text": "short"}\n')]
    assert peak < 4 * MIB, f"peak {peak / MIB:.1f} MiB reading past a 40 MiB line"


@pytest.fixture()
def small_limit(monkeypatch):
    monkeypatch.setenv(LINE_LIMIT_ENV, "1")


def long_text_file(tmp_path, name="in.jsonl"):
    path = tmp_path / name
    rows = [{"id": 1, "text": "good film"}, {"id": 2, "text": "word " * 300_000}, {"id": 3, "text": "bad film"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_an_overlong_input_line_is_refused_or_skipped(tmp_path, small_limit):
    source = InputFile(str(long_text_file(tmp_path)))
    with pytest.raises(BadInput, match=rf"in.jsonl:2: a line longer than 1 MiB; .*\${LINE_LIMIT_ENV}, now 1 MiB"):
        source.check()
    skipped: list[str] = []
    rows = list(InputFile(str(long_text_file(tmp_path))).rows(skipped))
    assert [(row.line, row.text) for row in rows] == [(1, "good film"), (3, "bad film")]
    assert len(skipped) == 1 and skipped[0].startswith(f"{tmp_path / 'in.jsonl'}:2: a line longer than 1 MiB")


def test_standard_input_read_twice_refuses_the_same_line(tmp_path, refs, small_limit):
    source = long_text_file(tmp_path)
    result = invoke("explain", "-", "--refs", refs, "-o", tmp_path / "out.jsonl", "-q", "--method", "random",
                    stdin=source.read_text())
    assert_one_line_error(result, "<stdin>:2: a line longer than 1 MiB")
    assert not (tmp_path / "out.jsonl").exists()
    result = invoke("explain", "-", "--refs", refs, "-o", tmp_path / "out.jsonl", "-q", "--method", "random",
                    "--on-error", "skip", stdin=source.read_text())
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [1, 3]


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


def test_csv_fields_are_as_long_as_a_line_may_be(tmp_path):
    # The csv module refuses fields over 131,072 characters by default (a process-wide setting):
    # a CSV text as long as a JSON Lines one is read, and the setting is left as it was.
    before = csv.field_size_limit()
    path = tmp_path / "in.csv"
    path.write_text("id,text\n1,good film\n2," + "y" * 300_000 + "\n")
    rows = list(InputFile(str(path)).rows())
    assert [len(row.text) for row in rows] == [9, 300_000]
    assert csv.field_size_limit() == before


def test_an_overlong_csv_line_stops_even_a_skipping_run(tmp_path, small_limit):
    # Where a CSV row ends cannot be known without reading the line: never skipped.
    path = tmp_path / "in.csv"
    path.write_text("id,text\n1,good film\n2," + "y" * (MIB + 1) + "\n3,bad film\n")
    with pytest.raises(BadInput, match=r"in.csv:3: a line longer than 1 MiB"):
        list(InputFile(str(path)).rows([]))


def test_record_lines_may_be_eight_times_longer(tmp_path, records_line, small_limit):
    fits, over = tmp_path / "fits.jsonl", tmp_path / "over.jsonl"
    record = json.loads(records_line)
    record["text"] = record["text"] + " " * (7 * MIB)  # offsets still inside the text
    fits.write_text(json.dumps(record) + "\n")
    record["text"] += " " * (2 * MIB)
    over.write_text(json.dumps(record) + "\n")
    assert invoke("render", fits, "--color", "never").exit_code == 0
    result = invoke("render", over, "--color", "never")
    assert_one_line_error(result, f"over.jsonl:1: a line longer than 8 MiB (8 × ${LINE_LIMIT_ENV})")


@pytest.fixture()
def records_line(tmp_path, refs, toy_dir):
    out = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "--method", "random", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return out.read_text().splitlines()[0]


def test_part_files_and_reports_are_bounded_too(tmp_path, records_line, small_limit):
    part = tmp_path / "part.jsonl"
    part.write_bytes(b"x" * (8 * MIB + 1) + b"\n")
    assert_one_line_error(invoke("merge", part, "-o", tmp_path / "all.jsonl"), "part.jsonl:1: a line longer than 8 MiB")
    report = tmp_path / "report.json"
    report.write_bytes(b" " * (8 * MIB + 1))
    (tmp_path / "attr.jsonl").write_text(records_line + "\n")
    result = invoke("evaluate", tmp_path / "attr.jsonl", "--baseline", report)
    assert_one_line_error(result, "report.json: not a JSON report (larger than 8 MiB")


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "lots", "1" * 7, "٣"])
def test_the_variable_is_checked(monkeypatch, value):
    monkeypatch.setenv(LINE_LIMIT_ENV, value)
    with pytest.raises(BadInput, match=rf"\${LINE_LIMIT_ENV} must be a whole number of MiB .* got"):
        line_limit()


def test_the_default_and_a_raised_limit(monkeypatch):
    monkeypatch.delenv(LINE_LIMIT_ENV, raising=False)
    assert line_limit() == 16 * MIB and line_limit(8) == 128 * MIB
    monkeypatch.setenv(LINE_LIMIT_ENV, "64")
    assert line_limit() == 64 * MIB


@pytest.mark.parametrize(
    "line, blank",
    [(" \t\n", True), ("\r\n", True), (" \r", True), ("", True), ("\r\r\n", False), ("\u00a0\n", False), ("{}\r\n", False)],
)
def test_blank_lines_are_what_they_were(line, blank):
    # Line ends are no longer cut off before parsing (a copy of every line); what counts as
    # blank is unchanged: spaces and tabs before one line end.
    assert (list(jsonl.lines([(1, line)])) == []) == blank
    if not blank and line.startswith("{"):
        assert jsonl.parse(line) == {}


def test_a_csv_field_over_the_limit_across_lines_stops_even_a_skipping_run(tmp_path, small_limit):
    # Each line is short, the quoted field they make is not: the csv reader stops inside it, and
    # skipping would read the rest of the field as rows of their own (false inputs) and lose the
    # real row after it.
    path = tmp_path / "in.csv"
    field = "\n".join("y" * 1000 + ",1" for _ in range(1100))
    path.write_text(f'text,label\n"{field}",0\nafter,1\n')
    with pytest.raises(BadInput, match=rf"in.csv:2: a row longer than 1 MiB; .*\${LINE_LIMIT_ENV}"):
        list(InputFile(str(path), InputFields(label="label")).rows([]))


def test_a_baseline_is_read_in_pieces(tmp_path, records_line, small_limit):
    # /dev/zero never ends: read up to the limit and refused, not read(limit) at once or forever.
    (tmp_path / "attr.jsonl").write_text(records_line + "\n")
    result = invoke("evaluate", tmp_path / "attr.jsonl", "--baseline", "/dev/zero")
    assert_one_line_error(result, "/dev/zero: not a JSON report (larger than 8 MiB")


def test_a_csv_row_of_many_short_lines_is_bounded_too(tmp_path, small_limit):
    # Quoted fields of one short line each, a million of them in one row: the csv module holds
    # the row whole before any check could count its fields (749 MB for a 20 MB file). Bounded
    # by the limit now: about 46 bytes of Python objects per character of the row, at most.
    path = tmp_path / "in.csv"
    with path.open("w") as stream:
        stream.write("text,label\n")
        stream.write(",".join('"a\nb"' for _ in range(1_000_000)) + "\n")
    tracemalloc.start()
    try:
        with pytest.raises(BadInput, match=r"in.csv:2: a row longer than 1 MiB; "):
            list(InputFile(str(path), InputFields(label="label")).rows([]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80 * MIB, f"peak {peak / MIB:.0f} MiB"
    many = tmp_path / "many.csv"  # rows of many lines each, every row within the limit: all read
    many.write_text("text,label\n" + "".join('"' + "line\n" * 5 + f'end",{i % 3}\n' for i in range(2000)))
    assert len(list(InputFile(str(many), InputFields(label="label")).rows())) == 2000


def _peak(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _refused(raw: str) -> None:
    with pytest.raises(jsonl.NotStrictJSON, match="objects, arrays and strings or [0-9,]+ values: more than any record"):
        jsonl.parse(raw)


@pytest.mark.parametrize("shape", ["{}", "[]", '"ab"', '"\\u0100"'])
def test_a_line_of_many_small_values_is_refused_in_bounded_memory(shape, monkeypatch):
    """Under the line limit, JSON made of ``{},{},...`` or ``["ab","ab",...]`` cost 12 to 24
    times its size once read (about 70 bytes a value; 3.5 GB for 128 MiB): refused, having made
    no more values than the bound (here lowered, so that the test stays small and fast)."""
    monkeypatch.setattr(jsonl, "MAX_VALUES", 10_000)
    crafted = '{"id": 1, "x": [' + ",".join([shape] * 400_000) + "]}"
    allowed = 10_000 + len(crafted) // 64
    assert _peak(lambda: _refused(crafted)) < allowed * 200  # read whole: 400,000 values, 25 to 35 MB


@pytest.mark.parametrize("shape", ["keys", "floats", "repeated key"])
def test_keys_and_numbers_are_counted_too(shape, monkeypatch):
    """An object of many keys (read by the counting scanner, which once missed them: a key is
    read apart from the other strings) and an array of many numbers (which no bracket or quote
    counts: they took the fast path, and 8 times their size) are refused having made no more
    values than the bound. A key given 400,000 times is refused too, not first read whole."""
    monkeypatch.setattr(jsonl, "MAX_VALUES", 10_000)
    if shape == "keys":
        crafted = "{" + ",".join(f'"k{i}":0' for i in range(400_000)) + "}"
    elif shape == "floats":
        crafted = "[" + ",".join(["1e1"] * 400_000) + "]"
    else:
        crafted = "{" + ",".join(['"k":0'] * 400_000) + "}"
    allowed = 10_000 + len(crafted) // 8
    assert _peak(lambda: _refused(crafted)) < allowed * 100


def test_numbers_within_the_bound_are_read_on_either_path(monkeypatch):
    """A record's scores and ids (a number per 5 to 21 characters) stay on the fast path, and the
    counting path reads the same numbers."""
    monkeypatch.setattr(jsonl, "MAX_VALUES", 10_000)
    raw = json.dumps({"scores": [0.12345678901234568] * 50_000, "ids": [101] * 50_000})
    assert jsonl._surely_within(raw, jsonl._allowed(raw))
    fast = jsonl.parse(raw)
    monkeypatch.setattr(jsonl, "_surely_within", lambda raw, allowed: False)
    assert jsonl.parse(raw) == fast


def test_brackets_and_quotes_inside_a_text_are_text(monkeypatch):
    """A text full of brackets and escaped quotes (a JSON document kept as text) is read whole and
    as it is, fast (by the counting scanner: the bound is lowered here); a damaged line of them is
    refused fast."""
    import time

    monkeypatch.setattr(jsonl, "MAX_VALUES", 10_000)
    text = '[{\"' * 400_000  # 1.2 million brackets and 400,000 escaped quotes
    raw = json.dumps({"id": 1, "text": text, "tokens": ["a"]})
    started = time.perf_counter()
    assert jsonl.parse(raw)["text"] == text
    assert time.perf_counter() - started < 10
    damaged = "{" * 1_100_000 + '"' + '\\"' * 150_000  # once took hours (a regex scanned it quadratically)
    started = time.perf_counter()
    with pytest.raises(jsonl.NotStrictJSON):
        jsonl.parse(damaged)
    assert time.perf_counter() - started < 10


def test_the_counting_reader_is_as_strict_as_the_fast_one(monkeypatch):
    """The same values and the same refusals on either path, a BOM at the start included (the
    counting path is forced here for texts the fast one would read)."""
    texts = ['\ufeff{"a": 1}', '{"a": NaN}', '{"a": 1, "a": 2}', '{"a": 1e400}', '[1, 2] x', '{"a": "\\ud800"}',
             '{"a": [1, {"b": "c"}], "d": -0.0, "e": "\\u2028 [{\\""}', "  [1]  ", '{"a": 1' + "0" * 5000 + "}"]

    def outcomes():
        found = []
        for text in texts:
            try:
                found.append(("value", repr(jsonl.parse(text))))
            except jsonl.NotStrictJSON as error:
                found.append(("refused", str(error)))
        return found

    fast = outcomes()
    monkeypatch.setattr(jsonl, "_surely_within", lambda raw, allowed: False)
    assert outcomes() == fast
    assert fast[0] == ("refused", "malformed JSON (Unexpected UTF-8 BOM (decode using utf-8-sig), column 1)")
    assert [kind for kind, _ in fast] == ["refused"] * 6 + ["value", "value", "refused"]


@pytest.mark.parametrize("counting", [False, True])
def test_both_readers_read_one_language(counting, monkeypatch):
    """Numbers of ASCII digits only (Python's own scanner, which the counting path builds on,
    took ``0.٥`` as 0.5 and ``1٣٠`` as 130 where the fast path refused them), and one depth limit
    (the counting path's recursion stopped at about 330 levels, the fast path's at about 1,000)."""
    if counting:
        monkeypatch.setattr(jsonl, "_surely_within", lambda raw, allowed: False)
    for text in ('{"score": 0.\u0665}', '{"n": 1\u0663\u0660}', '[1e\u0665]'):
        with pytest.raises(jsonl.NotStrictJSON, match="malformed JSON"):
            jsonl.parse(text.encode().decode("unicode_escape"))
    deep = jsonl.MAX_DEPTH
    assert jsonl.parse("[" * deep + "]" * deep) is not None
    for depth in (deep + 1, 400, 900):
        with pytest.raises(jsonl.NotStrictJSON, match=f"nested too deeply to read: more than {deep} levels"):
            jsonl.parse("[" * depth + "]" * depth)


def test_a_baseline_of_empty_objects_is_refused_as_not_a_report(tmp_path, monkeypatch):
    from contrastcat.evaluation.report_schema import read_baseline

    monkeypatch.setattr(jsonl, "MAX_VALUES", 10_000)
    path = tmp_path / "baseline.json"
    path.write_text('{"schema": "contrastcat/evaluate-report", "x": [' + ",".join(["{}"] * 300_000) + "]}")
    with pytest.raises(BadInput, match="not a JSON report .more than 24,063 objects, arrays and strings"):
        read_baseline(str(path))


def test_standard_input_closed_at_start_is_said_closed_though_its_number_was_reused(monkeypatch):
    """Closed when the process started (``sys.stdin`` is None), standard input's descriptor is
    the next file opened: ``/dev/stdin`` then opened that file (merge named one part twice)."""
    import sys

    from contrastcat.errors import BadInput
    from contrastcat.io.lines import open_input

    monkeypatch.setattr(sys, "stdin", None)
    for name in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        with pytest.raises(BadInput, match=f"^{name}: standard input is closed"):
            open_input(name)
