"""The model-randomisation sanity check (Adebayo et al., 2018): do a method's maps depend on the
model they explain? Here are its measure and report; the run is ``usecases.sanity_file.sanity_check``.
Each record is explained again, by its own method and settings and for its
own target, on copies of the classifier re-initialised cumulatively from the top
(:mod:`contrastcat.models.randomize`); per step, the Spearman correlation between each input's
original and new map over its non-special tokens, averaged with a bootstrap interval. Library
methods read the library's references captured again under each randomised copy
(:class:`~contrastcat.library.recapture.RecapturedLibrary`), never the original activations.

A method passes when its maps on the fully randomised model correlate below
:data:`SANITY_BOUND` with the original ones: maps that survive the model's destruction describe
the input, not the model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .kendall import finite_or_none
from .stats import BootstrapSettings, Interval, mean_interval

SANITY_BOUND = 0.5
SANITY_SCHEMA = "contrastcat/sanity-report"
SANITY_SCHEMA_VERSION = 1


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks (as Spearman's ρ needs)."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2  # mean of ranks start+1 .. end
            start = end
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ: Pearson's correlation of the average ranks; NaN when either side is constant."""
    if len(a) < 2:
        return float("nan")
    x, y = average_ranks(np.asarray(a, dtype=np.float64)), average_ranks(np.asarray(b, dtype=np.float64))
    x, y = x - x.mean(), y - y.mean()
    scale = math.sqrt(float((x * x).sum()) * float((y * y).sum()))
    return float((x * y).sum() / scale) if scale > 0 else float("nan")


@dataclass
class MethodSanity:
    method: str
    method_name: str
    rho: dict[str, list[float]] = field(default_factory=dict)  # step -> per input (NaN: undefined)

    def mean(self, step: str) -> float:
        values = np.asarray(self.rho[step], dtype=np.float64)
        finite = values[np.isfinite(values)]
        return float(finite.mean()) if len(finite) else float("nan")

    def passes(self, last: str) -> bool | None:
        value = self.mean(last)
        return None if math.isnan(value) else value < SANITY_BOUND


@dataclass
class SanityReport:
    model: str
    model_fingerprint: str
    seed: int
    steps: list[str]  # head, layer L, ..., layer 1, embeddings: cumulative
    methods: dict[str, MethodSanity]
    inputs: int
    bootstrap: BootstrapSettings = BootstrapSettings()
    intervals: dict[str, dict[str, Interval | None]] = field(default_factory=dict)  # method -> step -> interval

    def add_intervals(self) -> None:
        for label, found in self.methods.items():
            self.intervals[label] = {step: mean_interval(found.rho[step], self.bootstrap) for step in self.steps}

    def verdicts(self) -> list[str]:
        """One sentence per method about the fully randomised model."""
        last = self.steps[-1]
        lines = []
        for label, found in self.methods.items():
            mean, interval = found.mean(last), self.intervals.get(label, {}).get(last)
            shown = "n/a" if math.isnan(mean) else f"{mean:.2f}" + (
                f" [{interval.low:.2f}, {interval.high:.2f}]" if interval is not None else "")
            verdict = found.passes(last)
            if verdict is None:
                lines.append(f"{label}: no input had a map to correlate (constant maps): no verdict")
            elif verdict:
                lines.append(f"{label}: passes — its maps on the fully randomised model correlate ρ = {shown} with "
                             f"the original ones (below {SANITY_BOUND}): they depend on the model's weights")
            else:
                lines.append(f"{label}: FAILS — its maps on the fully randomised model still correlate ρ = {shown} "
                             f"with the original ones (not below {SANITY_BOUND}): they barely change when the model "
                             "is destroyed, so they describe the input more than the model")
        return lines

    def to_dict(self, per_input: bool = False) -> dict:
        from ..version import __version__

        last = self.steps[-1]
        methods = {}
        for label, found in self.methods.items():
            entry = {
                "method_name": found.method_name,
                "rho": {step: finite_or_none(found.mean(step)) for step in self.steps},
                "intervals": {
                    step: None if i is None else i.as_dict() for step, i in self.intervals.get(label, {}).items()
                },
                "inputs": {step: int(np.isfinite(found.rho[step]).sum()) for step in self.steps},
                "passes": found.passes(last),
            }
            if per_input:
                entry["per_input"] = {step: [finite_or_none(v) for v in found.rho[step]] for step in self.steps}
            methods[label] = entry
        return {
            "schema": SANITY_SCHEMA, "schema_version": SANITY_SCHEMA_VERSION,
            "tool": {"name": "contrastcat", "version": __version__},
            "model": self.model, "model_fingerprint": self.model_fingerprint, "seed": self.seed,
            "cascade": self.steps, "bound": SANITY_BOUND, "inputs": self.inputs,
            "bootstrap": self.bootstrap.as_dict(), "methods": methods, "verdicts": self.verdicts(),
        }
