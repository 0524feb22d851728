"""A lower precision proposes, full precision decides: the maps the deletion test keeps when a
lower precision's logits are off by at most a stated margin, the rows of every map whose side of
the threshold is open predicted again exactly, are the maps a test of exact probabilities keeps
(the oracle: :func:`refine` on the exact ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from contrastcat.deletion.refine import (
    RHO_RULES, Proposed, RefineItem, RefineSettings, _threshold_moves, log_odds, logit_margin, refine,
    refine_proposed, row_errors,
)

WEIGHTS = np.random.default_rng(7).normal(size=200)


def logits_of(sequences):
    """A 3-class model of the tokens left: logits from the mean of the tokens' weights."""
    means = np.array([WEIGHTS[list(ids)].mean() if len(ids) else 0.0 for ids in sequences])
    return np.stack([3.0 * means, np.full_like(means, 0.5), -3.0 * means], axis=1)


def softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def exact(sequences):
    return softmax(logits_of(sequences))


def off_by(margin):
    """``exact``'s logits each moved by up to half ``margin`` (so a difference of two by up to
    ``margin``), the same way for the same sequence (as a lower precision is: deterministic,
    unknown in sign)."""
    def low(sequences):
        logits = logits_of(sequences)
        # A hash of the sequence, spread over [-1, 1) per class (a tuple of ints hashes alike in every run).
        keys = np.array([hash(tuple(ids)) % 2**32 for ids in sequences], dtype=np.uint64)
        for column, odd in enumerate((2654435761, 2246822519, 3266489917)):
            logits[:, column] += margin / 2 * (((keys * np.uint64(odd)) % np.uint64(2**32)) / 2**31 - 1.0)
        return softmax(logits)
    return low


def items(count=60, maps=30, seed=0):
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(count):
        length = int(rng.integers(8, 24))
        ids = tuple(int(i) for i in rng.integers(5, 200, size=length))
        special = tuple([True] + [False] * (length - 2) + [True])
        found.append(RefineItem(ids, special, int(rng.integers(0, 3)), rng.normal(size=(maps, length))))
    return found


SETTINGS = [
    RefineSettings(), RefineSettings(rho="mean"), RefineSettings(rho="mean-std"), RefineSettings(score="morf-lerf"),
    RefineSettings(keep=3), RefineSettings(steps=(2, 5)), RefineSettings(measure="log-odds"),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_the_maps_kept_are_the_exact_tests(settings):
    margin = 0.1  # near bfloat16's move of a logit difference
    tested = items(count=100)
    oracle = refine(tested, exact, settings)
    proposed, checked = refine_proposed(tested, Proposed(off_by(margin), exact, margin), settings)
    assert [found.kept.tolist() for found in proposed] == [found.kept.tolist() for found in oracle]
    for found, oracle_found in zip(proposed, oracle):
        np.testing.assert_array_equal(found.scores, oracle_found.scores)  # the same maps averaged: the same bytes
    # The proposal alone keeps other maps somewhere: else this test would show nothing.
    alone = [found.kept.tolist() for found in refine(tested, off_by(margin), settings)]
    assert alone != [found.kept.tolist() for found in oracle]
    # Some rows are predicted again, not all: the proposal decided the rest.
    assert 0 < checked.again < checked.rows


def test_a_measured_score_bound_decides_more_and_keeps_the_same_maps():
    margin, tested = 0.1, items(count=100, seed=3)
    low = off_by(margin)
    # The bound of a map's score, measured on these very maps (so it holds): its largest move.
    moves = [np.abs(a - b).max() for a, b in zip(_scores_with_exact_base(tested, low), _scores_with_exact_base(tested, exact))]
    oracle = [found.kept.tolist() for found in refine(tested, exact)]
    plain, plain_checked = refine_proposed(tested, Proposed(low, exact, margin))
    bounded, bounded_checked = refine_proposed(tested, Proposed(low, exact, margin, score_bound=max(moves)))
    assert [found.kept.tolist() for found in bounded] == [found.kept.tolist() for found in plain] == oracle
    assert bounded_checked.again < plain_checked.again


def _scores_with_exact_base(tested, predict):
    """Each map's MoRF score from ``predict``'s steps and the exact unperturbed probability."""
    from contrastcat.deletion.refine import _measured, _planned, _scores

    plan, tests = _planned(tested, RefineSettings())
    probs, truth = predict(plan.sequences), exact(plan.sequences)
    found = []
    for item, test in zip(tested, tests):
        values = _measured(probs, item.target, RefineSettings(), False)
        values[test.own] = truth[test.own, item.target]
        found.append(_scores(test, values))
    return found


def test_a_margin_stated_too_small_is_what_breaks_it():
    """The margin is what makes it exact: stated far below the real move, other maps are kept."""
    tested = items(count=120, seed=1)
    oracle = [found.kept.tolist() for found in refine(tested, exact)]
    proposed, _ = refine_proposed(tested, Proposed(off_by(0.3), exact, 1e-4))
    assert [found.kept.tolist() for found in proposed] != oracle


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-12, 12), min_size=2, max_size=5), st.floats(0, 0.5), st.integers(0, 2**32 - 1),
       st.booleans())
