"""evaluate, its gates and its baselines under hostile use.

Every case is refused with one line and exit 2 before any work and before anything is written,
where it used to pass a gate it should fail, overwrite its own baseline, or crash late.
"""

from __future__ import annotations

import json
import os

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.usecases import evaluate_records as reports

from ..helpers import assert_one_line_error, invoke


@pytest.fixture(scope="module")
def work(toy_dir, tmp_path_factory):
    """Records of two methods on the toy inputs and a baseline report of them (per-input values kept)."""
    root = tmp_path_factory.mktemp("gates")
    records = root / "attr.jsonl"
    assert invoke(
        "explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat,rawatt", "-o", records, "-q"
    ).exit_code == 0
    baseline = root / "baseline.json"
    result = invoke("evaluate", records, "--min-tokens", "3", "--per-input", "--bootstrap", "100", "-o", baseline, "-q")
    assert result.exit_code == 0, result.output
    return root, records, baseline


def evaluate(records, *args):
    return invoke("evaluate", records, "--min-tokens", "3", "--bootstrap", "100", "-q", *args)


def test_the_baseline_is_never_the_output(work, tmp_path):
    """-o naming the baseline (directly or through a link) is refused and the baseline kept."""
    _, records, baseline = work
    before = baseline.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(baseline)
    for output in (baseline, link):
        assert_one_line_error(evaluate(records, "--baseline", baseline, "-o", output), "is the input file")
    assert baseline.read_bytes() == before


@pytest.mark.parametrize(
    "gate",
    [
        ["--fail-under", "lerf.aopc=0_05"],  # float() reads 5
        ["--fail-under", "morf.aopc=\u0660.\u0665"],  # Arabic-Indic digits
        ["--fail-under", "morf.aopc=nan"],
        ["--fail-under", "morf.aopc=1e400"],
        ["--fail-under", "morf.aopc=0x1p-3"],
        ["--tolerance", "inf"],
        ["--tolerance", "0_01"],
        ["--tolerance", "-0.1"],
    ],
)
def test_gate_numbers_are_ascii_decimals_and_finite(work, gate):
    """A gate's bound or tolerance that is not a finite plain ASCII decimal is refused in one line."""
    _, records, baseline = work
    result = evaluate(records, "--baseline", baseline, *gate)
    assert_one_line_error(result, gate[0])


def test_a_plain_decimal_gate_still_works_both_ways(work):
    _, records, _ = work
    assert evaluate(records, "--fail-under", "morf.aopc=-5e-1").exit_code == 0
    failed = evaluate(records, "--fail-under", "morf.aopc=.99")
    assert failed.exit_code == 3 and "is below the bound 0.99" in failed.stderr


def _damaged(baseline, tmp_path, change) -> str:
    document = json.loads(baseline.read_text())
    change(document)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda d: d.pop("model_fingerprint"), "no 'model_fingerprint'"),  # would pass any model
        (lambda d: [d.pop(k) for k in ("steps", "perturb", "target", "min_tokens", "orders")], "no 'steps'"),
        (lambda d: d.update(perturb="blur"), "'perturb' must be one of delete, mask, pad, unk"),
        (lambda d: d["methods"]["attcat"]["per_input"]["morf"]["keys"].__setitem__(0, 7), "per-input values of 'attcat'"),
        (lambda d: d["comparison"]["rows"][0]["values"].update(bogus=0.5), "unknown metric 'bogus'"),
        (lambda d: d["methods"]["attcat"].update(settings=5), "'settings' object"),
        (lambda d: d["methods"]["attcat"].update(library=[1]), "'library' must be"),
        # the second hostile pass: a repeated input key, a value of another type, a list cut short
        (lambda d: d["methods"]["attcat"]["per_input"]["morf"]["keys"].__setitem__(1, d["methods"]["attcat"]["per_input"]["morf"]["keys"][0]),
         "an input's key appears twice"),
        (lambda d: d["methods"]["attcat"]["per_input"]["morf"]["aopc"].__setitem__(0, "x"), "'aopc' holds a value that is not"),
        (lambda d: d["methods"]["attcat"]["per_input"]["lerf"]["lodds"].pop(), "'lodds' must be a list with one entry per key"),
        (lambda d: d["methods"]["attcat"].update(per_input=[]), "'per_input' must be an object"),
    ],
)
def test_a_damaged_baseline_is_refused_before_any_work(work, tmp_path, change, fragment):
    """Exit 2 before any work, and -o not written (was: exit 1 or 3 after it)."""
    _, records, baseline = work
    out = tmp_path / "report.json"
    result = evaluate(records, "--baseline", _damaged(baseline, tmp_path, change), "-o", out)
    assert_one_line_error(result, fragment)
    assert not out.exists()


