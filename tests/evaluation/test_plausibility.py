"""Plausibility measures against hand-worked numbers and a brute-force oracle.

The oracle is written from the definitions alone: precision@k as the mean over every order the
ties allow (all permutations of the tokens, kept where the keys do not rise), average precision
by a loop over the distinct keys, the hard rationale, F1 and IOU with Python sets.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contrastcat.evaluation.plausibility import MAGNITUDE, SIGNED, plausibility


def oracle(scores, evidence, special, ranking, threshold=0.5):
    tokens = [i for i in range(len(scores)) if not special[i]]
    key = {i: scores[i] if ranking == SIGNED else abs(scores[i]) for i in tokens}
    gold = {i for i in tokens if evidence[i]}
    if not gold:
        return None
    k = len(gold)
    orders = [order for order in itertools.permutations(tokens)
              if all(key[a] >= key[b] for a, b in zip(order, order[1:]))]
    precision = sum(len(set(order[:k]) & gold) for order in orders) / len(orders) / k
    ap, recalled = 0.0, 0.0
    for level in sorted(set(key.values()), reverse=True):
        predicted = {i for i in tokens if key[i] >= level}
        recall = len(predicted & gold) / k
        ap += (recall - recalled) * len(predicted & gold) / len(predicted)
        recalled = recall
    largest = max(key.values())
    chosen = {i for i in tokens if largest > 0 and key[i] >= threshold * largest}
    f1 = 2 * len(chosen & gold) / (len(chosen) + k)
    iou = len(chosen & gold) / len(chosen | gold)
    return precision, ap, f1, iou, float(iou >= 0.5)


def measured(*arguments, **options):
    found = plausibility(*arguments, **options)
    return found.precision_at_k, found.auprc, found.token_f1, found.token_iou, found.iou_match


@pytest.mark.parametrize(("scores", "evidence", "ranking", "expected"), [
    # k = 2: the top two are one evidence token and one not; AP = ½·1 + ½·⅔.
    ([0.9, 0.1, 0.8, 0.2], [1, 0, 0, 1], SIGNED, (0.5, 0.5 + 1 / 3, 0.5, 1 / 3, 0.0)),
    # A constant map: precision@k is the evidence's base rate, every token its rationale.
    ([0.5, 0.5, 0.5, 0.5], [1, 0, 0, 0], SIGNED, (0.25, 0.25, 0.4, 0.25, 0.0)),
    # A tie across the k-th place: one slot for two tied tokens, one of them evidence (½ expected);
    # the rationale (keys ≥ 0.45) is the first three, one of them evidence: F1 2/5, IOU 1/4.
    ([0.9, 0.5, 0.5, 0.1], [0, 1, 0, 1], SIGNED, (0.25, 1 / 6 + 1 / 4, 0.4, 0.25, 0.0)),
    # Evidence against the class: missed by signed score, found by magnitude.
    ([-0.9, 0.1, 0.3], [1, 0, 0], SIGNED, (0.0, 1 / 3, 0.0, 0.0, 0.0)),
    ([-0.9, 0.1, 0.3], [1, 0, 0], MAGNITUDE, (1.0, 1.0, 1.0, 1.0, 1.0)),
    # No positive score: no rationale by signed score (F1 and IOU 0), the ranking still counts.
    ([-0.2, -0.1, -0.3], [0, 1, 0], SIGNED, (1.0, 1.0, 0.0, 0.0, 0.0)),
])
def test_hand_worked_cases(scores, evidence, ranking, expected):
    found = measured(scores, evidence, [False] * len(scores), ranking)
    assert found == pytest.approx(expected, abs=1e-12)
    assert found == pytest.approx(oracle(scores, evidence, [False] * len(scores), ranking), abs=1e-12)


def test_special_tokens_are_neither_ranked_nor_evidence():
    # [CLS] carries the largest score and an evidence span covers it: both ignored.
    scores, evidence, special = [5.0, 0.2, 0.9, 0.1, 3.0], [1, 1, 0, 0, 0], [True, False, False, False, True]
    found = measured(scores, evidence, special, SIGNED)
    # Among the three real tokens: 0.9 (no), 0.2 (evidence), 0.1 (no); k = 1.
    assert found == pytest.approx((0.0, 0.5, 0.0, 0.0, 0.0))
    assert found == pytest.approx(oracle(scores, evidence, special, SIGNED))


@pytest.mark.parametrize(("evidence", "special"), [
    ([0, 0, 0], [False] * 3),  # no evidence at all
    ([1, 0, 1], [True, False, True]),  # evidence only on special tokens
    ([1, 1, 1], [True, True, True]),  # nothing but special tokens
])
def test_an_input_without_evidence_has_no_value(evidence, special):
    assert all(math.isnan(value) for value in measured([0.3, 0.2, 0.1], evidence, special, SIGNED))


@pytest.mark.parametrize(("arguments", "options", "said"), [
    (([0.1, 0.2], [1, 0, 0]), {}, "alike in length"),
    ((0.5, 1), {}, "alike in length"),  # a number, not one per token
    (([0.1, 0.2], [1, 0]), {"ranking": "absolute"}, "ranking"),
    (([0.1, float("nan")], [1, 0]), {}, "finite"),
    (([0.1, 0.2], [2, 0]), {}, "evidence must be booleans"),
    (([0.1, 0.2], [0.3, 0]), {}, "evidence must be booleans"),
    (([0.1, 0.2], ["False", "True"]), {}, "evidence must be booleans"),
    (([0.1, 0.2], [float("nan"), 0]), {}, "evidence must be booleans"),
    (([0.1, 0.2], [1, 0], [2, 0]), {}, "special must be booleans"),
    ((["a", 0.2], [1, 0]), {}, "scores must be numbers"),
    (((x for x in (0.1, 0.2)), [1, 0]), {}, "scores must be numbers"),
    (([0.1, 0.2], [1, 0]), {"threshold": 0}, "threshold must be a number in (0, 1]"),
    (([0.1, 0.2], [1, 0]), {"threshold": -1}, "threshold"),
    (([0.1, 0.2], [1, 0]), {"threshold": 1.5}, "threshold"),
    (([0.1, 0.2], [1, 0]), {"threshold": float("nan")}, "threshold"),
    (([0.1, 0.2], [1, 0]), {"threshold": "0.5"}, "threshold"),
])
def test_arrays_that_are_not_one_flag_and_score_per_token_are_refused(arguments, options, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        plausibility(*arguments, **options)


tokens = st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n),  # ties are common
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n),
))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(case=tokens, ranking=st.sampled_from([SIGNED, MAGNITUDE]), threshold=st.sampled_from([0.25, 0.5, 1.0]))
def test_every_measure_equals_the_oracle(case, ranking, threshold):
    scores, evidence, special = case
    expected = oracle(scores, evidence, special, ranking, threshold)
    found = measured(scores, evidence, special, ranking, threshold)
    if expected is None:
        assert all(math.isnan(value) for value in found)
    else:
        assert np.allclose(found, expected, atol=1e-12), (found, expected)
