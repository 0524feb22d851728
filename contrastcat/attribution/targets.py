"""What a run explains for each input: :class:`Target` (``--target``'s words; read without torch)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .. import arguments
from ..errors import BadInput
from ..records.labels import resolve_label

PRED = "pred"
GOLD = "gold"
ALL_ACTIVE = "all-active"  # a multi-label model: each label it predicts (above 0.5), one record each
CLASS = "class"  # one class, by its index, for every input
ACTIVE = 0.5  # a label is predicted where its sigmoid, as records write it, is above this
INDEX_DIGITS = 9  # more digits than any class count has: refused as text, never read as a number


def active_labels(probs: Sequence[float], predicted: int) -> list[int]:
    """The labels ``all-active`` explains for one input, in label order: each whose probability,
    as the records write it, is above 0.5, and the highest-scoring label even where none is (so
    every input is explained, and a ``pred`` run's record is among its records)."""
    return sorted({c for c, p in enumerate(probs) if p > ACTIVE} | {predicted})


@dataclass(frozen=True, repr=False)
class Target:
    """What a run explains for each input: its predicted class (``pred``), its gold label
    (``gold``), one class by index, or each label a multi-label model predicts (``all-active``).

    Read once from what a caller gave (:meth:`read`: its spelling, no model needed), checked once
    against the model (:meth:`on_model`), then asked: the class an input's record explains where
    that is known before any pass (:meth:`fixed`), and the labels an input's records explain once
    its pass is written (:meth:`labels`): what explain writes by, and what resume, shards and
    merge cut a record file into inputs by: one reading, whoever asks."""

    rule: str  # PRED, GOLD, ALL_ACTIVE or CLASS
    index: int | None = None  # CLASS: the class

    def __repr__(self) -> str:
        return repr(self.written)  # as it is given: a signature's default reads target='pred'

    @classmethod
    def read(cls, named: str, value: object) -> Target:
        """``pred``, ``gold``, ``all-active`` or a class index (an int, or its digits), as
        ``named`` (the option as the caller spells it) was given; a Target as it is."""
        if isinstance(value, Target):
            return value
        if isinstance(value, str) and value in (PRED, GOLD, ALL_ACTIVE):
            return cls(value)
        digits = isinstance(value, str) and value.isascii() and value.isdigit()
        if digits and len(value) > INDEX_DIGITS:  # and int() refuses 5000 digits with no message for a user
            raise BadInput(f"{named} {arguments.shown(value, 24).strip(chr(39))}: no model has that many classes")
        if arguments.whole(value) or digits:  # True is not class 1 (whole refuses a bool)
            return cls(CLASS, int(value))
        raise BadInput(f"{named} must be pred, gold, all-active or a class index, got {arguments.shown(value)}")

    def on_model(self, num_classes: int, multi_label: bool, named: str = "`target`") -> Target:
        """This target, where the model has the class it names and ``all-active`` is a
        multi-label model's (``named``: the option as the caller spells it)."""
        if self.rule == ALL_ACTIVE:
            check_all_active(multi_label, named)
        if self.rule == CLASS and not 0 <= self.index < num_classes:
            raise BadInput(f"{named} {arguments.shown(self.index, 24)}: the model has {num_classes} classes (0..{num_classes - 1})")
        return self

    @property
    def written(self) -> str | int:
        """As a run's identity writes it (a part's header, a checkpoint's): the index, or the rule."""
        return self.index if self.rule == CLASS else self.rule

    @property
    def per_label(self) -> bool:
        """Whether an input's records are one per method for each of its labels (all-active),
        not one per method."""
        return self.rule == ALL_ACTIVE

    def fixed(self, row, label_names: Sequence[str], where: str) -> int | None:
        """The class ``row``'s first records explain, where it is known before the model's pass
        (None: its predicted class; all-active: that first, its other labels once its pass is
        known). A gold target's row without a usable label is refused, named by ``where``."""
        if self.rule == CLASS:
            return self.index
        if self.rule != GOLD:
            return None
        if row.label is None:
            raise BadInput(f"{where}: the gold target needs a label on every input")
        return resolve_label(row.label, label_names, where)

    def labels(self, probs: Sequence[float], predicted: int) -> list[int]:
        """The labels an all-active input's records explain, from its pass as they write it
        (probabilities and predicted label), in label order; one run explains its one target."""
        return active_labels(probs, predicted) if self.per_label else [predicted]

    def written_labels(self, record: Mapping, labels: int | None = None) -> list[int] | None:
        """:meth:`labels` of the input whose first record is ``record``, read from the pass it
        wrote; None where its probabilities are not a model's (of ``labels`` labels, where known)."""
        probs, predicted = record.get("probs"), record.get("predicted")
        if (
            not isinstance(probs, list) or (labels is not None and len(probs) != labels)
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs)
            or not isinstance(predicted, int) or isinstance(predicted, bool) or not 0 <= predicted < len(probs)
        ):
            return None
        return self.labels(probs, predicted)

    def explains(self, record: Mapping, row, label_names: Sequence[str], where: str) -> bool:
        """Whether ``record`` explains the class this target names for ``row`` (pred: its own
        predicted class), with probabilities of the model's ``label_names``."""
        found, predicted, probs = record.get("target"), record.get("predicted"), record.get("probs")
        count = len(label_names)
        if not arguments.whole(found) or not 0 <= found < count or record.get("target_name") != label_names[found]:
            return False
        if not arguments.whole(predicted) or not 0 <= predicted < count or len(probs or ()) != count:
            return False
        if self.rule == PRED:
            return found == predicted
        return found == self.fixed(row, label_names, where)

    def usable(self, rows: Iterable, label_names: Sequence[str], source: str, skipped: list[str]) -> Iterator:
        """The rows whose target is known; the others' messages go to ``skipped`` (--on-error skip)."""
        if self.rule != GOLD:
            yield from rows
            return
        usable = 0
        for row in rows:
            try:
                self.fixed(row, label_names, f"{source}:{row.line}")
            except BadInput as error:
                skipped.append(str(error))
                continue
            usable += 1
            yield row
        if not usable:
            raise BadInput(f"{source}: no input row has a usable label for the gold target ({len(skipped)} skipped)")


PREDICTED = Target(PRED)
EACH_ACTIVE = Target(ALL_ACTIVE)


def check_all_active(multi_label: bool, named: str = "`target`") -> None:
    """``all-active`` reads each label's own probability: a softmax model's classes exclude one
    another, so "each class above 0.5" is only its predicted class, said otherwise."""
    if not multi_label:
        raise BadInput(
            f"{named} {ALL_ACTIVE} explains each label of a multi-label model; this model is single-label "
            "(its classes' probabilities are one softmax): explain its predicted class with pred"
        )
