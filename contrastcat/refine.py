"""Refinement by deletion test (docs/spec.md §4).

Each candidate map is scored by how much deleting its top tokens lowers the
target probability; maps scoring below rho are discarded and the rest are
averaged. All deletion inputs of a batch run through the model together, and
identical truncated inputs run once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .perturb import MORF, perturb, ranked_positions

if TYPE_CHECKING:  # only a type: importing tokens would pull in torch
    from .tokens import ProbabilityFn

RHO_RULES = {
    "mean+std": lambda s: s.mean() + s.std(),
    "mean": lambda s: s.mean(),
    "mean-std": lambda s: s.mean() - s.std(),
}


@dataclass(frozen=True)
class RefineSettings:
    rho: str = "mean+std"  # threshold rule, see RHO_RULES
    grid: int = 10  # deletion counts round(g * T) for g = linspace(0, 1, grid)[1:]


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


def drop_scores(items: Sequence[RefineItem], predict: ProbabilityFn, grid: int = 10) -> list[np.ndarray]:
    """S(I_R) for every map of every item: mean MoRF probability drop over the steps."""
    unique: dict[tuple[int, ...], int] = {}
    plans: list[tuple[tuple[int, ...], list[list[tuple[int, ...]]]]] = []
    for item in items:
        unique.setdefault(item.ids, len(unique))
        counts = deletion_counts(len(item.ids), grid)
        per_map = []
        for scores in item.maps:
            ranking = ranked_positions(scores, item.special, MORF)
            inputs = [perturb(item.ids, ranking[:count]) for count in counts]
            for sequence in inputs:
                unique.setdefault(sequence, len(unique))
            per_map.append(inputs)
        plans.append((item.ids, per_map))
    sequences = list(unique)
    probs = predict(sequences)
    result = []
    for item, (ids, per_map) in zip(items, plans):
        base = probs[unique[ids], item.target]
        result.append(
            np.array(
                [np.mean([base - probs[unique[s], item.target] for s in inputs]) for inputs in per_map]
            )
        )
    return result


# Maps with the same ranking have exactly the same S (their deletion inputs are
# the same sequences, scored once). When the scores split evenly into two values,
# mean + std *is* the upper value, and the last bit of the float sum would decide
# whether those maps pass; padding a batch differently flips it. Within this
# margin a score counts as reaching the threshold.
TIE_MARGIN = 1e-12


def select_maps(scores: np.ndarray, rho: str = "mean+std") -> np.ndarray:
    """Keep maps with S >= rho (population std); if none pass, keep all."""
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
    for item, scores in zip(items, drop_scores(items, predict, settings.grid)):
        kept = select_maps(scores, settings.rho)
        results.append(Refined(scores=combine(item.maps, kept), kept=kept, drop_scores=scores))
    return results


def average(maps: np.ndarray) -> Refined:
    """No refinement: every map is kept (``--no-refine``, and single-map methods)."""
    kept = np.ones(len(maps), dtype=bool)
    return Refined(scores=combine(maps, kept), kept=kept, drop_scores=np.full(len(maps), np.nan))