def test_a_baseline_of_another_protocol_is_refused(work):
    _, records, baseline = work
    assert_one_line_error(evaluate(records, "--baseline", baseline, "--perturb", "mask"), "perturb 'delete'")


def test_records_without_a_fingerprint_are_refused(work, tmp_path):
    """Records with their fingerprint stripped are refused (another model's were evaluated as this one's)."""
    _, records, _ = work
    stripped = tmp_path / "stripped.jsonl"
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    for line in lines:
        line.pop("model_fingerprint")
    stripped.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert_one_line_error(evaluate(stripped), f"{stripped}:1: record id 'in-0' has no model_fingerprint")


def test_another_model_anywhere_in_a_long_file_is_refused_before_any_work(work, tmp_path, monkeypatch):
    """One foreign record after 1,100 good ones is refused before any chunk is evaluated (it was not)."""
    _, records, _ = work
    good = json.loads(records.read_text().splitlines()[0])
    lines = [json.dumps({**good, "id": f"r{i}"}) for i in range(1100)]
    lines.append(json.dumps({**good, "id": "foreign", "model_fingerprint": "sha256:" + "0" * 32}))
    long_file = tmp_path / "long.jsonl"
    long_file.write_text("\n".join(lines) + "\n")

    def no_work(*args, **kwargs):
        raise AssertionError("evaluated before the model check")

    monkeypatch.setattr(reports.CurveTally, "add", no_work)
    assert_one_line_error(evaluate(long_file), f"{long_file}:1101: record id 'foreign' was explained with model")


def test_a_file_naming_many_models_holds_a_few_of_their_records(work, tmp_path):
    """Of 300 records each naming other weights, the scan keeps the first record of a few
    (weights, precision) only (it kept every one: the texts of a whole file), and still refuses
    the file at the first record the model did not make."""
    from contrastcat.usecases.evaluate_records import MODELS_KEPT, first_of_each_model

    _, records, _ = work
    good = json.loads(records.read_text().splitlines()[0])
    lines = [json.dumps({**good, "id": f"r{i}", "model_fingerprint": f"sha256:{i:032x}"}) for i in range(300)]
    many = tmp_path / "many.jsonl"
    many.write_text(json.dumps(good) + "\n" + "\n".join(lines) + "\n")
    assert_one_line_error(evaluate(many), f"{many}:2: record id 'r0' was explained with model")
    from contrastcat.records.record import read_records

    kept = first_of_each_model(read_records(str(many)))
    assert len(kept) == MODELS_KEPT == 5 and kept[0].model_fingerprint == good["model_fingerprint"]


def test_nothing_evaluated_is_exit_2_and_writes_nothing(work, tmp_path):
    """--min-tokens above every record: exit 2 (was: exit 0 and an empty table)."""
    _, records, _ = work
    out = tmp_path / "report.json"
    result = invoke("evaluate", records, "--min-tokens", "1000", "-o", out, "-q")
    assert_one_line_error(result, "none of its 24 record(s) could be evaluated (24 shorter than --min-tokens 1000")
    assert not out.exists()


def test_the_api_says_the_same(work, toy_classifier):
    records = contrastcat.explain(toy_classifier, ["a good film", "the worst plot"], method="attcat")
    with pytest.raises(BadInput, match="could be evaluated"):
        contrastcat.evaluate(toy_classifier, records, min_tokens=1000)
    with pytest.raises(BadInput, match="100000"):
        contrastcat.evaluate(toy_classifier, records, bootstrap=10**9)
    records[1].model_fingerprint = ""
    with pytest.raises(BadInput, match="no model_fingerprint"):
        contrastcat.evaluate(toy_classifier, records)


def test_bootstrap_is_bounded(work):
    """--bootstrap 10**7 took a minute and 3.6 GB, 10**9 ran out of memory; both are now exit 2 at once."""
    _, records, _ = work
    for count in ("100001", "1000000000"):
        assert_one_line_error(evaluate(records, "--bootstrap", count), "--bootstrap must be 0 (off) or 100 to 100000")
    assert evaluate(records, "--bootstrap", "100000", "--order", "morf").exit_code == 0


def test_evaluate_on_a_full_disk_is_one_line_and_keeps_the_old_report(work, full_disk, monkeypatch):
    from .. import helpers

    _, records, _ = work
    report = full_disk / "report.json"
    report.write_text("the previous report\n")
    padding = full_disk / "filler"
    padding.write_bytes(b"x" * 292_000)  # a tmpfs then has a page or two left: less than one report
    monkeypatch.setattr(helpers, "FULL_DISK_ROOM", 2_000)  # the patched disk: as little room
    result = invoke("evaluate", records, "--min-tokens", "3", "--per-input", "--bootstrap", "100", "-o", report, "-q")
    assert_one_line_error(result, f"{report}: cannot write (No space left on device)", code=1)
    assert report.read_text() == "the previous report\n"
    assert sorted(os.listdir(full_disk)) == ["filler", "report.json"]


