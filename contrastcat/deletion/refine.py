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
from typing import TYPE_CHECKING

import numpy as np

from .perturb import LERF, MORF, perturb, ranked_positions

if TYPE_CHECKING:  # only a type: importing tokens would pull in torch
    from ..models.tokens import ProbabilityFn

RHO_RULES = {
    "mean+std": lambda s: s.mean() + s.std(),
    "mean": lambda s: s.mean(),
    "mean-std": lambda s: s.mean() - s.std(),
}


# How a map's deletion test is scored. "morf" is the paper's S(I_R): the mean drop of
# the target probability as its top tokens go. "morf-lerf" (beyond the paper) also
# deletes its *least* relevant tokens first and subtracts that mean drop, so a map
# that ranks some evidence last (where LeRF finds it) scores lower; it costs a
# second set of deletion inputs.
SCORE_RULES = ("morf", "morf-lerf")


@dataclass(frozen=True)
class RefineSettings:
    rho: str = "mean+std"  # threshold rule, see RHO_RULES
    grid: int = 10  # deletion counts round(g * T) for g = linspace(0, 1, grid)[1:]
    score: str = "morf"  # see SCORE_RULES
    keep: int | None = None  # beyond the paper: keep the `keep` best-scoring maps instead of rho's threshold

    def __post_init__(self) -> None:
        if self.rho not in RHO_RULES:
            raise ValueError(f"rho must be one of {', '.join(RHO_RULES)}, got {self.rho!r}")
        if self.score not in SCORE_RULES:
            raise ValueError(f"score must be one of {', '.join(SCORE_RULES)}, got {self.score!r}")
        if self.keep is not None and self.keep < 1:
            raise ValueError(f"keep must be at least 1, got {self.keep}")


def deletion_counts(length: int, grid: int = 10) -> list[int]:
    """round(g * T) for g = linspace(0, 1, grid)[1:], duplicates dropped, order kept."""
    counts = np.round(np.linspace(0.0, 1.0, grid)[1:] * length).astype(int)
    return list(dict.fromkeys(int(c) for c in counts))


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


def drop_scores(
    items: Sequence[RefineItem], predict: ProbabilityFn, grid: int = 10, score: str = "morf"
) -> list[np.ndarray]:
    """S(I_R) for every map of every item: mean MoRF probability drop over the steps
    (``morf-lerf``: minus the mean LeRF drop over the same steps)."""
    orders = (MORF,) if score == "morf" else (MORF, LERF)
    unique: dict[tuple[int, ...], int] = {}
    plans: list[tuple[tuple[int, ...], list[list[list[tuple[int, ...]]]]]] = []
    for item in items:
        unique.setdefault(item.ids, len(unique))
        counts = deletion_counts(len(item.ids), grid)
        per_map = []
        for scores in item.maps:
            per_order = []
            for order in orders:
                ranking = ranked_positions(scores, item.special, order)
                inputs = [perturb(item.ids, ranking[:count]) for count in counts]
                for sequence in inputs:
                    unique.setdefault(sequence, len(unique))
                per_order.append(inputs)
            per_map.append(per_order)
        plans.append((item.ids, per_map))
    sequences = list(unique)
    probs = predict(sequences)
    result = []
    for item, (ids, per_map) in zip(items, plans):
        base = probs[unique[ids], item.target]

        def drop(inputs: list[tuple[int, ...]]) -> float:
            return float(np.mean([base - probs[unique[s], item.target] for s in inputs]))

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


def combine(maps: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Mean of the kept maps, min–max scaled (a constant map becomes zeros)."""
    mean = maps[kept].mean(axis=0)
    span = mean.max() - mean.min()
    return (mean - mean.min()) / (span if span != 0 else 1e-6)


def refine(
    items: Sequence[RefineItem], predict: ProbabilityFn, settings: RefineSettings = RefineSettings()
) -> list[Refined]:
    results = []
    for item, scores in zip(items, drop_scores(items, predict, settings.grid, settings.score)):
        kept = select_maps(scores, settings.rho, settings.keep)
        results.append(Refined(scores=combine(item.maps, kept), kept=kept, drop_scores=scores))
    return results


def average(maps: np.ndarray) -> Refined:
    """No refinement: every map is kept (``--no-refine``, and single-map methods)."""
    kept = np.ones(len(maps), dtype=bool)
    return Refined(scores=combine(maps, kept), kept=kept, drop_scores=np.full(len(maps), np.nan))
