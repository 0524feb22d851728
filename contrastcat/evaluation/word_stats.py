"""Statistics of words across a dataset, from counts and running sums: what ``summarize`` reports.

- A word's mean attribution gets a **Poisson bootstrap** interval over inputs (Chamandy, Muralidharan,
  Najmi and Naidu, "Estimating uncertainty for massive data streams", Google, 2012): each input
  is drawn Poisson(1) times in each resample instead of n draws with replacement, so the resamples
  are built as the inputs stream by, one running sum per word and resample, in memory that does
  not grow with the number of inputs. An input's weights depend only on the seed and where it is
  in the file (:func:`poisson_weights`), so the same file gives the same interval. Its ends are
  taken at the expanded level of :mod:`contrastcat.evaluation.stats` (too narrow otherwise for
  few inputs).
- How much more often the model predicts a class when a word is present than the data supports:
  with gold labels, the paired difference of the two proportions among the inputs holding the
  word (predicted as the class, labelled as it), with Newcombe's interval for paired proportions
  (method 10 of Newcombe, "Improved confidence intervals for the difference between binomial
  proportions based on paired data", Statistics in Medicine 17, 1998); without them, the share
  predicted as the class with its Wilson interval, minus the class's share of all inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .stats import BootstrapSettings, Interval, fewest_inputs, normal_quantile, percentile_interval, resolvable_level

# Inputs whose Poisson weights one generator draws, and how many resamples: an input's weights
# are those of its block's generator for each strip of resamples (seeded by the seed, the block
# and the strip), whatever else is read with it and however many resamples are asked for (2,000
# resamples are the first 1,000's and 1,000 more).
BLOCK = 1024
STRIP = 1000


def poisson_weights(seed: int, block: int, strip: int) -> np.ndarray:
    """[BLOCK, STRIP] Poisson(1) draws: row i weighs the input at place ``block * BLOCK + i`` in
    resamples ``strip * STRIP`` to ``(strip + 1) * STRIP``."""
    return np.random.default_rng([seed, block, strip]).poisson(1.0, size=(BLOCK, STRIP)).astype(np.float32)


def replicate_interval(sums: np.ndarray, weights: np.ndarray, count: int, settings: BootstrapSettings) -> Interval | None:
    """The interval of a mean of ``count`` inputs from its resamples' weighted ``sums`` and total
    ``weights``; a resample that drew no input is left out. None where the inputs are too few for
    ``settings.level`` (:func:`fewest_inputs`) or the resamples cannot resolve it."""
    if settings.resamples == 0 or count < fewest_inputs(settings.level):
        return None
    level = resolvable_level(settings, count)
    drawn = weights > 0
    if level is None or not drawn.any():
        return None
    return percentile_interval(sums[drawn] / weights[drawn], level)[0]


def wilson(successes: int, count: int, level: float) -> Interval:
    """Wilson's score interval of a proportion."""
    z = normal_quantile(level)
    share = successes / count
    centre = (share + z * z / (2 * count)) / (1 + z * z / count)
    half = z / (1 + z * z / count) * math.sqrt(share * (1 - share) / count + z * z / (4 * count * count))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Excess:
    """How much more often the model predicts a class among the inputs holding a word than the data
    supports: ``rate`` (the share predicted as the class) − ``support`` (the share labelled as it,
    or the class's share of all inputs where nothing is labelled), with its interval."""

    rate: float
    support: float
    interval: Interval
    count: int  # the inputs compared (holding the word; with gold labels, those labelled)

    @property
    def value(self) -> float:
        return self.rate - self.support


def paired_excess(both: int, predicted_only: int, labelled_only: int, count: int, level: float) -> Excess:
    """Newcombe's method 10 for the paired difference p(predicted) − p(labelled) over ``count``
    inputs: ``both`` predicted as the class and labelled as it, ``predicted_only``,
    ``labelled_only``; the rest neither."""
    neither = count - both - predicted_only - labelled_only
    rate, support = (both + predicted_only) / count, (both + labelled_only) / count
    low1, high1 = _ends(wilson(both + predicted_only, count, level))
    low2, high2 = _ends(wilson(both + labelled_only, count, level))
    margins = (both + predicted_only) * (labelled_only + neither) * (both + labelled_only) * (predicted_only + neither)
    phi = (both * neither - predicted_only * labelled_only) / math.sqrt(margins) if margins > 0 else 0.0
    below = math.sqrt(max(0.0, (rate - low1) ** 2 - 2 * phi * (rate - low1) * (high2 - support) + (high2 - support) ** 2))
    above = math.sqrt(max(0.0, (high1 - rate) ** 2 - 2 * phi * (high1 - rate) * (support - low2) + (support - low2) ** 2))
    difference = rate - support
    # The ends hold the difference itself, however the rounding of the terms above falls.
    low, high = min(difference, max(-1.0, difference - below)), max(difference, min(1.0, difference + above))
    return Excess(rate, support, Interval(low, high), count)


def base_excess(predicted: int, count: int, base: float, level: float) -> Excess:
    """Without labels: the share predicted as the class (Wilson's interval) against the class's
    share ``base`` of all inputs, taken as known (it is of many more inputs)."""
    interval = wilson(predicted, count, level)
    return Excess(predicted / count, base, Interval(interval.low - base, interval.high - base), count)


def _ends(interval: Interval) -> tuple[float, float]:
    return interval.low, interval.high


def corrected_level(level: float, tests: int) -> float:
    """Bonferroni's level for ``tests`` intervals at once: each at 1 − (1 − level) / tests, so that
    all of them hold together at ``level`` (many words are tested; at the plain level one in
    twenty words with no association at all would be flagged)."""
    return 1.0 - (1.0 - level) / max(1, tests)
