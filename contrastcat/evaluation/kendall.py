"""Kendall-τ (docs/spec.md §5): how much the rankings for the target and an alternative class agree."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np



def finite_or_none(value: float) -> float | None:
    """NaN (no input to average over, or τ undefined) is written as null: reports are strict JSON."""
    return None if value is None or math.isnan(value) else value


KENDALL_PASS = 0.05


@dataclass
class Kendall:
    tau_index: float  # τ between the descending-score index arrays P^c and P^ĉ
    tau_scores: float  # τ-b between the raw score vectors
    inputs: int
    index_taus: list[float] = field(default_factory=list, repr=False)  # per input, to pool chunks
    score_taus: list[float] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, index_taus: Sequence[float], score_taus: Sequence[float]) -> Kendall:
        """Mean τ over inputs (NaN, where τ is undefined, left out)."""
        return cls(
            tau_index=float(np.nanmean(index_taus)) if len(index_taus) and not np.all(np.isnan(index_taus)) else float("nan"),
            tau_scores=float(np.nanmean(score_taus)) if len(score_taus) and not np.all(np.isnan(score_taus)) else float("nan"),
            inputs=len(index_taus),
            index_taus=list(index_taus),
            score_taus=list(score_taus),
        )

    @property
    def passes(self) -> bool:
        return self.tau_index < KENDALL_PASS

    def as_dict(self) -> dict:
        return {
            "tau_index": finite_or_none(self.tau_index),
            "tau_scores": finite_or_none(self.tau_scores),
            "inputs": self.inputs,
            "passes": self.passes,
        }


def kendall_tau_b(a: Sequence[float], b: Sequence[float], b_tie: float = 0.0) -> float:
    """Kendall's τ-b (ties accounted for), as scipy.stats.kendalltau computes it; O(T²). Values of
    ``b`` within ``b_tie`` of each other count as tied (measured values whose last bits are noise)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    upper = np.triu_indices(len(x), k=1)
    # Finite values far apart (±1e308) differ by more than a float holds: the difference is
    # infinite, which still has the right sign and is beyond any tie, so overflow is harmless.
    with np.errstate(over="ignore"):
        dx = np.sign(x[:, None] - x[None, :])[upper]
        gaps = (y[:, None] - y[None, :])[upper]
    dy = np.where(np.abs(gaps) <= b_tie, 0.0, np.sign(gaps))
    concordance = float((dx * dy).sum())
    denominator = np.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return concordance / denominator if denominator > 0 else float("nan")


def descending_order(scores: Sequence[float]) -> np.ndarray:
    """Token indices by descending score, ties by position."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def kendall_confidence(scores_c: Sequence[Sequence[float]], scores_alt: Sequence[Sequence[float]]) -> Kendall:
    """Mean τ over inputs between the attributions for c and for the alternative class."""
    index_taus, score_taus = [], []
    for first, second in zip(scores_c, scores_alt):
        index_taus.append(kendall_tau_b(descending_order(first), descending_order(second)))
        score_taus.append(kendall_tau_b(first, second))
    return Kendall.of(index_taus, score_taus)


def alternative_class(target: int, num_classes: int) -> int:
    return (target + 1) % num_classes
