"""A lower precision proposes, full precision decides: the maps the deletion test keeps with
probabilities off by at most a stated bound, each undecided input tested again exactly, are the
maps a test of exact probabilities keeps (the oracle: :func:`refine` on the exact ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from contrastcat.deletion.refine import (
    RHO_RULES, Proposed, RefineItem, RefineSettings, decided, measured_bound, refine, refine_proposed, score_error,
    threshold_error,
)

WEIGHTS = np.random.default_rng(7).normal(size=200)


def exact(sequences):
    """A 3-class model of the tokens left: logits from the mean of the tokens' weights."""
    means = np.array([WEIGHTS[list(ids)].mean() if len(ids) else 0.0 for ids in sequences])
    logits = np.stack([3.0 * means, np.full_like(means, 0.5), -3.0 * means], axis=1)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def off_by(bound):
    """``exact``'s probabilities each moved by up to ``bound``, the same way for the same sequence
    (as a lower precision is: deterministic, unknown in sign)."""
    def low(sequences):
        found = exact(sequences)
        # A hash of the sequence, spread over [-1, 1) per class (a tuple of ints hashes alike in every run).
        keys = np.array([hash(tuple(ids)) % 2**32 for ids in sequences], dtype=np.uint64)
        for column, odd in enumerate((2654435761, 2246822519, 3266489917)):
            found[:, column] += bound * (((keys * np.uint64(odd)) % np.uint64(2**32)) / 2**31 - 1.0)
        return found
    return low


def items(count=60, maps=30, seed=0):
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(count):
        length = int(rng.integers(8, 24))
        ids = tuple(int(i) for i in rng.integers(5, 200, size=length))
        special = tuple([True] + [False] * (length - 2) + [True])
        found.append(RefineItem(ids, special, 0, rng.normal(size=(maps, length))))
    return found


@pytest.mark.parametrize("settings", [
    RefineSettings(), RefineSettings(rho="mean"), RefineSettings(rho="mean-std"), RefineSettings(score="morf-lerf"),
    RefineSettings(keep=3), RefineSettings(steps=(2, 5)),
])
def test_the_maps_kept_are_the_exact_tests(settings):
    bound = 4e-3  # near bfloat16's error on a probability
    tested = items(count=100)
    oracle = refine(tested, exact, settings)
    proposed, again = refine_proposed(tested, Proposed(off_by(bound), exact, bound), settings)
    assert [found.kept.tolist() for found in proposed] == [found.kept.tolist() for found in oracle]
    for found, oracle_found in zip(proposed, oracle):
        np.testing.assert_array_equal(found.scores, oracle_found.scores)  # the same maps averaged: the same bytes
    # The proposal alone keeps other maps somewhere: else this test would show nothing.
    alone = [found.kept.tolist() for found in refine(tested, off_by(bound), settings)]
    assert alone != [found.kept.tolist() for found in oracle]
    assert again > 0


@pytest.mark.parametrize("settings", [RefineSettings(), RefineSettings(keep=3)])
def test_inputs_the_error_cannot_change_are_not_tested_again(settings):
    """Where every map's score is far enough from the threshold, the proposal decides alone. (With
    the worst-case bound, most inputs of this toy are tested again.)"""
    tested = items(count=100)
    proposed, again = refine_proposed(tested, Proposed(off_by(1e-3), exact, 1e-3), settings)
    assert 0 < again < len(tested)
    assert [found.kept.tolist() for found in proposed] == [found.kept.tolist() for found in refine(tested, exact, settings)]


def test_a_bound_stated_too_small_is_what_breaks_it():
    """The bound is what makes it exact: stated far below the real error, other maps are kept."""
    tested = items(count=120, seed=1)
    oracle = [found.kept.tolist() for found in refine(tested, exact)]
    proposed, _ = refine_proposed(tested, Proposed(off_by(1e-2), exact, 1e-5))
    assert [found.kept.tolist() for found in proposed] != oracle


def test_log_odds_has_no_bound_from_probabilities_every_input_is_tested_exactly():
    settings = RefineSettings(measure="log-odds")
    assert score_error(settings, 1e-3) == float("inf")
    tested = items(count=10)
    _, again = refine_proposed(tested, Proposed(off_by(1e-3), exact, 1e-3), settings)
    assert again == len(tested)


def test_decided_by_hand():
    # rho mean+std of [0, 0, 0, 1]: 0.25 + 0.433 = 0.683; error 0.01: margin 0.01 + 0.02.
    scores = np.array([0.0, 0.0, 0.0, 1.0])
    assert decided(scores, RefineSettings(), 0.01)
    assert not decided(scores, RefineSettings(), 0.12)  # 1.0 - 0.683 = 0.317 < 0.12 + 0.24
    assert not decided(np.array([0.0, 1.0]), RefineSettings(), 1e-6)  # mean+std of two is the larger: a tie
    assert decided(np.array([0.9, 0.5, 0.1]), RefineSettings(keep=1), 0.1)  # 0.9 - 0.5 > 0.2
    assert not decided(np.array([0.9, 0.75, 0.1]), RefineSettings(keep=1), 0.1)
    assert not decided(np.array([0.9, np.nan]), RefineSettings(), 0.0)


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=40), st.floats(0, 0.1), st.integers(0, 2**32 - 1),
       st.sampled_from(sorted(RHO_RULES)))
def test_rho_moves_at_most_its_stated_error(scores, error, seed, rho):
    before = np.array(scores)
    moved = before + np.random.default_rng(seed).uniform(-error, error, size=len(before))
    assert abs(RHO_RULES[rho](moved) - RHO_RULES[rho](before)) <= threshold_error(rho, error) + 1e-12


def test_measured_bound_is_the_largest_difference_times_the_safety():
    sequences = [item.ids for item in items(count=5)]
    found = measured_bound(sequences, off_by(1e-3), exact, safety=4.0)
    largest = np.abs(off_by(1e-3)(sequences) - exact(sequences)).max()
    assert found == pytest.approx(4.0 * largest) and 0 < largest <= 1e-3