# --- gates on what has no value, bounds given twice ----------------------------------------------


@pytest.fixture(scope="module")
def flat(work):
    """The same records with rawatt's maps made flat (every score 1): its leave-one-out τ has no
    value on any input (τ-b of a constant ranking is undefined), attcat's has."""
    root, records, _ = work
    lines = []
    for line in records.read_text().splitlines():
        record = json.loads(line)
        if record["method"] == "rawatt":
            record["scores"] = [1.0] * len(record["scores"])
        lines.append(json.dumps(record))
    path = root / "flat.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_bound_on_a_metric_with_no_value_fails_and_says_why(flat):
    result = evaluate(flat, "--loo", "--fail-under", "rawatt:loo.tau=-1")
    assert_one_line_error(result, "rawatt: LOO τ is undefined (no input gave it a value), so the bound -1 cannot be met", code=3)
    assert "n/a" not in result.stderr
    assert evaluate(flat, "--loo", "--fail-under", "attcat:loo.tau=-1").exit_code == 0


def test_compare_names_a_metric_neither_side_can_be_paired_on(flat):
    result = evaluate(flat, "--loo", "--compare", "attcat,rawatt", "--json")
    assert result.exit_code == 0, result.output
    compare = json.loads(result.stdout)["compare"]
    assert compare["undefined"] == ["loo_tau"] and "loo_tau" not in compare["differences"]
    assert "morf_aopc" in compare["differences"]
    shown = evaluate(flat, "--loo", "--compare", "attcat,rawatt")
    assert "LOO τ: no difference (no input where both have a value)" in shown.stdout


def test_a_metric_the_baseline_has_no_value_of_is_not_gated_silently(work, flat, tmp_path):
    root, records, _ = work
    baseline = tmp_path / "flat-baseline.json"
    assert evaluate(flat, "--loo", "--per-input", "-o", baseline).exit_code == 0
    assert json.loads(baseline.read_text())["comparison"]["rows"][1]["values"]["loo_tau"] is None
    result = evaluate(records, "--loo", "--baseline", baseline, "--tolerance", "10")
    assert result.exit_code == 0, result.output
    assert "rawatt: LOO τ has no value in the baseline" in result.stderr and "not gated" in result.stderr
    # the other way round: a value in the baseline, none here, is a failure that says so
    full = tmp_path / "full-baseline.json"
    assert evaluate(records, "--loo", "--per-input", "-o", full).exit_code == 0
    failed = evaluate(flat, "--loo", "--baseline", full, "--tolerance", "10")
    assert failed.exit_code == 3 and "rawatt: LOO τ is undefined in this run" in failed.stderr


@pytest.mark.parametrize(
    "spec, refused",
    [
        ("morf.aopc=0.5,morf.aopc=0.6", True),
        ("attcat:loo.tau=0,attcat:LOO.TAU=0.1", True),
        ("morf.aopc=0.5,attcat:morf.aopc=0.6", False),  # every method, then one: not the same bound
        ("morf.aopc=0.5,morf.lodds=0.6", False),
    ],
)
def test_a_bound_given_twice_is_refused(spec, refused):
    if refused:
        with pytest.raises(BadInput, match="bounded twice"):
            _parse(spec)
    else:
        assert len(_parse(spec)) == 2


def _parse(spec):
    from contrastcat.evaluation.bounds import parse_bounds

    return parse_bounds("fail_under", spec)


def test_a_bound_given_twice_is_exit_2_before_any_work(work):
    _, records, _ = work
    assert_one_line_error(evaluate(records, "--fail-under", "morf.aopc=0.1,morf.aopc=0.9"), "bounded twice (0.1 and 0.9)")


def test_a_baseline_with_every_value_null_is_refused(work, tmp_path):
    """It would gate nothing: no real report is all null (a run that evaluated nothing is exit 2)."""
    _, records, baseline = work

    def nulls(document):
        for row in document["comparison"]["rows"]:
            row["values"] = dict.fromkeys(row["values"])

    out = tmp_path / "report.json"
    assert_one_line_error(evaluate(records, "--baseline", _damaged(baseline, tmp_path, nulls), "-o", out), "every value")
    assert not out.exists()


def test_what_the_baseline_does_not_gate_is_said(work, tmp_path):
    """A metric the baseline has no key for (made without --loo), or a method it lacks: a warning each."""
    root, records, baseline = work
    result = evaluate(records, "--loo", "--baseline", baseline)
    assert result.exit_code == 0, result.output
    for method in ("attcat", "rawatt"):
        assert f"warning: {method}: LOO τ has no value in the baseline {baseline}: not gated" in result.stderr

    def only_attcat(document):
        document["comparison"]["rows"] = [r for r in document["comparison"]["rows"] if r["method"] == "attcat"]

    result = evaluate(records, "--baseline", _damaged(baseline, tmp_path, only_attcat))
    assert result.exit_code == 0, result.output
    assert "warning: rawatt: not in the baseline" in result.stderr and "attcat: not in" not in result.stderr
    # the baseline's own run: nothing ungated, nothing said
    assert evaluate(records, "--baseline", baseline).stderr == ""


