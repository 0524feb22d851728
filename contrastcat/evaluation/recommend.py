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
from dataclasses import dataclass, replace

import numpy as np

from ..arguments import listed
from .levels import level_text
from .margins import COST_FACTOR, DEFAULT_MARGIN, SAME_MAPS_TOLERANCE
from .stats import BootstrapSettings, Difference, paired_difference, why_no_interval

BASELINE = "random"  # chance: the method the margin is measured from, and that a real method must beat

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
    cheap: str | None  # a method at most 1/COST_FACTOR of the leader's cost, within the margin of it
    cheap_of: str | None  # that leader
    margin: float
    ranking: tuple[str, ...]  # every method by its mean rank over the protocols (best first)
    not_above_random: tuple[str, ...]  # methods that do not win their contest with "random"
    wins: dict[str, tuple[str, ...]]  # each method -> the methods it wins its contest with (by ranking)
    inputs: int  # inputs every method was measured on
    paragraph: str
    same_maps: tuple[tuple[str, ...], ...] = ()  # methods that made the same maps: one method, several names
    no_intervals: str | None = None  # why no paired interval was drawn; None where some were


@dataclass(frozen=True)
class _Judging:
    """How a recommendation judges: on which protocols, with which intervals, how near is near."""

    protocols: tuple[Protocol, ...]
    bootstrap: BootstrapSettings
    margin: float
    baseline: str


@dataclass(frozen=True)
class _Contests:
    """Who is ahead of whom: each method's wins, by the paired differences on every protocol."""

    names: tuple[str, ...]
    differences: dict  # (a, b, protocol) -> (a − b) oriented so that above 0 is a better
    wins: dict[str, set[str]]
    twins: dict[str, frozenset[str]]  # each method -> the methods with its maps, itself included

    @property
    def intervals(self) -> bool:
        return any(d is not None and d.interval is not None for d in self.differences.values())

    def best(self) -> str | None:
        """The method ahead of every other but those that made its maps (they are the same method);
        None where there is no other (every method made the same maps: nothing was compared)."""
        return next((a for a in self.names if set(self.names) - self.twins[a]
                     and self.wins[a] >= set(self.names) - self.twins[a]), None)

    def groups(self) -> tuple[tuple[str, ...], ...]:
        """The methods that made the same maps, a group each, in the order given."""
        return tuple(tuple(a for a in self.names if a in group) for group in dict.fromkeys(self.twins.values())
                     if len(group) > 1)


def recommend(
    candidates: Sequence[Candidate],
    protocols: Sequence[Protocol],
    bootstrap: BootstrapSettings = BootstrapSettings(),
    margin: float = DEFAULT_MARGIN,
    fails_sanity: Sequence[str] = (),
    same_maps: Sequence[Sequence[str]] = (),
) -> Recommendation:
    """The recommendation ``candidates`` measured on ``protocols`` support (module docstring).
    ``fails_sanity``: methods whose maps barely change when the model is destroyed (model
    randomisation), named in the paragraph as such. ``same_maps``: groups of methods that made
    the same maps on every input (:func:`same_maps`): one method under several names, never
    ahead of each other nor each other's cheap choice. ``margin``: within :data:`.margins.MARGIN_RANGE`,
    as the options that read it check (compare's ``margin``), once."""
    if len(candidates) < 2 or not protocols:
        raise ValueError("a recommendation compares at least two methods on at least one protocol")
    names = tuple(c.method for c in candidates)
    if len(set(names)) != len(names):
        raise ValueError("each method is measured once")
    costs = [c.seconds_per_input for c in candidates]
    if not all(isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0 for cost in costs):
        raise ValueError(f"seconds_per_input must be finite and at least 0, got {costs!r}"[:200])
    judging = _Judging(tuple(protocols), bootstrap, margin, BASELINE)
    baseline = BASELINE
    contests = _contests(candidates, judging, _twins(names, same_maps))
    wins = contests.wins
    losses = {a: {b for b in names if a in wins[b]} for a in names}
    ranking = _ranking(candidates, protocols)
    best = contests.best()
    fewest = min(len(lost) for lost in losses.values())
    leaders = (best,) if best else tuple(a for a in ranking if len(losses[a]) == fewest)
    cheap_of = best or leaders[0]
    cheap = _cheap(candidates, cheap_of, ranking, contests, judging)
    # Without intervals no method is ahead of any: nothing is below chance either, only unmeasured.
    below = tuple(a for a in ranking if baseline in names and a != baseline and baseline not in wins[a]
                  and contests.intervals)
    found = Recommendation(
        best, leaders, cheap, cheap if cheap is None else cheap_of, margin, ranking, below,
        {a: tuple(b for b in ranking if b in wins[a]) for a in ranking}, _shared_inputs(candidates, protocols), "",
        contests.groups(), None if contests.intervals else _why_no_intervals(bootstrap, contests),
    )
    failing = [name for name in ranking if name in set(fails_sanity) and name != baseline]  # chance's maps never depend on the model
    return replace(found, paragraph=_paragraph(found, {c.method: c for c in candidates}, judging, failing))


