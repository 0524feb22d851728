"""Which method to show, from measures a comparison made: the most faithful one where the
numbers single it out, the cheapest one they say is nearly as faithful, and "no clear winner"
where the paired intervals do not separate the leaders.

Judged only on protocols no method's own selection was fitted to (the caller leaves the fitted
ones out), from each method's per-input values, paired by input: method a *beats* b on a
protocol where the interval of their paired difference lies wholly on a's better side. a *wins
its contest* with b where it beats b on more protocols than b beats it. The most faithful
method is the one that wins its contest with every other; where none does, the leaders are the
methods losing the fewest contests, and no single one is picked. A cheaper method is *within
the margin* of a leader where, on every protocol, the worse end of its paired interval is no
further below the leader than ``margin`` times the distance from chance to the leader (the
baseline's mean to the leader's): a scale every protocol has, where the leader's own value
does not give one (sufficiency and LeRF AOPC sit near 0, and go below it). Without the baseline
compared, the leader's mean (in absolute value) is the scale.
Arrays in, a :class:`Recommendation` out: no records, no models.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..arguments import listed
from .stats import BootstrapSettings, Difference, paired_difference

DEFAULT_MARGIN = 0.1  # a cheaper method may fall this fraction of the way from the leader to chance below it


@dataclass(frozen=True)
class Protocol:
    """One measure of faithfulness (a column), and which way is better."""

    name: str
    higher_is_better: bool


@dataclass(frozen=True)
class Candidate:
    """One method as measured: its cost and, per protocol name, its value on each input (keyed
    by input, so two methods are paired on the inputs both have)."""

    method: str
    seconds_per_input: float
    values: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Recommendation:
    best: str | None  # the method that wins its contest with every other; None: no clear winner
    leaders: tuple[str, ...]  # the best alone, or the methods losing the fewest contests (by mean rank)
    cheap: str | None  # the cheapest method within the margin of the leader it is compared with
    cheap_of: str | None  # that leader
    margin: float
    ranking: tuple[str, ...]  # every method by its mean rank over the protocols (best first)
    not_above_random: tuple[str, ...]  # methods that do not win their contest with "random"
    wins: dict[str, tuple[str, ...]]  # each method -> the methods it wins its contest with (by ranking)
    inputs: int  # inputs every method was measured on
    paragraph: str


def recommend(
    candidates: Sequence[Candidate],
    protocols: Sequence[Protocol],
    bootstrap: BootstrapSettings = BootstrapSettings(),
    margin: float = DEFAULT_MARGIN,
    baseline: str = "random",
    fails_sanity: Sequence[str] = (),
) -> Recommendation:
    """The recommendation ``candidates`` measured on ``protocols`` support (module docstring).
    ``fails_sanity``: methods whose maps barely change when the model is destroyed (model
    randomisation), named in the paragraph as such."""
    if len(candidates) < 2 or not protocols:
        raise ValueError("a recommendation compares at least two methods on at least one protocol")
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be at least 0 and below 1, got {margin!r}")
    names = [c.method for c in candidates]
    if len(set(names)) != len(names):
        raise ValueError("each method is measured once")
    by_name = {c.method: c for c in candidates}
    differences = {
        (a, b, p.name): _oriented(by_name[a], by_name[b], p, bootstrap)
        for a, b in itertools.permutations(names, 2) for p in protocols
    }

    # Intervals may be missing though resamples were asked for (too few inputs for the level):
    # then, as with none asked for, nothing can be shown ahead.
    intervals = any(d is not None and d.interval is not None for d in differences.values())

    def beats(a: str, b: str) -> int:
        return sum(_beats(differences[a, b, p.name]) for p in protocols)

    wins = {a: {b for b in names if b != a and beats(a, b) > beats(b, a)} for a in names}
    losses = {a: {b for b in names if a in wins[b]} for a in names}
    ranking = _ranking(candidates, protocols)
    best = next((a for a in names if len(wins[a]) == len(names) - 1), None)
    fewest = min(len(lost) for lost in losses.values())
    leaders = (best,) if best else tuple(a for a in ranking if len(losses[a]) == fewest)
    cheap_of = best or leaders[0]
    within = [
        c for c in sorted(candidates, key=lambda c: c.seconds_per_input)
        if c.seconds_per_input < by_name[cheap_of].seconds_per_input
        and _within_margin(c.method, cheap_of, protocols, differences, by_name, margin, baseline)
    ]
    cheap = within[0].method if within else None
    # Without intervals no method is ahead of any: nothing is below chance either, only unmeasured.
    below = tuple(a for a in ranking if baseline in by_name and a != baseline and baseline not in wins[a]
                  and intervals)
    inputs = _shared_inputs(candidates, protocols)
    if intervals:
        paragraph = _paragraph(best, leaders, cheap, cheap_of, by_name, margin, below, baseline, protocols, inputs,
                               bootstrap.level)
    else:
        why = (f"{bootstrap.resamples} bootstrap resamples, too few for a {bootstrap.level:.0%} interval on these "
               "inputs" if bootstrap.resamples else "no bootstrap resamples")
        paragraph = (
            f"On these {inputs} inputs and the {len(protocols)} protocol(s) no method's selection was fitted to, "
            f"without intervals ({why}) no method can be shown ahead of another: the table is ordered by mean "
            "rank, and no method is recommended."
        )
    failing = [name for name in ranking if name in set(fails_sanity) and name != baseline]  # chance's maps never depend on the model
    if failing:
        paragraph += (
            f" Fails the model-randomisation check (its maps barely change when the model's weights are destroyed, "
            f"so they describe the input more than the model): {listed(failing)}."
        )
    won = {a: tuple(b for b in ranking if b in wins[a]) for a in ranking}
    return Recommendation(best, leaders, cheap, cheap if cheap is None else cheap_of, margin, ranking, below, won,
                          inputs, paragraph)


def _oriented(a: Candidate, b: Candidate, protocol: Protocol, bootstrap: BootstrapSettings) -> Difference | None:
    """(a − b) on ``protocol``, signed so that above 0 is a better than b."""
    found = paired_difference(dict(a.values.get(protocol.name, {})), dict(b.values.get(protocol.name, {})), bootstrap)
    if found is None or protocol.higher_is_better:
        return found
    interval = found.interval
    flipped = None if interval is None else type(interval)(-interval.high, -interval.low)
    return Difference(-found.mean, flipped, found.inputs)


def _beats(difference: Difference | None) -> bool:
    return difference is not None and difference.interval is not None and difference.interval.low > 0


def _within_margin(method: str, leader: str, protocols, differences, by_name, margin: float, baseline: str) -> bool:
    """On every protocol, the worse end of (method − leader) no lower than −margin × the scale:
    |leader's mean − the baseline's| where the baseline was measured, else |leader's mean|."""
    for protocol in protocols:
        found = differences[method, leader, protocol.name]
        if found is None or found.interval is None:
            return False  # an interval the numbers cannot give supports no claim
        chance = _mean(by_name[baseline], protocol) if baseline in by_name and baseline != leader else 0.0
        scale = abs(_mean(by_name[leader], protocol) - chance)
        if not math.isfinite(scale) or found.interval.low < -margin * scale:
            return False
    return True


