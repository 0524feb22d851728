"""Uncertainty over inputs: bootstrap intervals of means, and paired differences.

An interval is the expanded percentile bootstrap of the mean over inputs (Hesterberg, "What
teachers should know about the bootstrap", The American Statistician 69(4), 2015): ``resamples``
draws of n inputs with replacement, seeded, so the same values and settings always give the same
interval. The plain percentile interval is too narrow for few inputs (the spread of n values
resampled is that of a variance divided by n, not n − 1, and a normal quantile stands where
Student's t belongs): with no true difference, a 95% interval of 6 inputs excluded 0 in 13% of
trials instead of 5%. The expanded one takes the percentiles at the level whose normal quantile is
√(n / (n − 1)) · t(n − 1), which corrects both. A paired difference resamples the inputs two
methods share, so what both methods see alike (an input that is hard for everyone) cancels out
of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .levels import MAX_RESAMPLES, fewest_resamples, level_text


# Values gathered at once (resamples x inputs x columns): about 32 MB, whatever the number of inputs.
_DRAW_BUDGET = 4_000_000


@dataclass(frozen=True)
class BootstrapSettings:
    """How intervals are drawn; the values were checked where the command's options were read
    (``usecases.options``: 0, or MIN_RESAMPLES to MAX_RESAMPLES resamples; a level of 0.5 to 0.999)."""

    resamples: int = 1000  # 0: no intervals
    level: float = 0.95
    seed: int = 0

    def as_dict(self) -> dict:
        return {"resamples": self.resamples, "ci": self.level, "seed": self.seed}


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    @property
    def half_width(self) -> float:
        """What ``±`` shows; the interval itself need not be symmetric about the mean."""
        return (self.high - self.low) / 2

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def as_dict(self) -> dict:
        return {"low": self.low, "high": self.high}


def fewest_inputs(level: float) -> int:
    """The fewest inputs an interval at ``level`` is drawn from.

    A percentile bootstrap over n inputs cannot reach past their smallest and largest value: with
    2 inputs its 95% interval is about their min and max, and a paired difference "excludes 0"
    whenever the two share a sign, though a fair coin gives that half the time. The bound taken
    is the distribution-free one: n inputs that all agree in sign are evidence at ``level`` only
    when 2 · 0.5ⁿ ≤ 1 − level (the two-sided sign test), so 6 inputs at 95%, 8 at 99%, 2 at 50%.
    Fewer give no interval rather than one the data cannot support.
    """
    count = 2
    while 2 * 0.5**count > 1.0 - level + 1e-12:
        count += 1
    return count


def bootstrap_means(values: np.ndarray, settings: BootstrapSettings) -> np.ndarray | None:
    """[resamples, k] means of ``values`` [n, k] (or [n]) over inputs drawn with replacement;
    None without resamples or with fewer inputs than ``fewest_inputs`` (one input resampled is
    itself every time, an interval of width zero)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    count = len(values)
    if settings.resamples == 0 or count < fewest_inputs(settings.level):
        return None
    rng = np.random.default_rng(settings.seed)
    chunk = max(1, _DRAW_BUDGET // (count * values.shape[1]))
    means = []
    for first in range(0, settings.resamples, chunk):
        draws = rng.integers(0, count, size=(min(chunk, settings.resamples - first), count))
        means.append(values[draws].mean(axis=1))
    return np.concatenate(means)


def _t_central(t: float, dof: int) -> float:
    """P(|T| ≤ t) for Student's t with ``dof`` degrees of freedom (Abramowitz and Stegun 26.7.3
    and 26.7.4: a finite sum for a whole number of degrees of freedom)."""
    theta = math.atan(t / math.sqrt(dof))
    cos2, term, total = math.cos(theta) ** 2, 1.0, 1.0
    if dof % 2:  # odd
        if dof == 1:
            return 2 * theta / math.pi
        for k in range(1, (dof - 3) // 2 + 1):
            term *= cos2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    for k in range(1, (dof - 2) // 2 + 1):
        term *= cos2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


def _solve(probability, level: float) -> float:
    """x ≥ 0 with probability(x) = level, for an increasing probability of x (bisection)."""
    low, high = 0.0, 1.0
    while probability(high) < level:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if probability(middle) < level:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * high:
            break
    return high


def normal_quantile(level: float) -> float:
    """The two-sided normal quantile: z with P(|Z| ≤ z) = ``level``."""
    return _solve(lambda x: math.erf(x / math.sqrt(2)), level)


def student_t(level: float, dof: int) -> float:
    """The two-sided quantile: t with P(|T| ≤ t) = ``level``. Past 200 degrees of freedom, the
    Cornish–Fisher expansion in 1/dof about the normal quantile (error far below 1e-6 there)."""
    if dof <= 200:
        return _solve(lambda t: _t_central(t, dof), level)
    z = normal_quantile(level)
    return (z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * dof**3))


def expanded_level(level: float, count: int) -> float:
    """The percentile level that expands a ``level`` interval of the mean of ``count`` values:
    the central probability of the normal quantile √(n / (n − 1)) · t(level, n − 1)."""
    quantile = math.sqrt(count / (count - 1)) * student_t(level, count - 1)
    return math.erf(quantile / math.sqrt(2))


def percentile_interval(means: np.ndarray, level: float) -> list[Interval]:
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail], axis=0)
    return [Interval(float(a), float(b)) for a, b in zip(np.atleast_1d(low), np.atleast_1d(high))]