def same_maps(maps: Mapping[str, Sequence[Sequence[float]]], tolerance: float = SAME_MAPS_TOLERANCE
              ) -> tuple[tuple[str, ...], ...]:
    """Groups of methods whose maps of every input are the same (each method's maps of the same
    inputs, in the same order; no score more than ``tolerance`` apart), in the order given.
    Two such methods are one method under two names, whatever their options say."""
    arrays = {name: [np.asarray(m, dtype=np.float64) for m in found] for name, found in maps.items()}
    placed: dict[str, list[str]] = {}
    for name, mine in arrays.items():
        for first, group in placed.items():
            theirs = arrays[first]
            if len(theirs) == len(mine) and all(
                a.shape == b.shape and (not a.size or float(np.max(np.abs(a - b))) <= tolerance)
                for a, b in zip(mine, theirs)
            ):
                group.append(name)
                break
        else:
            placed[name] = [name]
    return tuple(tuple(group) for group in placed.values() if len(group) > 1)


def _twins(names: Sequence[str], groups: Sequence[Sequence[str]]) -> dict[str, frozenset[str]]:
    twins = {name: frozenset((name,)) for name in names}
    for group in groups:
        if isinstance(group, str) or any(name not in twins for name in group) or len(set(group)) != len(group) \
                or any(len(twins[name]) > 1 for name in group):
            raise ValueError(f"same_maps: each group names measured methods, each method in one group; got {group!r}"[:200])
        for name in group:
            twins[name] = frozenset(group)
    return twins


def _contests(candidates: Sequence[Candidate], judging: _Judging, twins) -> _Contests:
    names = tuple(c.method for c in candidates)
    by_name = {c.method: c for c in candidates}
    differences = {
        (a, b, p.name): _oriented(by_name[a], by_name[b], p, judging.bootstrap)
        for a, b in itertools.permutations(names, 2) for p in judging.protocols
    }

    def beats(a: str, b: str) -> int:
        return sum(_beats(differences[a, b, p.name]) for p in judging.protocols)

    wins = {a: {b for b in names if b != a and beats(a, b) > beats(b, a)} for a in names}
    return _Contests(names, differences, wins, twins)


def _cheap(candidates: Sequence[Candidate], leader: str, ranking, contests: _Contests, judging: _Judging) -> str | None:
    """The method to show where cost matters: of those at most 1/COST_FACTOR of the leader's cost
    and within the margin of it (never one with the leader's own maps), the best by rank among
    the cheapest and those not COST_FACTOR times dearer than it (no closer cost tells them apart)."""
    by_name = {c.method: c for c in candidates}
    limit = by_name[leader].seconds_per_input / COST_FACTOR
    if limit <= 0:  # a leader timed at nothing: nothing is measurably cheaper
        return None
    within = [
        c for c in candidates
        if c.method not in contests.twins[leader] and c.seconds_per_input <= limit
        and _within_margin(c.method, leader, contests.differences, by_name, judging)
    ]
    if not within:
        return None
    cheapest = min(c.seconds_per_input for c in within)
    as_cheap = [c.method for c in within if c.seconds_per_input <= cheapest * COST_FACTOR]
    return min(as_cheap, key=ranking.index)