def test_a_rows_value_lies_within_its_stated_error(logits, margin, seed, multi_label):
    """Logit differences (a multi-label model's logits) moved by at most ``margin``: the target's
    probability and log-odds within :func:`row_errors` of the moved ones."""
    exact_logits = np.array([logits])
    rng = np.random.default_rng(seed)
    moved = exact_logits + rng.uniform(-margin / (1 if multi_label else 2), margin / (1 if multi_label else 2),
                                       size=exact_logits.shape)
    to_probs = (lambda z: 1 / (1 + np.exp(-z))) if multi_label else softmax
    truth, low = to_probs(exact_logits), to_probs(moved)
    for target in range(len(logits)):
        p_error = row_errors(low[:, target], margin, "probability")
        assert abs(low[0, target] - truth[0, target]) <= p_error[0] + 1e-12
        odds_low, odds_truth = log_odds(low, target, multi_label), log_odds(truth, target, multi_label)
        if np.all(np.abs(odds_truth) < 30):  # where float64 still tells 1 - p from 0
            assert abs(odds_low[0] - odds_truth[0]) <= row_errors(odds_low, margin, "log-odds")[0] + 1e-9


def test_row_errors_by_hand():
    # p = 0.5, margin ln 3: between 0.5 / (0.5 + 1.5) = 0.25 and 0.5 / (0.5 + 0.5/3) = 0.75.
    assert row_errors(np.array([0.5]), np.log(3.0), "probability")[0] == pytest.approx(0.25 + 1e-6, abs=1e-7)
    # Certain rows barely move: from half a float32 unit off 1 (or 0), e^0.5 times that, 9.8e-8.
    assert row_errors(np.array([1.0, 0.0]), 0.5, "probability").tolist() == pytest.approx([1.098e-6] * 2, rel=1e-3)
    # A log-odds by the margin itself; a saturated one, or a NaN, by no margin.
    assert row_errors(np.array([2.0]), 0.5, "log-odds")[0] == pytest.approx(0.5 + 3e-6)
    assert row_errors(np.array([36.0, -40.0, np.nan]), 0.5, "log-odds").tolist() == [np.inf] * 3


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=40), st.floats(0, 0.2), st.integers(0, 2**32 - 1),
       st.sampled_from(sorted(RHO_RULES)), st.booleans())
def test_rho_moves_within_its_stated_moves(scores, largest, seed, rho, vertex):
    """Each score moved by at most its own error (inside the box, or to a corner of it, where a
    convex std moves most): rho within [-down, +up] of where it was."""
    rng = np.random.default_rng(seed)
    before = np.array(scores)
    errors = rng.uniform(0, largest, size=len(before))
    shift = rng.choice([-1.0, 1.0], size=len(before)) if vertex else rng.uniform(-1, 1, size=len(before))
    moved = before + errors * shift
    up, down = _threshold_moves(before, errors, rho)
    change = RHO_RULES[rho](moved) - RHO_RULES[rho](before)
    assert -down - 1e-12 <= change <= up + 1e-12