def resolvable_level(settings: BootstrapSettings, count: int) -> float | None:
    """The expanded level of an interval of ``count`` inputs, or None where ``settings.resamples``
    draws cannot resolve it: fewer than one resampled mean would lie beyond each end, which
    is then only the smallest or largest mean drawn (a 99.9% interval of 11 inputs at 1,000
    resamples excluded the true mean in 1.6% of trials, not 0.1%)."""
    level = expanded_level(settings.level, count)
    return level if settings.resamples >= fewest_resamples(level) else None


def why_no_interval(settings: BootstrapSettings, count: int) -> str | None:
    """Why the mean of ``count`` inputs gets no interval under ``settings``; None where it gets
    one, or where none was asked for (0 resamples)."""
    level = level_text(settings.level)
    if settings.resamples <= 0:
        return None
    if count < fewest_inputs(settings.level):
        return f"{count} input{'' if count == 1 else 's'}, fewer than the {fewest_inputs(settings.level)} a {level} interval needs"
    needed = fewest_resamples(expanded_level(settings.level, count))
    if needed > MAX_RESAMPLES:
        return f"{count} inputs need {needed} resamples for a {level} interval, more than the {MAX_RESAMPLES} allowed"
    if settings.resamples < needed:
        return f"{count} inputs need at least {needed} resamples for a {level} interval, not {settings.resamples}"
    return None


def mean_interval(values, settings: BootstrapSettings) -> Interval | None:
    """Interval of the mean of finite ``values`` (NaN, e.g. an undefined τ, left out)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    means = bootstrap_means(values, settings)
    level = None if means is None else resolvable_level(settings, len(values))
    return None if level is None else percentile_interval(means, level)[0]


def column_intervals(values: np.ndarray, settings: BootstrapSettings) -> list[Interval] | None:
    """Interval of each column's mean ([n, k] values, one draw of inputs shared by the columns)."""
    means = bootstrap_means(values, settings)
    level = None if means is None else resolvable_level(settings, len(values))
    return None if level is None else percentile_interval(means, level)


@dataclass(frozen=True)
class Difference:
    """Mean of (a − b) over the inputs both have, with its interval."""

    mean: float
    interval: Interval | None
    inputs: int

    @property
    def excludes_zero(self) -> bool | None:
        return None if self.interval is None else not self.interval.contains(0.0)

    def as_dict(self) -> dict:
        return {
            "mean": self.mean,
            "interval": None if self.interval is None else self.interval.as_dict(),
            "inputs": self.inputs,
            "excludes_zero": self.excludes_zero,
        }


def paired_difference(a: dict[str, float], b: dict[str, float], settings: BootstrapSettings) -> Difference | None:
    """(a − b) over the keys both hold (an input and its target), paired; None when they share none."""
    shared = [key for key in a if key in b and np.isfinite(a[key]) and np.isfinite(b[key])]
    if not shared:
        return None
    differences = np.array([a[key] - b[key] for key in shared])
    return Difference(float(differences.mean()), mean_interval(differences, settings), len(shared))
