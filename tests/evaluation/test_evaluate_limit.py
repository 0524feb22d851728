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
    # The report says the limit (a report of every record reads as before).
    assert "limit" not in expected
    assert _report(invoke("evaluate", records, "--limit", "5", *options)) == {**expected, "limit": 5}
    assert _report(invoke("evaluate", "-", "--limit", "5", *options, stdin=records.read_text())) == {**expected, "limit": 5}
    # A limit past the file's end read every record: the whole file's report (a full baseline gates it).
    past = _report(invoke("evaluate", records, "--limit", str(len(lines) + 9), *options))
    assert past["records"] == len(lines) and "limit" not in past
    assert_one_line_error(invoke("evaluate", records, "--limit", "0"), "--limit must be a whole number of at least 1")
    assert_one_line_error(invoke("evaluate", records, "--limit", str(2**63)), "--limit must be a whole number of at least 1 and at most")
    run = contrastcat.evaluate_file(str(records), limit=5, bootstrap=0, min_tokens=3)
    run.document.pop("input")
    assert run.document == {**expected, "limit": 5}


def test_a_limit_is_never_compared_with_another_or_mistaken_for_the_file(toy_dir, toy_library, tmp_path):
    """A report of the first N records gates only a run of the first N (a 2-input mean once passed
    against a 40-input one, both ways); a method the first N records lack is said to be missing
    there, not from the file; methods left with different numbers of inputs are warned of."""
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    options = ("--bootstrap", "0", "--min-tokens", "3", "-q")
    whole, part = tmp_path / "whole.json", tmp_path / "part.json"
    assert invoke("evaluate", records, *options, "--per-input", "-o", whole).exit_code == 0
    assert invoke("evaluate", records, *options, "--per-input", "--limit", "4", "-o", part).exit_code == 0
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "4", "--baseline", whole),
        f"{whole}: the baseline evaluated every record, this run the first 4 record(s) (--limit 4): compare like",
    )
    assert_one_line_error(
        invoke("evaluate", records, *options, "--baseline", part),
        f"{part}: the baseline evaluated the first 4 record(s) (--limit 4), this run every record: compare like",
    )
    assert invoke("evaluate", records, *options, "--limit", "4", "--baseline", part).exit_code == 0
    assert invoke("evaluate", records, *options, "--limit", "1000", "--baseline", whole).exit_code == 0
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "1", "--compare", "attcat,random"),
        f"--compare: no method 'random' in the first 1 record(s) of {records} (--limit 1) (it has: attcat)",
    )
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "1", "--fail-under", "random:morf.aopc=0"),
        f"--fail-under names method 'random', which has no records in the first 1 record(s) of {records} (--limit 1)",
    )
    uneven = invoke("evaluate", records, "--bootstrap", "0", "--min-tokens", "3", "--limit", "3")
    assert uneven.exit_code == 0, uneven.output
    assert "warning: the first 3 record(s) hold different numbers of inputs per method (attcat 2, random 1)" in uneven.stderr
    even = invoke("evaluate", records, "--bootstrap", "0", "--min-tokens", "3", "--limit", "4")
    assert "different numbers of inputs" not in even.stderr


def test_render_limit_reads_no_further_than_its_records(toy_dir, toy_library, tmp_path):
    """render --limit N stops reading after N records, as evaluate does (it read the whole input
    first: an endless standard input was copied to a temporary file until interrupted); a damaged
    line past the first N is never reached. With --compare, reading stops once N records of the
    two methods are paired; without --limit the damaged line is reached and refused."""
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    damaged = "".join(lines[:3]) + "not json\n"
    shown = invoke("render", "-", "--limit", "3", "--color", "never", stdin=damaged)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == invoke("render", records, "--limit", "3", "--color", "never").stdout
    paired = invoke("render", "-", "--limit", "2", "--compare", "attcat,random", "--color", "never", stdin=damaged)
    assert paired.exit_code == 0, paired.output
    assert [line.split()[1] for line in paired.stdout.splitlines() if "→" in line] == ["attcat", "random"]
    assert_one_line_error(invoke("render", "-", "--compare", "attcat,random", stdin=damaged), "<stdin>:4: ")


def test_render_compare_limit_holds_at_most_limit_records_of_each_method():
    """A stream that never pairs the two methods (B misspelt, or absent) is read holding no more
    than `limit` records of each method: an endless one costs constant memory and no disk
    (it was kept whole in a temporary file)."""
    from contrastcat.records.record import AttributionRecord
    from contrastcat.usecases.render_file import _first_pairs

    def record(i, method):
        return AttributionRecord(
            id=i, text=f"text {i}", tokens=["text"], token_ids=[5], offsets=[[0, 4]], special=[False], scores=[1.0],
            target=0, target_name="0", probs=[], predicted=0, label=None, method=method, model="", model_fingerprint="",
            library=None,
        )

    held = []

    def stream():
        for i in range(100_000):
            yield record(i, "a")
            if i == 50_000:
                held.append("read on")  # the pass goes past what it keeps, and keeps nothing more

    methods: set[str] = set()
    shown = _first_pairs(stream(), ("a", "b"), lambda r: r.method, 3, methods)
    assert methods == {"a"} and [r.id for r in shown] == [0, 1, 2] and held == ["read on"]
    paired = _first_pairs(iter([record(0, "a"), record(0, "b"), record(1, "a"), record(1, "b"), record(2, "b")]),
                          ("a", "b"), lambda r: r.method, 2, set())
    assert [(r.id, r.method) for r in paired] == [(0, "a"), (0, "b")]
