"""evaluate under hostile use, what tests/evaluation/test_evaluate_gates_hostile.py leaves open:
a baseline that is not the strict JSON evaluate writes, or that gives the gate nothing (or
something else) to compare; a baseline of another forward precision; records the model cannot
take, or gold labels it does not have, anywhere in a long file; a file with nothing to evaluate.
Each is one line and exit 2 before any work, with nothing written.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.usecases import evaluate_records as reports
from contrastcat.records.record import read_records

PER_TOKEN = ("tokens", "token_ids", "scores", "raw_scores", "offsets", "special")

from ..helpers import assert_one_line_error, invoke


@pytest.fixture(scope="module")
def work(toy_dir, tmp_path_factory):
    """The toy inputs' attcat records (12, every one labelled) and a baseline report of them."""
    root = tmp_path_factory.mktemp("hostile")
    records = root / "attr.jsonl"
    result = invoke(
        "explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat", "-o", records, "-q"
    )
    assert result.exit_code == 0, result.output
    baseline = root / "baseline.json"
    result = invoke("evaluate", records, "--min-tokens", "3", "--per-input", "--bootstrap", "100", "-o", baseline, "-q")
    assert result.exit_code == 0, result.output
    return records, baseline


def _no_work(*args, **kwargs):
    raise AssertionError("evaluated before the check")


@pytest.fixture
def no_work(monkeypatch):
    """Any perturbation curve computed fails the test: what is refused must be refused before."""
    monkeypatch.setattr(reports.CurveTally, "add", _no_work)


def evaluate(records, *args):
    return invoke("evaluate", records, "--min-tokens", "3", "--bootstrap", "100", "-q", *args)


def _refused(records, baseline, tmp_path, *fragments, args=()):
    out = tmp_path / "report.json"
    result = evaluate(records, "--baseline", baseline, "-o", out, *args)
    assert_one_line_error(result, str(baseline), *fragments)
    assert not out.exists()


# --- baselines -------------------------------------------------------------------------------


def _edited(baseline, tmp_path, edit) -> str:
    path = tmp_path / "edited.json"
    path.write_text(edit(baseline.read_text()))
    return path


@pytest.mark.parametrize(
    "edit, fragment",
    [
        # Python's int() stops at 4300 digits: was "ValueError: Exceeds the limit", exit 1.
        (lambda text: text.replace('"min_tokens": 3', '"min_tokens": ' + "9" * 5000), "a number too long to read"),
        # Was "RecursionError: maximum recursion depth exceeded", exit 1.
        (lambda text: text[:-2] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "nested too deeply"),
        # evaluate never writes NaN; Python's reader takes it: was accepted, exit 0.
        (lambda text: text.replace('"truncated": 0', '"truncated": NaN', 1), "NaN is not a JSON number"),
        # Two fingerprints: which one counts? Python's reader keeps the last: was accepted, exit 0.
        (lambda text: text.replace('"model_fingerprint"', '"model_fingerprint": "sha256:00", "model_fingerprint"', 1),
         "key 'model_fingerprint' appears more than once"),
    ],
    ids=["long-integer", "deep-nesting", "nan", "repeated-key"],
)
def test_a_baseline_that_is_not_strict_json_is_refused_before_any_work(work, tmp_path, no_work, edit, fragment):
    """A malformed baseline is exit 2 before any work, never exit 1 or a pass."""
    records, baseline = work
    _refused(records, _edited(baseline, tmp_path, edit), tmp_path, "not a JSON report", fragment)


def test_a_syntax_error_in_a_baseline_names_its_line(work, tmp_path, no_work):
    records, baseline = work
    lines = baseline.read_text().splitlines(keepends=True)
    lines[4] = lines[4].replace(",", ",,", 1)
    damaged = tmp_path / "damaged.json"
    damaged.write_text("".join(lines))
    _refused(records, damaged, tmp_path, f"{damaged}:5: not a JSON report")


def _changed(baseline, tmp_path, change) -> str:
    document = json.loads(baseline.read_text())
    change(document)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(document, indent=2))
    return path


def _morf_only(document) -> None:
    document["orders"] = ["morf"]
    document["methods"]["attcat"]["per_input"].pop("lerf")


