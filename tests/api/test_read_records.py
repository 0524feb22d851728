"""contrastcat.read_records: a file of records, or JSONL lines in memory, read back as explain returns them."""

from __future__ import annotations

import io
import json

import pytest

import contrastcat
from contrastcat.records.record import Records, write_records
from tests.helpers import assert_bad_input
from tests.helpers import word_piece_record as make_record


@pytest.fixture
def written(tmp_path):
    records = [make_record(), make_record(id=7, method="attcat", scores=[0.0, 1.0, 0.5, 0.25, 0.0, 0.0])]
    path = tmp_path / "attr.jsonl"
    write_records(str(path), records)
    return path, records


def test_a_file_reads_back_as_explain_returns_records(written):
    path, records = written
    for given in (path, str(path)):
        found = contrastcat.read_records(given)
        assert isinstance(found, Records) and found == records
        assert "dull" in found._repr_html_() and "dull" in found[0]._repr_html_()  # the notebook's view


def test_lines_in_memory_read_as_the_file_does(written):
    path, records = written
    text = path.read_text(encoding="utf-8")
    assert contrastcat.read_records(text.splitlines()) == records
    assert contrastcat.read_records(text.splitlines(keepends=True)) == records
    with open(path, encoding="utf-8") as stream:
        assert contrastcat.read_records(stream) == records
    with open(path, "rb") as stream:
        assert contrastcat.read_records(stream) == records
    assert contrastcat.read_records(iter(["", *text.splitlines(), "  "])) == records  # blank lines are skipped


def test_standard_input(written, monkeypatch):
    path, records = written
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes()), encoding="utf-8"))
    assert contrastcat.read_records("-") == records


def test_another_tools_minimal_lines_get_offsets():
    line = {"text": "a great movie", "tokens": ["[CLS]", "a", "great", "movie", "[SEP]"],
            "scores": [0, 0.1, 0.9, 0.2, 0], "target": 1, "method": "captum-ig"}
    (found,) = contrastcat.read_records([json.dumps(line)])
    assert found.offsets == [[0, 0], [0, 1], [2, 7], [8, 13], [0, 0]]
    assert found.special == [True, False, False, False, True] and found.method == "captum-ig"


def test_bad_lines_and_arguments_are_one_line_errors(written, tmp_path):
    path, _ = written
    good = path.read_text(encoding="utf-8").splitlines()[0]
    assert_bad_input(lambda: contrastcat.read_records([good, '{"text": "x"}']), "<lines>:2")
    assert_bad_input(lambda: contrastcat.read_records([good, "not json"]), "<lines>:2")
    assert_bad_input(lambda: contrastcat.read_records([good, "[1, 2]"]), "<lines>:2", "JSON object")
    assert_bad_input(lambda: contrastcat.read_records([]), "<lines>", "no attribution records")
    assert_bad_input(lambda: contrastcat.read_records([good + "\n" + good]), "<lines>:1", "line break")
    assert_bad_input(lambda: contrastcat.read_records([good, 3]), "item 1", "not a line of text")
    assert_bad_input(lambda: contrastcat.read_records([b"\xff"]), "<lines>:1", "UTF-8")
    assert_bad_input(lambda: contrastcat.read_records(good), "read as a path", "splitlines")
    assert_bad_input(lambda: contrastcat.read_records(42), "path or JSONL lines", "42")
    assert_bad_input(lambda: contrastcat.read_records({"text": "x"}), "path or JSONL lines")
    assert_bad_input(lambda: contrastcat.read_records(""), "file name")
    assert_bad_input(lambda: contrastcat.read_records(tmp_path / "missing.jsonl"), "missing.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good + "\n" + good.replace('"scores": [', '"scores": [2.5, '), encoding="utf-8")
    assert_bad_input(lambda: contrastcat.read_records(broken), f"{broken}:2")


def test_read_records_is_public():
    assert "read_records" in contrastcat.__all__ and "read_records" in dir(contrastcat)


def test_saved_records_of_another_tool_read_back_and_a_bad_edit_is_not_saved(tmp_path):
    line = '{"text": "a b", "tokens": ["a", "b"], "scores": [1, 2], "target": 0}'
    records = contrastcat.read_records([line])
    assert records[0].token_ids == []  # made elsewhere: no ids
    records.save(tmp_path / "p.jsonl")
    assert contrastcat.read_records(tmp_path / "p.jsonl") == records
    records[0].scores = [float("nan"), 1.0]
    assert_bad_input(lambda: records.save(tmp_path / "q.jsonl"), "save: item 0", "finite")
    records[0].scores = [1.0]
    assert_bad_input(lambda: records.save(tmp_path / "q.jsonl"), "save: item 0", "same length")
    assert not (tmp_path / "q.jsonl").exists()