def _why_no_intervals(bootstrap: BootstrapSettings, contests: _Contests) -> str:
    """Why no paired difference got an interval: said of the most inputs any pair shared."""
    if bootstrap.resamples == 0:
        return "no bootstrap resamples"
    most = max((d.inputs for d in contests.differences.values() if d is not None), default=0)
    return why_no_interval(bootstrap, most) or f"{most} inputs"


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


def _within_margin(method: str, leader: str, differences, by_name, judging: _Judging) -> bool:
    """On every protocol, the worse end of (method − leader) no lower than −margin × the scale:
    |leader's mean − the baseline's| where the baseline was measured, else |leader's mean|."""
    baseline = judging.baseline
    for protocol in judging.protocols:
        found = differences[method, leader, protocol.name]
        if found is None or found.interval is None:
            return False  # an interval the numbers cannot give supports no claim
        chance = _mean(by_name[baseline], protocol) if baseline in by_name and baseline != leader else 0.0
        scale = abs(_mean(by_name[leader], protocol) - chance)
        if not math.isfinite(scale) or found.interval.low < -judging.margin * scale:
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


def _paragraph(found: Recommendation, by_name: Mapping[str, Candidate], judging: _Judging, failing) -> str:
    """What the numbers support, in words: the winner or the leaders, the cheap choice, the methods
    not ahead of chance, those that made the same maps, those that fail model randomisation."""
    inputs = f"this {found.inputs} input" if found.inputs == 1 else f"these {found.inputs} inputs"
    measured = f"On {inputs} and the {len(judging.protocols)} protocol(s) no method's selection was fitted to"
    if found.no_intervals is not None:
        said = (f"{measured}, without intervals ({found.no_intervals}) no method can be shown ahead of another: the "
                "table is ordered by mean rank, and no method is recommended.")
    else:
        said = _leading(found, by_name, judging, measured)
    said += "".join(f" {listed(group)} made the same maps on every input: one method under {len(group)} names, "
                    "whatever their times say (those differ by measurement alone)." for group in found.same_maps)
    if failing:
        said += (
            f" Fails the model-randomisation check (its maps barely change when the model's weights are destroyed, "
            f"so they describe the input more than the model): {listed(failing)}."
        )
    return said


def _leading(found: Recommendation, by_name: Mapping[str, Candidate], judging: _Judging, measured: str) -> str:
    leader, baseline, margin = found.best or found.leaders[0], judging.baseline, level_text(found.margin)
    of_the_way = f" (of the way from {baseline} to it)" if baseline in by_name and baseline != leader else ""
    if found.best is not None:
        twins = [a for group in found.same_maps if found.best in group for a in group if a != found.best]
        others = f"every other method but {listed(twins)} (its maps)" if twins else "every other method"
        said = (
            f"{measured}, {found.best} is the most faithful: against {others} it is ahead, beyond the "
            f"paired {level_text(judging.bootstrap.level)} interval, on more protocols than it is behind "
            f"({_seconds(by_name[found.best].seconds_per_input)})."
        )
    else:
        many = len(found.leaders) > 1
        said = (
            f"{measured}, there is no clear winner: no method is ahead of every other beyond the paired intervals. "
            f"{listed(found.leaders)} {'lead' if many else 'leads'} (fewest methods ahead of "
            f"{'them' if many else 'it'}); the numbers do not pick one."
        )
    if found.cheap is not None:
        said += (
            f" {found.cheap} ({_seconds(by_name[found.cheap].seconds_per_input)}), at most half the cost of {leader} "
            f"({_seconds(by_name[leader].seconds_per_input)}), is within {margin} of it on every protocol, at the "
            f"worse end of its interval{of_the_way}."
        )
    else:
        said += (f" No method at most half the cost of {leader} is within {margin} of it on every protocol"
                 f"{of_the_way}.")
    if found.not_above_random:
        said += f" Not ahead of {baseline} (a map of chance): {listed(found.not_above_random)}."
    return said
