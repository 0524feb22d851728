"""Refinement by deletion test (docs/spec.md §4).

Each candidate map is scored by how much deleting its top tokens lowers the
target probability; maps scoring below rho are discarded and the rest are
averaged. Beyond the paper (contrastcat-plus): the score may also subtract
the drop when the map's bottom tokens go, and the N best maps may be kept
instead of those above rho. All deletion inputs of a batch run through the model together, and
identical truncated inputs run once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BadInput
from ..models.tokens import ProbabilityFn
from ..scaling import minmax
from .names import LERF, MEASURES, MORF, SCORE_RULES
from .perturb import ranked_positions
from .plan import DeletionPlan, grid_counts

RHO_RULES = {  # by the names of names.RHO_NAMES (the options check those without numpy)
    "mean+std": lambda s: s.mean() + s.std(),
    "mean": lambda s: s.mean(),
    "mean-std": lambda s: s.mean() - s.std(),
}


@dataclass(frozen=True)
class RefineSettings:
    rho: str = "mean+std"  # threshold rule, see RHO_RULES
    grid: int = 10  # deletion counts round(g * T) for g = linspace(0, 1, grid)[1:]
    score: str = "morf"  # see SCORE_RULES
    keep: int | None = None  # beyond the paper: keep the `keep` best-scoring maps instead of rho's threshold
    # Beyond the paper (to make the test cheaper): the grid's steps the test runs, 1-based
    # among deletion_counts (a short input's grid has fewer; a step past its end is skipped).
    # None: every step, the paper's test.
    steps: tuple[int, ...] | None = None
    measure: str = "probability"  # see MEASURES

    def __post_init__(self) -> None:
        if self.rho not in RHO_RULES:
            raise BadInput(f"`rho` must be one of {', '.join(RHO_RULES)}, got {self.rho!r}")
        if self.score not in SCORE_RULES:
            raise BadInput(f"`score` must be one of {', '.join(SCORE_RULES)}, got {self.score!r}")
        if self.keep is not None and self.keep < 1:
            raise BadInput(f"`keep` must be at least 1, got {self.keep}")
        if self.measure not in MEASURES:
            raise BadInput(f"`test_measure` must be one of {', '.join(MEASURES)}, got {self.measure!r}")
        if self.steps is not None and (not self.steps or any(not 1 <= step < self.grid for step in self.steps)):
            raise BadInput(f"`test_steps` must name steps 1 to {self.grid - 1} of the grid, got {self.steps!r}")


def deletion_counts(length: int, grid: int = 10) -> list[int]:
    """The reference grid's counts (:func:`~contrastcat.deletion.plan.grid_counts`), duplicates
    dropped, order kept: deleting the same tokens twice would only weigh that step twice."""
    return list(dict.fromkeys(grid_counts(length, grid)))


@dataclass(frozen=True)
class RefineItem:
    """One input's candidate maps [K, T] and what the deletion test needs to know."""

    ids: tuple[int, ...]
    special: tuple[bool, ...]
    target: int
    maps: np.ndarray


@dataclass(frozen=True)
class Refined:
    scores: np.ndarray  # [T], min–max scaled
    kept: np.ndarray  # bool [K]
    drop_scores: np.ndarray  # [K]
    raw: np.ndarray  # [T], the mean of the kept maps before the last scaling (a method of one map: its own)


def tested_counts(length: int, grid: int = 10, steps: Sequence[int] | None = None) -> list[int]:
    """The counts the test deletes: every step of the grid, or the chosen ones (1-based) that this
    length's grid has; if it has none of them, its first step (an input too short to hold them
    still gets a test)."""
    counts = deletion_counts(length, grid)
    if steps is None:
        return counts
    chosen = [counts[step - 1] for step in sorted(set(steps)) if step <= len(counts)]
    return chosen or counts[:1]