def test_compare_with_no_input_in_common_is_refused_before_the_model_loads(work, tmp_path):
    _, records, _ = work
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    for line in lines:
        if line["method"] == "rawatt":
            line["id"] = "other-" + str(line["id"])
    disjoint = tmp_path / "disjoint.jsonl"
    disjoint.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # a model path that does not exist: the refusal comes first, so nothing was loaded
    result = evaluate(disjoint, "--compare", "attcat,rawatt", "--model", tmp_path / "no-model")
    assert_one_line_error(result, "attcat and rawatt have no input in common that will be evaluated")
    # the same with inputs in common but every rawatt record too short for --min-tokens
    short = [json.loads(line) for line in records.read_text().splitlines()]
    cut = max(len(r["token_ids"]) for r in short if r["method"] == "attcat")
    for line in short:
        if line["method"] == "rawatt":
            line.update({k: line[k][:2] for k in ("token_ids", "tokens", "scores", "raw_scores", "special", "offsets")
                         if k in line})
    shorter = tmp_path / "short.jsonl"
    shorter.write_text("".join(json.dumps(line) + "\n" for line in short))
    result = invoke("evaluate", shorter, "--compare", "attcat,rawatt", "--min-tokens", "3", "--model", tmp_path / "no", "-q")
    assert_one_line_error(result, "no input in common")
    assert cut >= 3
    # inputs in common: the run goes on
    assert evaluate(records, "--compare", "attcat,rawatt").exit_code == 0


def test_compare_with_records_made_elsewhere_is_refused_under_the_callers_name(work, toy_dir, tmp_path):
    """Records made elsewhere have tokens only once the model loads: with no id in common they are
    refused before it loads; with ids in common but no input evaluated by both (every one of them
    too short), after the evaluation. Both said as the caller names the option (``--compare``,
    ``evaluate_file: compare``), never in backticks."""
    _, records, _ = work
    own = [json.loads(line) for line in records.read_text().splitlines() if '"attcat"' in line]
    other = [{"id": f"x-{r['id']}", "text": r["text"], "tokens": [t for t, s in zip(r["tokens"], r["special"]) if not s],
              "scores": [v for v, s in zip(r["scores"], r["special"]) if not s], "target": r["target"],
              "method": "captum-ig"} for r in own]
    disjoint = tmp_path / "disjoint.jsonl"
    disjoint.write_text("".join(json.dumps(line) + "\n" for line in own + other))
    result = evaluate(disjoint, "--compare", "attcat,captum-ig", "--model", tmp_path / "no-model")
    assert_one_line_error(result, "--compare: attcat and captum-ig have no input in common that will be evaluated")
    with pytest.raises(BadInput, match="^evaluate_file: compare: attcat and captum-ig have no input in common"):
        contrastcat.evaluate_file(disjoint, model=tmp_path / "no-model", compare="attcat,captum-ig")
    short = [{**line, "id": line["id"][2:], "text": "good film", "tokens": ["good", "film"], "scores": [1.0, 0.0]}
             for line in other]
    shorter = tmp_path / "short.jsonl"
    shorter.write_text("".join(json.dumps(line) + "\n" for line in own + short))
    result = evaluate(shorter, "--compare", "attcat,captum-ig", "--model", toy_dir / "model")
    assert_one_line_error(result, "--compare: attcat and captum-ig have no evaluated input in common")
    with pytest.raises(BadInput, match="^evaluate_file: compare: attcat and captum-ig have no evaluated input"):
        contrastcat.evaluate_file(shorter, model=toy_dir / "model", compare="attcat,captum-ig", min_tokens=3)


def test_the_api_refuses_huge_numbers_and_a_malformed_pair(work, toy_classifier):
    from fractions import Fraction

    _, records, _ = work
    for tolerance in (10**400, Fraction(10**400)):
        with pytest.raises(BadInput, match="finite number"):
            contrastcat.evaluate_file(str(records), tolerance=tolerance, min_tokens=3)
    explained = contrastcat.explain(toy_classifier, ["a good film", "the worst plot"], method="attcat,rawatt")
    report = contrastcat.evaluate(toy_classifier, explained, min_tokens=1)
    for pair in ("attcat,rawatt", ("attcat",), ("attcat", "attcat"), ("attcat", 3), ("attcat", "nope")):
        with pytest.raises(BadInput, match="compare"):
            report.to_dict(compare=pair)
    assert report.to_dict(compare=("attcat", "rawatt"))["compare"]["first"] == "attcat"
