"""What a run explains, by name: ``--target``'s words (the options read them without torch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

PRED = "pred"
GOLD = "gold"
ALL_ACTIVE = "all-active"  # a multi-label model: each label it predicts (above 0.5), one record each
ACTIVE = 0.5  # a label is predicted where its sigmoid, as records write it, is above this


def active_labels(probs: Sequence[float], predicted: int) -> list[int]:
    """The labels ``all-active`` explains for one input, in label order: each whose probability,
    as the records write it, is above 0.5, and the highest-scoring label even where none is (so
    every input is explained, and a ``pred`` run's record is among its records)."""
    return sorted({c for c, p in enumerate(probs) if p > ACTIVE} | {predicted})


def written_active_labels(record: Mapping, labels: int | None = None) -> list[int] | None:
    """The labels an all-active run explained for the input whose first record is ``record``, as
    its probabilities and predicted label were written (what resume and merge cut a file into
    inputs by); None where they are not a model's (of ``labels`` labels, where that is known)."""
    probs, predicted = record.get("probs"), record.get("predicted")
    if (
        not isinstance(probs, list) or (labels is not None and len(probs) != labels)
        or not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs)
        or not isinstance(predicted, int) or isinstance(predicted, bool) or not 0 <= predicted < len(probs)
    ):
        return None
    return active_labels(probs, predicted)
