"""Summarize's first pass: each record read and checked once, its words counted.

What is kept grows with the distinct words, never with the records: a vocabulary (word -> id);
per method, a count per word and class of the inputs holding the word (predicted as the class,
labelled as it, both); and a spool file on disk with one row per (record, distinct word): its
line, group (method, target, gold label, predicted class) and both rules' values. The later
passes read the spool, not the records: the rule a method's words score by is known only once
every record of it was seen (signed or not), and the words whose intervals are drawn only once
all were counted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from ..errors import BadInput
from ..records.input_words import input_words
from ..records.record import input_digest
from ..records.spans import is_signed
from ..records.variants import MethodLabels

SPOOL = np.dtype([("line", "<i8"), ("group", "<i4"), ("word", "<i4"), ("total", "<f8"), ("strongest", "<f8")])
# Records remembered to tell a record given twice (and an input's several records, one per target
# class, counted once in the association): explain writes an input's records together, so the
# last ones suffice; a repeat further apart than this is not seen.
RECENT = 16_384
# Label names no record's target has named yet (a class the model never predicted), held apart
# until the end; more of them than there can be classes is refused.
MOST_UNNAMED = 256
_ROWS_BUFFERED = 65_536


def gold_key(label: Any) -> tuple | None:
    """A gold label as compared: ("i", index) for an index or its digits, ("n", name) for a
    class name (case-folded and stripped, as inputs' labels are resolved), None for none."""
    if label is None:
        return None
    if isinstance(label, int):
        return ("i", label)
    text = str(label).strip()
    if text.isascii() and text.isdigit():
        return ("i", int(text))
    return ("n", text.casefold())


class Counts:
    """Per word (rows, grown as the vocabulary grows) and class: int32 counts."""

    def __init__(self, columns: int) -> None:
        self.table = np.zeros((64, columns), dtype=np.int32)

    def grow(self, size: int) -> None:
        """Rows for ``size`` words at least."""
        if len(self.table) < size:
            grown = np.zeros((max(size, 2 * len(self.table)), self.table.shape[1]), dtype=np.int32)
            grown[: len(self.table)] = self.table
            self.table = grown

    def add(self, words: np.ndarray, columns, size: int) -> None:
        self.grow(size)
        for column in columns:
            self.table[words, column] += 1


@dataclass
class MethodSeen:
    """One method's records so far: what its summary needs besides the spool."""

    label: str
    library: str | None
    first_line: int
    classes: int
    multi_label: bool
    signed: bool = False
    names: dict[int, tuple[str, int]] = field(default_factory=dict)  # class -> (its name, the line naming it)
    inputs: int = 0  # distinct inputs counted in the association
    labelled_inputs: int = 0
    predicted: np.ndarray | None = None  # inputs predicted as (multi-label: active for) each class
    # Inputs holding each word: [0] all, [1 + c] predicted as c (without gold labels)...
    holding: Counts | None = None
    # ... and of those with a gold label: [0] all, [1 + c] predicted as c, [1 + C + c] labelled c,
    # [1 + 2C + c] both.
    labelled: Counts | None = None
    unnamed: dict[str, tuple[Counts, int]] = field(default_factory=dict)  # a name not yet known -> counts, line
    gold_lines: dict[tuple, int] = field(default_factory=dict)  # each gold label -> its first line
    recent: OrderedDict = field(default_factory=OrderedDict)  # digest of (input, target) -> line
    recent_inputs: OrderedDict = field(default_factory=OrderedDict)
    # What the association compared with, its corrected level and how many tests it made (once counted).
    support: str = "base rate"
    level: float = 0.95
    tests: int = 0


class WordTally:
    """Pass one over the records (``chosen``: summarize's options), writing ``spool``; ``place(line)``
    names a record in a message (``file:line``, or the item of a list in memory)."""

    def __init__(self, chosen, place: Callable[[int], str], spool: BinaryIO) -> None:
        self.chosen, self.place, self.spool = chosen, place, spool
        self.vocabulary: dict[str, int] = {}
        self.is_word = bytearray()
        self.methods: dict[str, MethodSeen] = {}
        self.groups: dict[tuple, int] = {}  # (method, target, gold key, predicted) -> id
        self.group_inputs: list[int] = []
        self.labels = MethodLabels()
        self.model: tuple[str, str, int] | None = None  # fingerprint, name, line of the first record
        self.records = 0
        self._rows: list[tuple] = []

    def add(self, record, line: int) -> None:
        where = self.place(line)
        self._same_model(record, line)
        method = self._method(record, line)
        self._once(method, record, line)
        found = input_words(record, where, self.chosen.tokens, self.chosen.keep_case)
        if not self.chosen.symbols:
            found = [word for word in found if word.is_word]
        method.signed = method.signed or is_signed(record)
        ids = [self._word_id(word.key, word.is_word) for word in found]
        gold = None if method.multi_label else gold_key(record.label)
        if gold is not None and gold[0] == "i" and not 0 <= gold[1] < method.classes:
            raise BadInput(f"{where}: label {record.label!r} is no class of the model ({method.classes} classes)")
        group = self._group(method, record, gold, line)
        self.group_inputs[group] += 1
        self._rows += [(line, group, i, word.total, word.strongest) for i, word in zip(ids, found)]
        if len(self._rows) >= _ROWS_BUFFERED:
            self.flush()
        self._associate(method, record, gold, np.asarray(ids, dtype=np.int64), line)
        self.records += 1

    def flush(self) -> None:
        if self._rows:
            self.spool.write(np.array(self._rows, dtype=SPOOL).tobytes())
            self._rows = []

    def _same_model(self, record, line: int) -> None:
        """One model's records: the same weights' fingerprint wherever two records both name one;
        where one does not (a map made elsewhere), the same model name."""
        fingerprint, name = record.model_fingerprint or "", record.model or ""
        if self.model is None:
            self.model = (fingerprint, name, line)
            return
        first_fingerprint, first_name, first = self.model
        if fingerprint and not first_fingerprint:
            self.model = (fingerprint, first_name, first)  # the weights are named from here on
        if fingerprint and first_fingerprint:
            differs = fingerprint != first_fingerprint
        else:  # a record naming no model (another tool's, unaligned) cannot be told apart
            differs = bool(name and first_name and name != first_name)
        if differs:
            raise BadInput(
                f"{self.place(line)}: records of another model ({name!r}, weights {fingerprint or 'not named'}) than "
                f"{self.place(first)}'s ({first_name!r}, weights {first_fingerprint or 'not named'}): summarize one "
                "model's records at a time"
            )

    def _method(self, record, line: int) -> MethodSeen:
        where = self.place(line)
        if not record.probs:
            raise BadInput(f"{where}: a record without 'probs' cannot be summarized: its classes and prediction are unknown")
        label = self.labels.label(record)
        seen = self.methods.get(label)
        if seen is None:
            self._one_library(record, line)
            seen = self.methods[label] = MethodSeen(label, record.library, line, len(record.probs), record.multi_label)
            seen.predicted = np.zeros(seen.classes, dtype=np.int64)
            seen.holding, seen.labelled = Counts(1 + seen.classes), Counts(1 + 3 * seen.classes)
        elif record.multi_label != seen.multi_label:
            kind = "multi-label" if record.multi_label else "single-label"
            raise BadInput(f"{where}: a {kind} record, where {self.place(seen.first_line)}'s record of {label} is not: "
                           "records of one model only")
        elif len(record.probs) != seen.classes:
            raise BadInput(f"{where}: {len(record.probs)} classes, where {self.place(seen.first_line)}'s record of "
                           f"{label} has {seen.classes}: records of one model only")
        if not 0 <= record.target < seen.classes or not 0 <= record.predicted < seen.classes:
            raise BadInput(f"{where}: target or predicted class past the {seen.classes} classes of its probs")
        named = seen.names.setdefault(record.target, (record.target_name, line))
        if named[0] != record.target_name:
            raise BadInput(f"{where}: class {record.target} is named {record.target_name!r}, where "
                           f"{self.place(named[1])} names it {named[0]!r}: records of one model only")
        return seen

    def _one_library(self, record, line: int) -> None:
        for other in self.methods.values():
            if (other.label.split("[")[0] == record.method and other.library and record.library
                    and other.library != record.library):
                raise BadInput(
                    f"{self.place(line)}: records of method {record.method!r} made with another reference library "
                    f"({record.library}) than {self.place(other.first_line)}'s ({other.library}): a summary is of "
                    "one run; summarize each library's records apart"
                )

    def _once(self, method: MethodSeen, record, line: int) -> None:
        """A record of an input and target already counted is refused: its words would count twice."""
        digest = input_digest(record, str(record.target))
        first = method.recent.get(digest)
        if first is not None:
            raise BadInput(
                f"{self.place(line)}: the same input (id {record.id!r}) and target as {self.place(first)}, for "
                f"{method.label}: its words would count twice; keep one record of each"
            )
        method.recent[digest] = line
        if len(method.recent) > RECENT:
            method.recent.popitem(last=False)

    def _word_id(self, key: str, is_word: bool) -> int:
        index = self.vocabulary.get(key)
        if index is None:
            index = self.vocabulary[key] = len(self.vocabulary)
            self.is_word.append(is_word)
        return index

    def _group(self, method: MethodSeen, record, gold, line: int) -> int:
        if gold is not None:
            method.gold_lines.setdefault(gold, line)
        key = (method.label, record.target, gold, None if method.multi_label else record.predicted)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = len(self.group_inputs)
            self.group_inputs.append(0)
        return group

    def _associate(self, method: MethodSeen, record, gold, ids: np.ndarray, line: int) -> None:
        """The input's words counted once per method with its predicted class(es) and gold label."""
        digest = input_digest(record)
        if digest in method.recent_inputs:
            return  # another target's record of an input counted already
        method.recent_inputs[digest] = None
        if len(method.recent_inputs) > RECENT:
            method.recent_inputs.popitem(last=False)
        predicted = [c for c, p in enumerate(record.probs) if p > 0.5] if method.multi_label else [record.predicted]
        method.inputs += 1
        method.predicted[predicted] += 1
        size, classes = len(self.vocabulary), method.classes
        if gold is None:
            method.holding.add(ids, [0, *(1 + c for c in predicted)], size)
            return
        method.labelled_inputs += 1
        labelled = class_of(method, gold)
        if labelled is None:  # a name no record's target has named yet: held apart until the end
            if gold[1] not in method.unnamed and len(method.unnamed) >= MOST_UNNAMED:
                raise BadInput(f"{self.place(line)}: more than {MOST_UNNAMED} label names that name no class of "
                               "the records' targets: labels are the model's classes")
            counts, _ = method.unnamed.setdefault(gold[1], (Counts(1 + classes), line))
            counts.add(ids, [0, *(1 + c for c in predicted)], size)
            return
        columns = [0, *(1 + c for c in predicted), 1 + classes + labelled]
        columns += [1 + 2 * classes + labelled] if labelled in predicted else []
        method.labelled.add(ids, columns, size)


def class_of(method: MethodSeen, gold: tuple) -> int | None:
    """The class a gold label names: its index, or the class whose name the records' targets gave
    it (None: a name no record gave yet)."""
    if gold[0] == "i":
        return gold[1]
    return next((c for c, (name, _) in method.names.items() if name.strip().casefold() == gold[1]), None)


def settle_names(tally: WordTally) -> None:
    """Each label name held apart, now that every record's target named its class: its counts join
    its class's. A name of none of them is a class no record targets (a model that never predicted
    it): counted as labelled with none of the named classes. Refused (a typo would call every
    prediction wrong), naming its first line: such a name where every class is named, or more such
    names than classes left unnamed."""
    for method in tally.methods.values():
        unknown = [(gold, line) for gold, line in method.gold_lines.items()
                   if gold[0] == "n" and class_of(method, gold) is None]
        room = method.classes - len(method.names)
        if len(unknown) > room:
            gold, line = unknown[room] if room else unknown[0]
            known = ", ".join(name for name, _ in sorted(method.names.values()))
            why = "every class is named" if not room else f"the records' targets leave {room} class(es) unnamed"
            raise BadInput(f"{tally.place(line)}: label {gold[1]!r} names no class the records name ({known}), and "
                           f"{why}; give labels as the model names its classes, or as class indices")
        classes = method.classes
        for name, (counts, _) in method.unnamed.items():
            labelled = class_of(method, ("n", name))
            table = counts.table
            size = len(table)
            method.labelled.grow(size)
            target = method.labelled.table
            target[:size, : 1 + classes] += table
            if labelled is not None:
                target[:size, 1 + classes + labelled] += table[:, 0]
                target[:size, 1 + 2 * classes + labelled] += table[:, 1 + labelled]
        method.unnamed.clear()