@pytest.mark.parametrize(
    "change, args, fragment",
    [
        # Nothing to compare: the gate passed every run (exit 0).
        (lambda d: d["comparison"].update(rows=[]), (), "'comparison.rows' is empty"),
        (lambda d: d["comparison"]["rows"][0].update(values={}), (), "comparison row 0 ('attcat') has no 'lerf_aopc'"),
        # A metric deleted from the row was never compared (exit 0).
        (lambda d: d["comparison"]["rows"][0]["values"].pop("morf_lodds"), (), "has no 'morf_lodds'"),
        # A LeRF value in a MoRF-only report: was exit 3 after the work ("not evaluated by this run").
        (_morf_only, ("--order", "morf"), "has 'lerf_aopc', which its orders do not include (orders: morf)"),
    ],
    ids=["no-rows", "no-values", "a-metric-deleted", "a-metric-of-another-order"],
)
def test_a_baseline_that_gives_the_gate_nothing_to_compare_is_refused(work, tmp_path, no_work, change, args, fragment):
    """Every field the gate reads is checked when the baseline is read."""
    records, baseline = work
    _refused(records, _changed(baseline, tmp_path, change), tmp_path, "damaged report", fragment, args=args)


def test_a_baseline_of_another_forward_precision_is_refused_before_anything_is_written(work, tmp_path, monkeypatch):
    """Refused before anything is written: it was exit 2 only after the work, with -o already
    written over. The baseline as written still gates (the check is not a refusal of everything)."""
    records, baseline = work
    out = tmp_path / "report.json"
    assert evaluate(records, "--baseline", baseline, "-o", out).exit_code == 0
    assert json.loads(out.read_text())["comparison"]["rows"][0]["method"] == "attcat"
    out.unlink()
    monkeypatch.setattr(reports.CurveTally, "add", _no_work)
    foreign = _changed(baseline, tmp_path, lambda d: d.update(forward_dtype="bfloat16"))
    _refused(records, foreign, tmp_path, "evaluated with forward_dtype 'bfloat16', this run with 'same'")


# --- records ----------------------------------------------------------------------------------


def _long_file(records, tmp_path, last: dict, name="long.jsonl"):
    """1,100 good records (past the first chunk of 1,024), then one changed by ``last``."""
    good = json.loads(records.read_text().splitlines()[0])
    lines = [json.dumps({**good, "id": f"r{i}"}) for i in range(1100)]
    lines.append(json.dumps({**good, "id": "last", **last}))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda good: {"token_ids": [*good["token_ids"][:-2], 10**6, good["token_ids"][-1]]},
         "token id 1000000 is not in the model's vocabulary (ids 0..68)"),
        (lambda good: {"target": 7}, "target 7 is not a class of the model (it has 3: 0..2)"),
        (lambda good: {"predicted": 9}, "predicted 9 is not a class of the model"),
    ],
    ids=["token-id", "target", "predicted"],
)
def test_what_the_model_cannot_take_anywhere_in_a_long_file_is_refused_before_any_work(
    work, tmp_path, no_work, change, fragment
):
    """Refused before any work: records another model made were caught chunk by chunk, after
    earlier chunks' work."""
    records, _ = work
    path = _long_file(records, tmp_path, change(json.loads(records.read_text().splitlines()[0])))
    out = tmp_path / "report.json"
    assert_one_line_error(evaluate(path, "-o", out), f"{path}:1101: ", fragment)
    assert not out.exists()