def log_odds(probs: np.ndarray, target: int, multi_label: bool = False) -> np.ndarray:
    """log p_c - log(1 - p_c) per row, 1 - p_c summed from the other classes (exact where p_c
    rounds to 1); a probability of exactly 0 counts as the smallest positive float. For a
    multi-label classifier the labels are independent sigmoids: 1 - p_c is the label's own
    complement (float64 tells it from 0 up to a logit of about 36)."""
    tiny = np.finfo(np.float64).tiny
    own = probs[:, target]
    others = 1.0 - own if multi_label else np.delete(probs, target, axis=1).sum(axis=1)
    return np.log(np.maximum(own, tiny)) - np.log(np.maximum(others, tiny))


def drop_scores(
    items: Sequence[RefineItem], predict: ProbabilityFn, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> list[np.ndarray]:
    """S(I_R) for every map of every item: mean MoRF drop over the steps (``settings.score``
    ``morf-lerf``: minus the mean LeRF drop over the same steps); ``settings.steps``: only those of
    the grid; ``settings.measure``: the drop of the target's probability or of its log-odds."""
    grid, steps, measure = settings.grid, settings.steps, settings.measure
    orders = (MORF,) if settings.score == "morf" else (MORF, LERF)
    plan = DeletionPlan()
    rows = []  # per item: (its own row, per map: per order: the rows of its steps)
    for item in items:
        own = plan.add(item.ids)
        counts = tested_counts(len(item.ids), grid, steps)
        per_map = [
            [plan.steps(item.ids, ranked_positions(scores, item.special, order), counts) for order in orders]
            for scores in item.maps
        ]
        rows.append((own, per_map))
    probs = plan.predict(predict)
    result = []
    for item, (own, per_map) in zip(items, rows):
        values = probs[:, item.target] if measure == "probability" else log_odds(probs, item.target, multi_label)
        base = values[own]

        def drop(steps: list[int]) -> float:
            return float(np.mean([base - values[row] for row in steps]))

        result.append(np.array([drop(per_order[0]) - sum(drop(i) for i in per_order[1:]) for per_order in per_map]))
    return result


# Maps with the same ranking have exactly the same S (their deletion inputs are
# the same sequences, scored once). When the scores split evenly into two values,
# mean + std *is* the upper value, and the last bit of the float sum would decide
# whether those maps pass; padding a batch differently flips it. Within this
# margin a score counts as reaching the threshold.
TIE_MARGIN = 1e-12


def select_maps(scores: np.ndarray, rho: str = "mean+std", keep: int | None = None) -> np.ndarray:
    """Keep maps with S >= rho (population std); if none pass, keep all (a NaN S passes
    nothing). With ``keep``, the threshold is the keep-th largest S instead: maps tied
    with it are kept too (they are averaged), so ``keep=1`` can keep several."""
    if keep is not None:
        threshold = np.sort(scores)[::-1][min(keep, len(scores)) - 1]
    else:
        threshold = RHO_RULES[rho](scores)
    kept = scores >= threshold - TIE_MARGIN * max(1.0, abs(float(threshold)))
    return kept if kept.any() else np.ones_like(kept)


def combine(maps: np.ndarray, kept: np.ndarray, drop_scores: np.ndarray) -> Refined:
    """The mean of the kept maps, min–max scaled (a constant map becomes zeros), and before."""
    mean = maps[kept].mean(axis=0)
    return Refined(scores=minmax(mean), kept=kept, drop_scores=drop_scores, raw=mean)


def refine(
    items: Sequence[RefineItem], predict: ProbabilityFn, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> list[Refined]:
    """Each item's maps kept by the deletion test and averaged (``multi_label``: ``predict`` gives
    a sigmoid per label, whose log-odds are the label's own)."""
    results = []
    found = drop_scores(items, predict, settings, multi_label)
    for item, scores in zip(items, found):
        kept = select_maps(scores, settings.rho, settings.keep)
        results.append(combine(item.maps, kept, scores))
    return results


# --- a lower precision proposes, float32 decides --------------------------------------------
# The deletion test's forward passes are most of explain's time, and bfloat16 runs them faster
# where the hardware has it natively; but its probabilities differ in the third decimal, and a
# score near the threshold would keep other maps. Here the lower precision scores every map,
# and every input whose choice its error could change is scored again at full precision: the
# maps kept are those a full-precision test keeps, wherever the stated bound holds.


@dataclass(frozen=True)
class Proposed:
    """Probabilities from a lower precision (``low``), checked by full precision (``exact``) where
    they could decide otherwise: ``bound`` is the most a row's probability from ``low`` may differ
    from ``exact``'s (measured with a margin: :func:`measured_bound`)."""

    low: ProbabilityFn
    exact: ProbabilityFn
    bound: float


def score_error(settings: RefineSettings, bound: float) -> float:
    """The most a drop score moves when every probability moves at most ``bound``: a drop is a
    mean of (base - step), each at most 2 bounds off; ``morf-lerf`` subtracts a second such mean.
    A log-odds drop has no bound from a probability's (near 0 or 1 it is unbounded): inf."""
    if settings.measure != "probability":
        return float("inf")
    return 2.0 * bound * (2 if settings.score == "morf-lerf" else 1)


def threshold_error(rho: str, error: float) -> float:
    """The most ρ moves when every score moves at most ``error``: the mean at most ``error``, the
    population std at most ``error`` too (the deviations from the mean move by the scores' moves
    less their mean, whose root mean square is at most ``error``)."""
    return error if rho == "mean" else 2.0 * error


def decided(scores: np.ndarray, settings: RefineSettings, error: float) -> bool:
    """Whether the maps kept from ``scores`` are the maps kept from any scores within ``error``
    of each: under ρ, every score farther from ρ than both can move; under ``keep``, the keep-th
    best farther above the next than two moves (a tie, a NaN: not decided)."""
    if not np.isfinite(error) or not np.all(np.isfinite(scores)):
        return False
    if settings.keep is not None:
        ordered = np.sort(scores)[::-1]
        if settings.keep >= len(ordered):
            return True  # every map is kept
        last, next_ = float(ordered[settings.keep - 1]), float(ordered[settings.keep])
        return last - next_ > 2.0 * error + TIE_MARGIN * max(1.0, abs(last))
    threshold = float(RHO_RULES[settings.rho](scores))
    margin = error + threshold_error(settings.rho, error) + TIE_MARGIN * max(1.0, abs(threshold))
    return bool(np.all(np.abs(scores - threshold) > margin))


def refine_proposed(
    items: Sequence[RefineItem], proposed: Proposed, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> tuple[list[Refined], int]:
    """:func:`refine` with ``proposed.low``'s probabilities, each input whose choice they could
    change tested again with ``proposed.exact``'s: the maps kept, and so the result, are those of
    :func:`refine` with ``exact`` wherever ``bound`` holds. Also: how many inputs were tested again."""
    found = drop_scores(items, proposed.low, settings, multi_label)
    error = score_error(settings, proposed.bound)
    again = [index for index, scores in enumerate(found) if not decided(scores, settings, error)]
    if again:
        for index, scores in zip(again, drop_scores([items[i] for i in again], proposed.exact, settings, multi_label)):
            found[index] = scores
    results = [combine(item.maps, select_maps(scores, settings.rho, settings.keep), scores)
               for item, scores in zip(items, found)]
    return results, len(again)


def measured_bound(sequences: Sequence[Sequence[int]], low: ProbabilityFn, exact: ProbabilityFn,
                   safety: float = 4.0) -> float:
    """The largest difference between ``low``'s and ``exact``'s probabilities over ``sequences``,
    times ``safety``: a bound for other inputs of the same model and precision, stated, not proven."""
    difference = np.abs(np.asarray(low(sequences), dtype=np.float64) - np.asarray(exact(sequences), dtype=np.float64))
    return float(difference.max()) * safety if difference.size else 0.0


def average(maps: np.ndarray) -> Refined:
    """No refinement: every map is kept (``--no-refine``, and single-map methods)."""
    kept = np.ones(len(maps), dtype=bool)
    return combine(maps, kept, np.full(len(maps), np.nan))
