"""Evaluation (docs/spec.md §5) on a hand-made case whose numbers are worked out by hand.

Stub classifier, two classes: p1(x) = 0.1 + the weights of the tokens present
(t1..t5 weigh 0.4, 0.2, 0.1, 0.05, 0.05; t6..t10 nothing; a [MASK] 0.01), so
the full input has p1 = 0.9. The attribution ranks t1 > t2 > ... > t10.
"""

from __future__ import annotations

import math

import pytest

import numpy as np

from contrastcat.deletion.plan import step_counts
from contrastcat.evaluation.curves import CurveTally, EvalSettings, Inputs
from contrastcat.evaluation.kendall import kendall_confidence, kendall_tau_b
from contrastcat.usecases.evaluate_records import kendall_for_records, perturbation_curves

from ..helpers import CLS, MASK, SEP, record, stub_predict


def curves(steps="paper", perturb="delete", records=None, **settings):
    return perturbation_curves(
        records or [record()], stub_predict,
        EvalSettings(steps=steps, perturb=perturb, **settings), ("neg", "pos"), mask_id=MASK,
    ).curves


def test_step_counts_by_hand():
    assert step_counts(12, 10, "paper") == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert step_counts(7, 5, "paper") == [0, 1, 2, 2, 2, 3, 4, 4, 4]  # halves to even: 0.5, 1.5, 2.5, 3.5, 4.5
    assert step_counts(12, 10, "reference") == [1, 3, 4, 5, 7, 8, 9, 11, 12]


def test_morf_delete_paper_steps():
    morf = curves()["morf"]
    # Removing t1, t1-t2, ... leaves p1 = 0.5, 0.3, 0.2, 0.15, 0.1, then 0.1.
    assert morf.aopc == pytest.approx([0.4, 0.6, 0.7, 0.75, 0.8, 0.8, 0.8, 0.8, 0.8])
    assert morf.aopc_mean == pytest.approx(6.45 / 9)
    expected = [math.log(p / 0.9) for p in (0.5, 0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1)]
    assert morf.lodds == pytest.approx(expected)


def test_lerf_delete_paper_steps():
    lerf = curves()["lerf"]
    # Removing t10, t9, ... first: nothing changes until t5 goes at step 6.
    assert lerf.aopc == pytest.approx([0, 0, 0, 0, 0, 0.05, 0.1, 0.2, 0.4])
    assert lerf.lodds == pytest.approx([0, 0, 0, 0, 0] + [math.log(p / 0.9) for p in (0.85, 0.8, 0.7, 0.5)])


def test_reference_steps_count_special_tokens_and_meet_at_the_end():
    found = curves(steps="reference")
    # counts 1, 3, 4, 5, 7, 8, 9, 11, 12 of T = 12; at most the 10 non-special tokens go.
    assert found["morf"].aopc == pytest.approx([0.4, 0.7, 0.75, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8])
    assert found["lerf"].aopc == pytest.approx([0, 0, 0, 0, 0.1, 0.2, 0.4, 0.8, 0.8])


def test_mask_perturbation():
    morf = curves(perturb="mask")["morf"]
    # Each [MASK] adds 0.01: after k masks p1 = (delete value) + 0.01 k.
    assert morf.aopc == pytest.approx([0.39, 0.58, 0.67, 0.71, 0.75, 0.74, 0.73, 0.72, 0.71])


def test_ties_broken_by_position():
    flat = [0.0] + [1.0] * 10 + [0.0]  # all tied: MoRF removes t1, t2, ... in position order
    assert curves(records=[record(flat)])["morf"].aopc == pytest.approx([0.4, 0.6, 0.7, 0.75, 0.8, 0.8, 0.8, 0.8, 0.8])
    # LeRF on the same ties also goes by position, so it equals MoRF here.
    assert curves(records=[record(flat)])["lerf"].aopc == pytest.approx([0.4, 0.6, 0.7, 0.75, 0.8, 0.8, 0.8, 0.8, 0.8])