@pytest.mark.parametrize(
    "last, fragment",
    [({"label": None}, "--target gold needs a label in every record"), ({"label": "nosuch"}, "label 'nosuch' is not one of")],
    ids=["no-label", "unknown-label"],
)
def test_gold_labels_anywhere_in_a_long_file_are_checked_before_any_work(work, tmp_path, monkeypatch, last, fragment):
    """Only what would be evaluated is judged: a record --min-tokens skips may lack its label, as before."""
    records, _ = work
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    lines.append({**lines[0], "id": "short", **{key: lines[0][key][:2] for key in PER_TOKEN}, "label": None})
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = evaluate(mixed, "--target", "gold", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["methods"]["attcat"]["evaluated"] == 12

    monkeypatch.setattr(reports.CurveTally, "add", _no_work)
    path = _long_file(records, tmp_path, last)
    assert_one_line_error(evaluate(path, "--target", "gold"), f"{path}:1101: ", fragment)


def test_what_the_scan_keeps_of_a_file_is_bounded_whatever_its_records_reach(work, toy_dir, tmp_path, monkeypatch):
    """The scan before the model loads kept each record that raised the largest token id or class
    (all of a file whose ids climb) and every distinct gold label: a file's worth. It keeps where
    each rose (whole numbers, not records) and the first labels: the first record the model cannot
    take is still refused, by its line, before any work where the scan kept it, and otherwise as
    the run reaches it, with nothing written."""
    import tracemalloc
    from types import SimpleNamespace

    from contrastcat.records.record import RecordFile
    from contrastcat.usecases import evaluate_file

    records, _ = work
    good = json.loads(records.read_text().splitlines()[0])
    lines = []
    for i in range(1000):  # each one's token id and class beyond the last's, with a long id and label
        ids = [*good["token_ids"][:-2], 100 + i, good["token_ids"][-1]]
        lines.append(json.dumps({**good, "id": f"{i:04d}" + "i" * 900, "token_ids": ids, "target": i, "predicted": i,
                                 "label": f"{i:04d}" + "l" * 900}))
    path = tmp_path / "climbing.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(evaluate_file, "GOLD_KEPT", 5)
    scan = evaluate_file._Scan(str(path), SimpleNamespace(min_tokens=3, target="gold"), None, lambda name: name)
    tracemalloc.start()
    try:
        RecordFile(str(path)).check(scan.add)
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept < 100_000, kept  # a record's id and label of 1,000 records: 2 MB
    assert len(scan.gold) == 5
    # The first line past a vocabulary of 150 ids and past 3 classes, whatever comes after.
    assert [(entry.line, entry.token_ids, entry.target) for entry in scan.reach(150, 3)] == [(4, [0], 3), (51, [150], 0)]
    assert scan.reach(2000, 2000) == []
    result = evaluate(path, "--target", "gold")
    assert_one_line_error(result, "climbing.jsonl:1: token id 100 is not in the model's vocabulary")
    # Lines the model can take, then lines it cannot: the first of those is named, not the one
    # reaching furthest (the user fixes it, and the next run names the next).
    tokens, classes = tmp_path / "tokens.jsonl", tmp_path / "classes.jsonl"
    tokens.write_text("".join(
        json.dumps(good if i < 3 else {**json.loads(line), "target": 0, "predicted": 0}) + "\n"
        for i, line in enumerate(lines)
    ))
    assert_one_line_error(evaluate(tokens), "tokens.jsonl:4: token id 103 is not in the model's vocabulary")
    classes.write_text("".join(json.dumps({**good, "target": i, "predicted": i}) + "\n" for i in range(20)))
    count = contrastcat.load_model(str(toy_dir / "model")).num_classes
    assert_one_line_error(evaluate(classes), f"classes.jsonl:{count + 1}: target {count} is not a class of the model")

    # A bad gold label past those the scan kept: refused at its line once the run reaches it.
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    labels = ["0", 0, "neutral", "Neutral", "00", "1", 1, "2", 2, "NEUTRAL", "01", "nosuch"]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps({**row, "label": label}) + "\n" for row, label in zip(rows, labels)))
    out = tmp_path / "report.json"
    assert_one_line_error(evaluate(mixed, "--target", "gold", "-o", out), f"{mixed}:12: label 'nosuch' is not one of")
    assert not out.exists()
    monkeypatch.setattr(evaluate_file, "GOLD_KEPT", 10_000)
    assert_one_line_error(evaluate(mixed, "--target", "gold", "-o", out), f"{mixed}:12: label 'nosuch' is not one of")


@pytest.mark.parametrize("case", ["too-short", "only-special"])
def test_nothing_to_evaluate_is_refused_before_the_model_loads(work, tmp_path, monkeypatch, case):
    """Exit 2 (bad input: nothing in the file this run could evaluate), and before
    the model is even loaded (it was loaded first; before the fix, exit 0 with an empty table)."""
    from contrastcat.usecases import evaluate_file

    records, _ = work

    def load_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(evaluate_file, "classifier_for", load_model)
    path, args = records, ["--min-tokens", "1000"]
    if case == "only-special":
        lines = [json.loads(line) for line in records.read_text().splitlines()]
        path = tmp_path / "special.jsonl"
        path.write_text("".join(json.dumps({**line, "special": [True] * len(line["tokens"])}) + "\n" for line in lines))
        args = []
    out = tmp_path / "report.json"
    result = invoke("evaluate", path, *args, "-o", out, "-q")
    short, special = (12, 0) if case == "too-short" else (0, 12)
    assert_one_line_error(
        result, f"{path}: none of its 12 record(s) could be evaluated ({short} shorter than --min-tokens "
        f"{1000 if short else 10}, {special} only special tokens)",
    )
    assert not out.exists()


def test_the_api_checks_every_record_before_any_work(work, toy_classifier, no_work):
    """The Python API too: a list of records is judged whole, not chunk by chunk."""
    records, _ = work
    first = read_records(str(records))[0]
    listed = [dataclasses.replace(first, id=f"r{i}") for i in range(1100)]
    listed.append(dataclasses.replace(first, id="last", token_ids=[10**6] * len(first.token_ids)))
    with pytest.raises(BadInput, match="record id 'last'|token id 1000000"):
        contrastcat.evaluate(toy_classifier, listed, min_tokens=3)


# --- documentation ----------------------------------------------------------------------------


def test_help_says_the_bootstrap_bound_and_the_exit_codes():
    """The bootstrap's maximum is in --help (the docs say it too), and the exit code when no record
    could be evaluated."""
    text = " ".join(invoke("evaluate", "--help").stdout.split())
    assert "100 to 100000 resamples" in text
    assert "2 bad input, also when no record could be evaluated" in text
