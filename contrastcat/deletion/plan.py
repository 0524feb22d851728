"""The deletion kernel both refinement (docs/spec.md §4) and evaluation (§5) run: rank the tokens,
perturb the top ``count`` of the ranking at each step of a grid, predict every distinct sequence
once, and read the target's probability drop.

The step grids live here too, so the two count tokens the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import BadInput
from ..models.tokens import ProbabilityFn
from .names import DELETE, PAPER, REFERENCE, STEP_GRIDS
from .perturb import perturb



def grid_counts(length: int, grid: int = 10) -> list[int]:
    """round(g * length) for g = linspace(0, 1, grid)[1:] (the reference code's grid; halves to even)."""
    return [int(c) for c in np.round(np.linspace(0.0, 1.0, grid)[1:] * length)]


def step_counts(length: int, nonspecial: int, steps: str) -> list[int]:
    """How many tokens evaluation perturbs at each of the 9 steps (docs/spec.md §5).

    paper: round(k/100 * non-special tokens), k = 10..90, halves to even;
    reference: round(g * all tokens), g = linspace(0, 1, 10)[1:].
    """
    if steps == PAPER:
        # k * n / 100, not k / 100 * n: 0.7 * 45 would give 31.4999... and lose the half.
        return [int(c) for c in np.round(np.arange(10, 100, 10) * nonspecial / 100)]
    if steps == REFERENCE:
        return grid_counts(length)
    raise BadInput(f"`steps` must be one of {', '.join(STEP_GRIDS)}, got {steps!r}")


def step_labels(steps: str) -> list[str]:
    """The 9 steps as a table shows them: 10% ... 90%."""
    if steps == PAPER:
        return [f"{k}%" for k in range(10, 100, 10)]
    return [f"{g * 100:.0f}%" for g in np.linspace(0, 1, 10)[1:]]


class DeletionPlan:
    """Sequences to predict, each distinct one once, in the order they were first added (the
    order fixes how batches are cut, so the same plan always gives the same bits)."""

    def __init__(self) -> None:
        self._index: dict[tuple[int, ...], int] = {}
        self.probs: np.ndarray | None = None

    def add(self, ids: Sequence[int]) -> int:
        """The row of ``ids`` in :attr:`probs`."""
        return self._index.setdefault(tuple(ids), len(self._index))

    def steps(
        self, ids: Sequence[int], ranking: np.ndarray, counts: Sequence[int], mode: str = DELETE,
        mask_id: int | None = None,
    ) -> list[int]:
        """The rows of ``ids`` with the first ``count`` ranked positions perturbed, per count."""
        return [self.add(perturb(ids, ranking[:count], mode, mask_id)) for count in counts]

    @property
    def sequences(self) -> list[tuple[int, ...]]:
        """Every distinct sequence added, in the order of its row."""
        return list(self._index)

    def predict(self, predict: ProbabilityFn) -> np.ndarray:
        """Every sequence's class probabilities [sequences, classes], one call for all."""
        self.probs = predict(self.sequences)
        return self.probs


class Remembered:
    """A :data:`ProbabilityFn` that predicts each distinct sequence once across its calls.

    Methods explaining the same inputs perturb many of the same sequences (the unperturbed input,
    the tokens both rank first, a fraction's complement), and an evaluation predicts one method's
    plan at a time: remembered, a sequence a method before asked for is not predicted again (on
    a held-out sample of 100 ``minilm-rt`` reviews, 9 sets of maps, about a fifth of the passes).
    What is kept is bounded by ``values`` (a sequence's tokens plus its probabilities: a model of
    thousands of labels keeps fewer), the oldest forgotten first, so a stream of records keeps the
    memory of a window. Each sequence's probabilities are those of the pass that first predicted
    it, so the same records in the same order give the same bits.
    """

    def __init__(self, predict: ProbabilityFn, values: int = 4_000_000) -> None:
        self._predict, self._budget = predict, values
        # Ordered, popped from the front: a dict's oldest key, deleted, leaves a hole every later
        # look for the oldest walks past (evicting took seconds a call once the bound was reached).
        self._kept: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._values = 0

    def __call__(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        keys = [tuple(ids) for ids in sequences]
        if not keys:
            return self._predict([])  # its empty array, as many classes wide as the model's
        missing = list(dict.fromkeys(key for key in keys if key not in self._kept))
        if missing:
            for key, row in zip(missing, self._predict(missing)):
                self._kept[key] = row
                self._values += len(key) + row.size
        out = np.stack([self._kept[key] for key in keys])
        while self._values > self._budget:  # the oldest first
            key, row = self._kept.popitem(last=False)
            self._values -= len(key) + row.size
        return out