def _mean(candidate: Candidate, protocol: Protocol) -> float:
    values = np.array([v for v in candidate.values.get(protocol.name, {}).values() if math.isfinite(v)], dtype=float)
    return float(values.mean()) if len(values) else math.nan


def _ranking(candidates: Sequence[Candidate], protocols: Sequence[Protocol]) -> tuple[str, ...]:
    """Methods by their mean rank over the protocols (1: best mean); ties by cost, then name."""
    ranks: dict[str, list[float]] = {c.method: [] for c in candidates}
    for protocol in protocols:
        means = {c.method: _mean(c, protocol) for c in candidates}
        sign = -1.0 if protocol.higher_is_better else 1.0
        ordered = sorted(means, key=lambda m: (not math.isfinite(means[m]), sign * means[m] if math.isfinite(means[m]) else 0))
        for rank, method in enumerate(ordered, start=1):
            ranks[method].append(rank)
    cost = {c.method: c.seconds_per_input for c in candidates}
    return tuple(sorted(ranks, key=lambda m: (float(np.mean(ranks[m])), cost[m], m)))


def _shared_inputs(candidates: Sequence[Candidate], protocols: Sequence[Protocol]) -> int:
    keys = None
    for candidate in candidates:
        for protocol in protocols:
            mine = set(candidate.values.get(protocol.name, {}))
            keys = mine if keys is None else keys & mine
    return len(keys or ())


def _seconds(value: float) -> str:
    return f"{value:.3g} s/input"


def _paragraph(best, leaders, cheap, cheap_of, by_name, margin, below, baseline, protocols, inputs, level) -> str:
    count = len(protocols)
    of_the_way = f" (of the way from {baseline} to it)" if baseline in by_name and baseline != cheap_of else ""
    measured = f"On these {inputs} inputs and the {count} protocol(s) no method's selection was fitted to"
    if best is not None:
        said = (
            f"{measured}, {best} is the most faithful: against every other method it is ahead, beyond the "
            f"paired {level:.0%} interval, on more protocols than it is behind "
            f"({_seconds(by_name[best].seconds_per_input)})."
        )
    else:
        said = (
            f"{measured}, there is no clear winner: no method is ahead of every other beyond the paired intervals. "
            f"{listed(leaders)} {'leads' if len(leaders) == 1 else 'lead'} (fewest methods ahead of "
            f"{'it' if len(leaders) == 1 else 'them'}); the numbers do not pick one."
        )
    if cheap is not None:
        said += (
            f" {cheap} ({_seconds(by_name[cheap].seconds_per_input)}) is within {margin:.0%} of {cheap_of} "
            f"({_seconds(by_name[cheap_of].seconds_per_input)}) on every protocol, at the worse end of its interval"
            f"{of_the_way}."
        )
    else:
        said += f" No cheaper method is within {margin:.0%} of {cheap_of} on every protocol{of_the_way}."
    if below:
        said += f" Not ahead of {baseline} (a map of chance): {listed(below)}."
    return said
