"""The statistics summarize reports, against hand-worked values and simulation."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.evaluation.stats import BootstrapSettings, mean_interval
from contrastcat.evaluation.word_stats import (
    BLOCK, STRIP, base_excess, corrected_level, paired_excess, poisson_weights, replicate_interval, wilson,
)


def test_wilson_by_hand():
    # 8 of 10 at 95%: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964
    interval = wilson(8, 10, 0.95)
    assert interval.low == pytest.approx(0.49016, abs=1e-5) and interval.high == pytest.approx(0.94332, abs=1e-5)


def test_paired_excess_without_correlation_is_newcombes_hybrid():
    # a table whose phi is 0 (a*d == b*c): the paired interval is the independent hybrid's, whose
    # ends are the difference minus/plus the root of the squared Wilson distances.
    both, predicted_only, labelled_only, neither = 4, 4, 2, 2
    count = both + predicted_only + labelled_only + neither
    rate, support = 8 / 12, 6 / 12
    one, two = wilson(8, 12, 0.95), wilson(6, 12, 0.95)
    low = rate - support - np.hypot(rate - one.low, two.high - support)
    high = rate - support + np.hypot(one.high - rate, support - two.low)
    found = paired_excess(both, predicted_only, labelled_only, count, 0.95)
    assert found.value == pytest.approx(rate - support)
    assert (found.interval.low, found.interval.high) == pytest.approx((low, high))


def test_paired_excess_covers_the_true_difference():
    """Simulated paired tables (the model and the labels agree on most inputs): the 95% interval
    holds the true difference in about 95% of them (Newcombe reports 0.93 to 0.97 for method 10)."""
    rng = np.random.default_rng(0)
    cells = np.array([0.3, 0.15, 0.05, 0.5])  # both, predicted only, labelled only, neither
    truth = cells[1] - cells[2]
    held = 0
    trials = 2000
    for _ in range(trials):
        a, b, c, _d = rng.multinomial(60, cells)
        interval = paired_excess(int(a), int(b), int(c), 60, 0.95).interval
        held += interval.low <= truth <= interval.high
    assert 0.93 <= held / trials <= 0.98


def test_base_excess_and_the_corrected_level():
    found = base_excess(30, 40, 0.5, 0.95)
    assert found.value == pytest.approx(0.25)
    assert found.interval.low == pytest.approx(wilson(30, 40, 0.95).low - 0.5)
    assert corrected_level(0.95, 100) == pytest.approx(0.9995)


def test_the_poisson_bootstrap_agrees_with_the_plain_one():
    """The streaming (Poisson) bootstrap of a mean gives the interval the plain bootstrap gives,
    within the resampling noise."""
    rng = np.random.default_rng(1)
    values = rng.normal(0.3, 0.2, size=300)
    settings = BootstrapSettings(4000, 0.95, 0)
    weights = np.hstack([poisson_weights(0, 0, strip) for strip in range(4)])[: len(values)].astype(np.float64)
    streamed = replicate_interval(weights.T @ values, weights.sum(axis=0), len(values), settings)
    plain = mean_interval(values, settings)
    assert streamed.low == pytest.approx(plain.low, abs=0.006) and streamed.high == pytest.approx(plain.high, abs=0.006)


def test_weights_depend_on_the_seed_and_block_only():
    assert np.array_equal(poisson_weights(3, 7, 1), poisson_weights(3, 7, 1))
    assert not np.array_equal(poisson_weights(3, 7, 1), poisson_weights(4, 7, 1))
    assert not np.array_equal(poisson_weights(3, 7, 1), poisson_weights(3, 7, 2))
    assert poisson_weights(0, 0, 0).shape == (BLOCK, STRIP)


def test_too_few_inputs_give_no_interval():
    settings = BootstrapSettings(1000, 0.95, 0)
    assert replicate_interval(np.ones(1000), np.ones(1000), 5, settings) is None