def test_mean_over_inputs_and_short_inputs_skipped():
    reversed_scores = [0.5] + [i / 10 for i in range(10)] + [0.5]  # ranks t10 first: MoRF = the LeRF curve
    short = record(token_ids=[CLS, 10, SEP], tokens=["a"] * 3, scores=[0, 1, 0], special=[True, False, True], offsets=[[0, 0]] * 3)
    report = perturbation_curves(
        [record(), record(reversed_scores, id=2), short], stub_predict, EvalSettings(), ("neg", "pos"), MASK
    )
    assert report.evaluated == 2 and report.skipped_short == 1
    best = [0.4, 0.6, 0.7, 0.75, 0.8, 0.8, 0.8, 0.8, 0.8]
    worst = [0, 0, 0, 0, 0, 0.05, 0.1, 0.2, 0.4]
    assert report.curves["morf"].aopc == pytest.approx([(a + b) / 2 for a, b in zip(best, worst)])


def test_target_gold_uses_the_label():
    morf = curves(target="gold", records=[record(label=0)])["morf"]
    # p0 = 1 - p1 rises as tokens go: AOPC for class 0 is the negative of class 1's.
    assert morf.aopc == pytest.approx([-0.4, -0.6, -0.7, -0.75, -0.8, -0.8, -0.8, -0.8, -0.8])


def test_kendall_tau_by_hand():
    # P^c = [1, 2, 3, 0], P^ĉ = [0, 2, 3, 1]: 5 concordant, 1 discordant pair.
    found = kendall_confidence([[0.1, 0.9, 0.5, 0.3]], [[0.9, 0.1, 0.5, 0.3]])
    assert found.tau_index == pytest.approx(4 / 6)
    assert found.tau_scores == pytest.approx(-4 / 6)  # 1 concordant, 5 discordant
    assert not found.passes
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))  # τ-b with a tie


def test_kendall_uses_alternative_class():
    asked = []

    def explain_for(records, targets):
        asked.extend(targets)
        return [list(reversed(r.scores)) for r in records]

    distinct = [i / 11 for i in range(12)]
    result = kendall_for_records([record(distinct, target=1), record(distinct, target=2)], 3, explain_for)
    assert asked == [2, 0]  # (c + 1) mod C
    # Reversed scores reverse the ranking: P^ĉ is P^c backwards, τ = -1 on both.
    assert result.tau_index == pytest.approx(-1.0)
    assert result.tau_scores == pytest.approx(-1.0)
    assert result.inputs == 2 and result.passes


def test_paper_steps_keep_exact_halves():
    # 0.7 * 45 in floating point is 31.4999...; the exact 31.5 rounds to even, 32.
    assert step_counts(47, 45, "paper") == [4, 9, 14, 18, 22, 27, 32, 36, 40]


def test_the_curves_take_columns_and_a_function_worked_by_hand():
    """No record, no model: ten token ids, a map that puts id 5 first, and a forward function
    whose class 1 has probability 0.9 while id 5 is in the input and 0.3 once it is gone.
    MoRF deletes id 5 at every step: AOPC 0.6 and log-odds log(1/3) at each of the 9 steps.
    LeRF keeps it to the end (9 of 10 tokens deleted at 90%): 0 everywhere. The same input twice
    and a too-short one are counted, not scored; the target is the predicted class, 1."""

    def predict(batch):
        return np.array([[0.1, 0.9] if 5 in ids else [0.7, 0.3] for ids in batch])

    ids = [1, 5, 2, 3, 4, 6, 7, 8, 9, 10]
    scores = [0.1, 1.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    inputs = Inputs(["a", "a", "b"], [0, 0, 1], [ids, ids, ids[:4]], [scores, scores, scores[:4]],
                    [[False] * 10, [False] * 10, [False] * 4], [False, False, False])
    tally = CurveTally("m", EvalSettings())
    chosen = tally.evaluable(inputs)
    assert chosen.positions == [0] and chosen.keys == ["a"]
    tally.add(chosen, predict)
    report = tally.finish()
    assert (report.evaluated, report.skipped_duplicates, report.skipped_short) == (1, 1, 1)
    assert report.curves["morf"].aopc == pytest.approx([0.6] * 9)
    assert report.curves["morf"].lodds == pytest.approx([math.log(0.3 / 0.9)] * 9)
    assert report.curves["lerf"].aopc == pytest.approx([0.0] * 9)
    tally = CurveTally("m", EvalSettings())
    tally.add(chosen, predict, targets=[0])  # scored by class 0: 0.1 -> 0.7 once id 5 is gone
    assert tally.finish().curves["morf"].aopc == pytest.approx([0.1 - 0.7] * 9)
