"""ERASER comprehensiveness and sufficiency, and the leave-one-out τ.

By hand on the stub of test_evaluate.py: p1(x) = 0.1 + the weights of the tokens present
(t1..t5 weigh 0.4, 0.2, 0.1, 0.05, 0.05; t6..t10 nothing; each [MASK] 0.01), so the whole input
has p1 = 0.9, and the map ranks t1 > t2 > ... > t10. Ten non-special tokens: the bins 1 % and 5 %
hold no token (left out, as ferret and ERASER's code floor them), 10 % one, 20 % two, 50 % five.

- comprehensiveness: removing t1 -> 0.5, t1..t2 -> 0.3, t1..t5 -> 0.1: drops 0.4, 0.6, 0.8, mean 0.6;
- sufficiency: only t1 -> 0.5, only t1..t2 -> 0.7, only t1..t5 -> 0.9: drops 0.4, 0.2, 0, mean 0.2;
- with [MASK] instead of deletion, each masked token adds 0.01: comprehensiveness (0.39 + 0.58 +
  0.75) / 3, sufficiency (0.31 + 0.12 - 0.05) / 3;
- leave-one-out drops 0.4, 0.2, 0.1, 0.05, 0.05, 0 x 5 against scores 1.0 ... 0.1: of the 45 pairs,
  11 are tied in the drops and the other 34 concordant, so τ-b = 34 / sqrt(45 * 34) = sqrt(34/45).

A literal transcription of ferret's ``aopc_compr`` / ``aopc_suff`` (int(p * n) tokens,
``argsort()[-k:][::-1]``, a set seen before or of no token skipped, ``np.delete``) gives the
same numbers, and on the trained toy model a plain loop, one sequence at a time, gives what
``evaluate`` computes batched and deduplicated.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import contrastcat
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import perturbation_curves
from contrastcat.evaluation.scalars import eraser_counts
from contrastcat.evaluation.stats import BootstrapSettings
from contrastcat.records.record import read_records

from ..helpers import MASK, STUB_IDS, WEIGHTS, assert_one_line_error, invoke, record, stub_predict, write_records


def scalars(perturb="delete", records=None, **settings):
    report = perturbation_curves(
        records or [record()], stub_predict, EvalSettings(perturb=perturb, eraser=True, loo=True, **settings),
        ("neg", "pos"), mask_id=MASK,
    )
    return {key: scalar.values.tolist() for key, scalar in report.scalars.items()}


def test_eraser_and_loo_by_hand():
    found = scalars()
    assert found["eraser_comp"] == pytest.approx([0.6])
    assert found["eraser_suff"] == pytest.approx([0.2])
    assert found["loo_tau"] == pytest.approx([math.sqrt(34 / 45)])


def test_eraser_and_loo_with_a_mask_token_by_hand():
    found = scalars("mask")
    assert found["eraser_comp"] == pytest.approx([(0.39 + 0.58 + 0.75) / 3])
    assert found["eraser_suff"] == pytest.approx([(0.31 + 0.12 - 0.05) / 3])
    assert found["loo_tau"] == pytest.approx([math.sqrt(34 / 45)])  # every drop 0.01 less: the same order


def ferret_aopc(scores, predict_p, ids, suff: bool) -> float:
    """ferret 0.5's aopc_compr / aopc_suff, transcribed: [CLS]/[SEP] sliced off, thresholds
    0.01..0.5 (ERASER's), k = int(threshold * n), the top k by argsort, a repeated or empty set
    skipped, tokens deleted (sufficiency: kept in their order), specials added back."""
    inner, body = np.array(scores[1:-1]), list(ids[1:-1])
    baseline = predict_p(ids)
    drops, last = [], None
    for threshold in (0.01, 0.05, 0.1, 0.2, 0.5):
        k = int(threshold * len(inner))
        if not 0 < k <= len(inner):
            continue
        top = list(inner.argsort()[-k:][::-1])
        if set(top) == last:
            continue
        last = set(top)
        kept = [body[i] for i in np.sort(top)] if suff else list(np.delete(np.array(body), top))
        drops.append(baseline - predict_p([ids[0], *kept, ids[-1]]))
    return float(np.mean(drops))


def test_the_same_numbers_as_ferrets_definitions():
    p1 = lambda ids: float(stub_predict([ids])[0, 1])  # noqa: E731
    scores = record().scores
    assert ferret_aopc(scores, p1, STUB_IDS, suff=False) == pytest.approx(0.6)
    assert ferret_aopc(scores, p1, STUB_IDS, suff=True) == pytest.approx(0.2)
    # An order other than the positions', so the ranking matters: scores shuffled, no ties.
    rng = np.random.default_rng(3)
    shuffled = [0.5, *rng.permutation(np.linspace(0.05, 0.95, 10)).tolist(), 0.5]
    found = scalars(records=[record(scores=shuffled)])
    assert found["eraser_comp"] == pytest.approx([ferret_aopc(shuffled, p1, STUB_IDS, suff=False)])
    assert found["eraser_suff"] == pytest.approx([ferret_aopc(shuffled, p1, STUB_IDS, suff=True)])


@pytest.mark.parametrize("n", range(1, 260))
def test_bins_floor_like_ferrets_float_thresholds(n):
    expected = [k for k in (int(t * n) for t in (0.01, 0.05, 0.1, 0.2, 0.5)) if k > 0]
    assert eraser_counts(n) == expected


def test_a_constant_map_has_no_loo_tau_and_is_left_out_of_the_mean():
    flat = record(scores=[0.5] * 12, id=2)
    report = perturbation_curves(
        [record(), flat], stub_predict, EvalSettings(eraser=True, loo=True), ("neg", "pos"), mask_id=MASK
    )
    values = report.scalars["loo_tau"].values
    assert values[0] == pytest.approx(math.sqrt(34 / 45)) and math.isnan(values[1])
    assert report.scalars["loo_tau"].mean == pytest.approx(math.sqrt(34 / 45))
    assert report.scalars["loo_tau"].inputs == 1


def test_pad_and_unk_replace_with_their_own_token(toy_classifier):
    from contrastcat.deletion.perturb import replacement_id

    tokenizer = toy_classifier.tokenizer
    assert replacement_id("pad", tokenizer, toy_classifier.pad_id) == toy_classifier.pad_id
    assert replacement_id("unk", tokenizer, toy_classifier.pad_id) == tokenizer.unk_token_id
    assert replacement_id("mask", tokenizer, toy_classifier.pad_id) == tokenizer.mask_token_id
    assert replacement_id("delete", tokenizer, toy_classifier.pad_id) is None
    seen = []

    def recording(sequences):
        seen.extend(sequences)
        return stub_predict([[t if t in WEIGHTS or t in (2, 3) else 15 for t in ids] for ids in sequences])

    perturbation_curves([record()], recording, EvalSettings(perturb="pad", eraser=True, loo=True), ("neg", "pos"), mask_id=0)
    assert all(len(ids) == len(STUB_IDS) for ids in seen)  # replaced, never removed
    assert any(0 in ids for ids in seen)


# ------------------------------------------------------------ the trained toy model


def p_target(model, ids, target):
    with torch.no_grad():
        return torch.softmax(model(input_ids=torch.tensor([list(ids)])).logits[0].double(), -1)[target].item()


def plain_loop(model, record, replace: int | None):
    """Comprehensiveness, sufficiency and LOO τ, one sequence at a time, from the definitions."""
    ids, special = list(record.token_ids), list(record.special)
    positions = [i for i, flag in enumerate(special) if not flag]
    base_probs = [p_target(model, ids, c) for c in range(3)]
    target = int(np.argmax(base_probs))
    p = base_probs[target]
    order = sorted(positions, key=lambda i: (-record.scores[i], i))

    def without(gone):
        if replace is None:
            return [t for i, t in enumerate(ids) if i not in gone]
        return [replace if i in gone else t for i, t in enumerate(ids)]

    comp, suff = [], []
    for k in (1, 5, 10, 20, 50):
        count = k * len(positions) // 100
        if count:
            comp.append(p - p_target(model, without(set(order[:count])), target))
            suff.append(p - p_target(model, without(set(order[count:])), target))
    drops = [p - p_target(model, without({i}), target) for i in positions]
    scores = [record.scores[i] for i in positions]
    pairs = [(a, b) for a in range(len(positions)) for b in range(a + 1, len(positions))]
    sx = [np.sign(scores[a] - scores[b]) for a, b in pairs]
    sy = [0 if abs(drops[a] - drops[b]) <= 1e-6 else np.sign(drops[a] - drops[b]) for a, b in pairs]  # LOO_TIE
    tau = sum(x * y for x, y in zip(sx, sy)) / math.sqrt(sum(x != 0 for x in sx) * sum(y != 0 for y in sy))
    # A pair whose drops differ by about the tie width is tied or not by the last bits of float32,
    # which differ between one sequence at a time and a batch: its τ can only be compared roughly.
    near = sum(abs(abs(drops[a] - drops[b]) - 1e-6) < 2e-7 for a, b in pairs)
    return float(np.mean(comp)), float(np.mean(suff)), tau, near


@pytest.mark.parametrize("perturb", ["delete", "mask"])
def test_batched_evaluation_equals_a_plain_loop_on_the_toy_model(toy_dir, toy_classifier, tmp_path, perturb):
    path = write_records(toy_dir, tmp_path / "r.jsonl", ("keyword", "random"))
    records = list(read_records(path))
    report = contrastcat.evaluate(toy_classifier, records, eraser=True, loo=True, perturb=perturb, bootstrap=0)
    replace = None if perturb == "delete" else toy_classifier.tokenizer.mask_token_id
    model = toy_classifier.model
    uncertain = 0
    for name in ("keyword", "random"):
        method = report.methods[name]
        mine = {r.id: r for r in records if r.method == name}
        for index, key in enumerate(method.scalars["eraser_comp"].keys):
            record = mine[method.scalars["eraser_comp"].ids[index]]
            record.special = [f or t in toy_classifier.tokenizer.all_special_ids for f, t in zip(record.special, record.token_ids)]
            comp, suff, tau, near = plain_loop(model, record, replace)
            assert method.scalars["eraser_comp"].values[index] == pytest.approx(comp, abs=1e-5)
            assert method.scalars["eraser_suff"].values[index] == pytest.approx(suff, abs=1e-5)
            if near:
                uncertain += 1
                assert method.scalars["loo_tau"].values[index] == pytest.approx(tau, abs=near * 0.05)
            else:
                assert method.scalars["loo_tau"].values[index] == pytest.approx(tau, abs=1e-12)
    assert uncertain <= 6  # half of the 12 records at least are compared exactly (under mask, most tokens barely matter)
    # The keyword map ranks the deciding tokens first: it must beat random on both ERASER metrics.
    keyword, random_ = report.methods["keyword"].scalars, report.methods["random"].scalars
    assert keyword["eraser_comp"].mean > random_["eraser_comp"].mean + 0.1
    assert keyword["eraser_suff"].mean < random_["eraser_suff"].mean - 0.1


def test_a_mean_over_fewer_inputs_than_evaluated_is_said_under_the_table(toy_dir, tmp_path):
    """Two keyword maps made flat have no leave-one-out τ: the table's `inputs` column (12) is not
    the count behind keyword's LOO τ (10), and a line under the table (terminal and Markdown) says
    so; random's τ is over all of its inputs and gets no line."""
    path = write_records(toy_dir, tmp_path / "r.jsonl", ("keyword", "random"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    flat = [r["id"] for r in lines if r["method"] == "keyword"][:2]
    for r in lines:
        if r["method"] == "keyword" and r["id"] in flat:
            r["scores"] = [0.5] * len(r["scores"])
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    evaluated = sum(r["method"] == "keyword" for r in lines)
    said = f"keyword: LOO τ is the mean over {evaluated - 2} of its {evaluated} inputs (undefined for the others)"
    for flag in ((), ("--markdown",)):
        result = invoke("evaluate", path, "--loo", "--min-tokens", "3", "-q", *flag)
        assert result.exit_code == 0, result.output
        assert said in result.stdout and "random: LOO" not in result.stdout


# ------------------------------------------------------------ gates, baselines, comparisons


def test_the_new_metrics_gate_compare_and_pair_with_a_baseline(toy_dir, tmp_path):
    records = write_records(toy_dir, tmp_path / "r.jsonl", ("keyword", "random"))
    model = str(toy_dir / "model")
    base = tmp_path / "base.json"
    made = invoke("evaluate", records, "--model", model, "--eraser", "--loo", "--per-input", "-o", base, "--quiet")
    assert made.exit_code == 0, made.output
    document = json.loads(base.read_text())
    comp = document["methods"]["keyword"]["eraser_comp"]["mean"]
    per_input = document["methods"]["keyword"]["per_input"]["eraser_comp"]
    assert comp == pytest.approx(np.mean(per_input["values"]))
    assert document["eraser"] is True and document["eraser_bins"] == [1, 5, 10, 20, 50]
    failing = invoke("evaluate", records, "--model", model, "--eraser", "--fail-under", f"keyword:eraser.comp={comp + 0.01:.4f}")
    assert_one_line_error(failing, "keyword: Comprehensiveness", "is below the bound", code=3)
    passing = invoke("evaluate", records, "--model", model, "--eraser", "--fail-under", f"keyword:eraser.comp={comp - 0.01:.4f}")
    assert passing.exit_code == 0, passing.output
    assert_one_line_error(invoke("evaluate", records, "--model", model, "--fail-under", "loo.tau=0.1"), "LOO τ is not evaluated")
    # The same run against its own report passes; without --eraser its columns are missing.
    same = invoke("evaluate", records, "--model", model, "--eraser", "--loo", "--baseline", base, "--quiet")
    assert same.exit_code == 0, same.output
    missing = invoke("evaluate", records, "--model", model, "--baseline", base, "--quiet")
    assert_one_line_error(missing, "has eraser.comp for keyword, which this run does not compute", "--eraser")
    compared = invoke("evaluate", records, "--model", model, "--eraser", "--loo", "--compare", "keyword,random", "--json", "--quiet")
    differences = json.loads(compared.stdout)["compare"]["differences"]
    assert set(differences) >= {"eraser_comp", "eraser_suff", "loo_tau"}
    assert differences["eraser_comp"]["mean"] > 0 and differences["eraser_suff"]["mean"] < 0
    # A damaged per-input list of the new metrics is refused before any work.
    document["methods"]["keyword"]["per_input"]["eraser_comp"]["values"].pop()
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(document))
    assert_one_line_error(
        invoke("evaluate", records, "--model", model, "--eraser", "--baseline", damaged), "'values' must be a list"
    )


def test_unk_on_a_tokenizer_without_one_is_refused(toy_classifier):
    class NoUnk:
        unk_token_id = None

    from contrastcat.deletion.perturb import replacement_id
    from contrastcat.errors import BadInput

    with pytest.raises(BadInput, match="no unknown token"):
        replacement_id("unk", NoUnk(), 0)


def test_records_built_by_hand_are_checked_as_a_files_lines_are(toy_dir, toy_classifier, tmp_path):
    from contrastcat.errors import BadInput

    records = list(read_records(write_records(toy_dir, tmp_path / "r.jsonl", ("keyword",))))
    records[1].scores = [float("nan")] * len(records[1].scores)
    with pytest.raises(BadInput, match=r"evaluate: records: item 1: 'scores' must be a list of finite numbers"):
        contrastcat.evaluate(toy_classifier, records, bootstrap=0)
    records[1].scores = records[0].scores[:2]
    with pytest.raises(BadInput, match="item 1: 'tokens' and 'scores' must be lists of the same length"):
        contrastcat.evaluate(toy_classifier, records, bootstrap=0)


def test_leave_one_out_drops_kept_across_calls(toy_dir, toy_classifier, tmp_path):
    # benchmarks evaluate variants of one method a call at a time; the drops are the inputs', not
    # the methods', so a LeaveOneOut kept between calls must give what one call gives.
    from contrastcat.errors import BadInput
    from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records, shared_loo
    from contrastcat.evaluation.scalars import LeaveOneOut

    records = list(read_records(write_records(toy_dir, tmp_path / "r.jsonl", ("keyword", "random"))))
    settings = EvalSettings(perturb="mask", eraser=False, loo=True)
    together = evaluate_records(toy_classifier, records, settings, Evaluating(bootstrap=BootstrapSettings(0)))
    kept = LeaveOneOut("mask", None)
    apart = {
        name: evaluate_records(toy_classifier, [r for r in records if r.method == name], settings,
                               Evaluating(bootstrap=BootstrapSettings(0), loo=kept)).methods[name]
        for name in ("keyword", "random")
    }
    for name in ("keyword", "random"):
        expected = together.methods[name].scalars["loo_tau"].values
        assert apart[name].scalars["loo_tau"].values == pytest.approx(expected, abs=1e-12)
    # The second call read the kept drops: reversed, every τ changes sign.
    kept._drops = {key: -drops for key, drops in kept._drops.items()}
    reversed_ = evaluate_records(toy_classifier, [r for r in records if r.method == "keyword"], settings,
                                 Evaluating(bootstrap=BootstrapSettings(0), loo=kept)).methods["keyword"]
    assert reversed_.scalars["loo_tau"].values == pytest.approx(
        [-v for v in together.methods["keyword"].scalars["loo_tau"].values], abs=1e-12
    )
    with pytest.raises(BadInput, match="made with 'mask'"):
        evaluate_records(toy_classifier, records, EvalSettings(perturb="delete", loo=True), Evaluating(loo=kept))
    mask = toy_classifier.tokenizer.mask_token_id
    with pytest.raises(BadInput, match="another model"):  # (records of another model are refused before)
        shared_loo(kept, "mask", mask, "sha256:another", "torch.float32")
    with pytest.raises(BadInput, match="another precision"):
        shared_loo(kept, "mask", mask, toy_classifier.fingerprint, "torch.bfloat16")
    shared_loo(kept, "mask", mask, toy_classifier.fingerprint, "torch.float32")
    # Kept between runs as JSON (benchmarks/frontier.py): the same drops come back, with what made them.
    import json

    restored = LeaveOneOut.from_state(json.loads(json.dumps(kept.state())))
    again = evaluate_records(toy_classifier, [r for r in records if r.method == "keyword"], settings,
                             Evaluating(bootstrap=BootstrapSettings(0), loo=restored)).methods["keyword"]
    assert list(again.scalars["loo_tau"].values) == list(reversed_.scalars["loo_tau"].values)
    foreign = LeaveOneOut.from_state({**kept.state(), "model_fingerprint": "sha256:another"})
    with pytest.raises(BadInput, match="another model"):
        evaluate_records(toy_classifier, records, settings, Evaluating(loo=foreign))
    # A malformed or foreign state is refused in one line (from_state, or the evaluation for drops
    # that cannot be the input's: one per perturbable token).
    good = kept.state()
    first = good["drops"][0]
    for bad in (None, [], {**good, "extra": 1}, {k: v for k, v in good.items() if k != "mode"},
                {**good, "drops": None}, {**good, "drops": [first[:2]]}, {**good, "drops": [[first[0], True, first[2]]]},
                {**good, "drops": [[first[0], 0.5, first[2]]]}, {**good, "drops": [[first[0], first[1], ["a"]]]},
                {**good, "drops": [[first[0], first[1], [float("nan")] * len(first[2])]]},
                {**good, "drops": [first, first]}, {**good, "replacement": "4"}):
        with pytest.raises(BadInput, match="leave-one-out state"):
            LeaveOneOut.from_state(bad)
    for wrong in ([0.0] + first[2], first[2][1:]):
        shifted = LeaveOneOut.from_state({**good, "drops": [[first[0], first[1], wrong]]})
        with pytest.raises(BadInput, match="belong to another input"):
            evaluate_records(toy_classifier, records, settings, Evaluating(loo=shifted))