def test_threshold_moves_by_hand():
    # Scores [0, 1], errors 0.1 each: z = [-1, 1]; mean+std moves sum e |1 + z| / 2 = 0.1 linearly,
    # plus 0.01 / (2 * 0.5) = 0.01 upward; the crude bound 0.1 + 0.1 = 0.2 is larger.
    up, down = _threshold_moves(np.array([0.0, 1.0]), np.array([0.1, 0.1]), "mean+std")
    assert (up, down) == pytest.approx((0.11, 0.1))
    assert _threshold_moves(np.array([0.0, 1.0]), np.array([0.1, 0.3]), "mean") == pytest.approx((0.2, 0.2))


def test_logit_margin_reads_the_move_of_logit_differences():
    # Logits [0, 1, 3] moved to [0.1, 1, 2.8]: differences move by at most 0.3 (z_0 - z_2).
    truth = softmax(np.array([[0.0, 1.0, 3.0]]))
    low = softmax(np.array([[0.1, 1.0, 2.8]]))
    assert logit_margin(low, truth) == pytest.approx(0.3)
    # Multi-label: each label's own logit; 0.2 and 0.5 moved by 0.05 and 0.25.
    assert logit_margin(_sigmoid([[0.25, 0.75]]), _sigmoid([[0.2, 0.5]]), multi_label=True) == pytest.approx(0.25)


def _sigmoid(z):
    return 1 / (1 + np.exp(-np.asarray(z, dtype=np.float64)))


def test_saturated_log_odds_are_decided_exactly():
    """A multi-label logit past about 36 rounds its sigmoid to 1 in float64, and log-odds clamps:
    a move of 0.09 across that point moves the log-odds by hundreds, which no margin bounds. Such
    rows are predicted again, and the maps kept are refine's."""
    def logits(sequences):
        return np.array([[37.0 - 0.1 * sum(token == 1 for token in ids)] for ids in sequences])

    exact_ = lambda sequences: _sigmoid(logits(sequences))  # noqa: E731
    low = lambda sequences: _sigmoid(logits(sequences) - 0.09)  # noqa: E731
    maps = np.array([[8, 6, 5, 2, 3, 0, 0, 0, 1, 8], [6, 9, 5, 6, 9, 7, 6, 5, 5, 9], [2, 8, 6, 0, 3, 8, 5, 0, 7, 7]], float)
    item = RefineItem((1, 1, 2, 3, 1, 2, 3, 2, 3, 2), (False,) * 10, 0, maps)
    settings = RefineSettings(measure="log-odds")
    (oracle,) = refine([item], exact_, settings, multi_label=True)
    (found,), _ = refine_proposed([item], Proposed(low, exact_, 0.1), settings, multi_label=True)
    assert found.kept.tolist() == oracle.kept.tolist()
    (alone,) = refine([item], low, settings, multi_label=True)
    assert alone.kept.tolist() != oracle.kept.tolist()  # the case bites


@pytest.mark.parametrize("settings", [RefineSettings(keep=1), RefineSettings(keep=3), RefineSettings()])
def test_nan_probabilities_keep_what_refine_keeps(settings):
    """Probabilities that are NaN (a ProbabilityFn of the caller's; the tool's own refuses them)
    give the same kept maps as refine, not maps declared kept because NaN compares false."""
    def with_nan(predict):
        def found(sequences):
            probs = predict(sequences)
            probs[[sum(ids) % 7 == 0 for ids in sequences]] = np.nan
            return probs
        return found

    tested = items(count=30, maps=8, seed=5)
    oracle = [found.kept.tolist() for found in refine(tested, with_nan(exact), settings)]
    proposed, _ = refine_proposed(tested, Proposed(with_nan(off_by(0.1)), with_nan(exact), 0.1), settings)
    assert [found.kept.tolist() for found in proposed] == oracle


def test_a_probability_rounded_to_one_still_has_an_interval():
    """A float32 softmax gives 1.0 for 1 - 1.4e-5 and above once logits are far apart: the
    interval starts half a unit in the last place below 1, so a wide margin still covers it."""
    truth = softmax(np.array([[0.0, 11.18]]))[0, 1]  # 0.999986
    assert abs(1.0 - truth) <= row_errors(np.array([1.0]), 8.0, "probability")[0]
