"""``evaluate --limit N``: the first N records only, as if the file held no more (a quick look at
a large file), from a file or from standard input (read twice: checked whole, then evaluated)."""

from __future__ import annotations

import json

import contrastcat

from ..helpers import assert_one_line_error, invoke


def _report(result) -> dict:
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    document.pop("input")
    return document


def test_the_first_n_records_are_evaluated_as_a_file_of_them_would_be(toy_dir, toy_library, tmp_path):
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(lines[:5]))
    options = ("--bootstrap", "0", "--min-tokens", "3", "--json", "-q")
    expected = _report(invoke("evaluate", first, *options))
    assert expected["records"] == 5
    assert _report(invoke("evaluate", records, "--limit", "5", *options)) == expected
    assert _report(invoke("evaluate", "-", "--limit", "5", *options, stdin=records.read_text())) == expected
    assert _report(invoke("evaluate", records, "--limit", str(len(lines) + 9), *options))["records"] == len(lines)
    assert_one_line_error(invoke("evaluate", records, "--limit", "0"), "--limit must be a whole number of at least 1")
    assert_one_line_error(invoke("evaluate", records, "--limit", str(2**63)), "--limit must be a whole number of at least 1 and at most")
    run = contrastcat.evaluate_file(str(records), limit=5, bootstrap=0, min_tokens=3)
    run.document.pop("input")
    assert run.document == expected
