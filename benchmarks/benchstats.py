"""What the benchmarks share: per-input AOPC and paired intervals."""

from __future__ import annotations

import numpy as np

from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import perturbation_curves


def per_input_aopc(records, predict, label_names, order: str) -> np.ndarray:
    """AOPC of each record alone; NaN for the ones evaluate leaves out (fewer than 10 tokens:
    GPT-2 adds no special token, so its shortest toy sentences are left out)."""
    settings = EvalSettings(orders=(order,))
    values = []
    for record in records:
        curves = perturbation_curves([record], predict, settings, label_names).curves
        values.append(curves[order].aopc_mean if order in curves else np.nan)
    return np.array(values)


def paired_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    difference = (a - b)[np.isfinite(a - b)]
    mean = float(difference.mean())
    # Hundreds of pairs: the normal quantile is the t quantile to three digits.
    half = float(1.96 * difference.std(ddof=1) / np.sqrt(len(difference)))
    return mean, mean - half, mean + half
