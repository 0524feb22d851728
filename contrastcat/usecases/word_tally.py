"""Summarize's first pass: each record read and checked once, its words counted.

What is kept grows with the distinct words, never with the records: a vocabulary (word -> id),
per method and gold label a count per word of the inputs holding it and of those predicted as
each class, and a spool file on disk with one row per (record, distinct word): its line, group
(method, target, gold label, predicted class) and both rules' values. The later passes read the
spool, not the records: the rule a method's words score by is known only once every record of
it was seen (signed or not), and the words whose intervals are drawn only once all were counted.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from ..errors import BadInput
from ..records.input_words import input_words
from ..records.spans import is_signed
from ..records.variants import MethodLabels

SPOOL = np.dtype([("line", "<i8"), ("group", "<i4"), ("word", "<i4"), ("total", "<f4"), ("strongest", "<f4")])
# Inputs remembered to count each once per method where a run wrote several records of it (one
# per target class): explain writes an input's records together, so the last ones suffice.
RECENT_INPUTS = 65_536
MOST_GOLD_VALUES = 1_000  # distinct gold labels of one method: classes, named or numbered
_ROWS_BUFFERED = 65_536


def gold_key(label: Any) -> tuple | None:
    """A gold label as compared: ("i", index) for an index or its digits, ("n", name) for a
    class name (case-folded, as inputs' labels are resolved), None for none."""
    if label is None:
        return None
    if isinstance(label, int):
        return ("i", label)
    text = str(label).strip()
    if text.isascii() and text.isdigit():
        return ("i", int(text))
    return ("n", text.casefold())


@dataclass
class MethodSeen:
    """One method's records so far: what its summary needs besides the spool."""

    label: str
    library: str | None
    library_line: int
    classes: int
    multi_label: bool
    signed: bool = False
    names: dict[int, str] = field(default_factory=dict)  # class index -> its name, as records named it
    inputs: int = 0  # distinct inputs counted for the association
    predicted: np.ndarray | None = None  # inputs predicted as (multi-label: active for) each class
    gold_inputs: dict[tuple | None, int] = field(default_factory=dict)
    gold_lines: dict[tuple | None, int] = field(default_factory=dict)
    # gold key -> [words, 1 + classes]: inputs holding the word, and of them predicted as each class
    holding: dict[tuple | None, np.ndarray] = field(default_factory=dict)
    recent: OrderedDict = field(default_factory=OrderedDict)
    # What the association compared with, its corrected level and how many tests it made (once counted).
    support: str = "base rate"
    level: float = 0.95
    tests: int = 0


class WordTally:
    """Pass one over the records of ``source`` (``chosen``: summarize's options), writing ``spool``."""

    def __init__(self, chosen, source: str, spool: BinaryIO) -> None:
        self.chosen, self.source, self.spool = chosen, source, spool
        self.vocabulary: dict[str, int] = {}
        self.is_word = bytearray()
        self.methods: dict[str, MethodSeen] = {}
        self.groups: dict[tuple, int] = {}  # (method, target, gold key, predicted) -> id
        self.group_inputs: list[int] = []
        self.labels = MethodLabels(source)
        self.model: tuple[str, str, int] | None = None  # fingerprint, name, line of the first record
        self.records = 0
        self._rows: list[tuple] = []

    def add(self, record, line: int) -> None:
        where = f"{self.source}:{line}"
        self._same_model(record, line)
        method = self._method(record, line)
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
        self._associate(method, record, gold, ids, line)
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
                f"{self.source}:{line}: records of another model ({name!r}, weights {fingerprint or 'not named'}) than "
                f"line {first}'s ({first_name!r}, weights {first_fingerprint or 'not named'}): summarize one model's "
                "records at a time"
            )

    def _method(self, record, line: int) -> MethodSeen:
        label = self.labels.label(record)
        seen = self.methods.get(label)
        if seen is None:
            for other in self.methods.values():
                if (other.label.split("[")[0] == record.method and other.library and record.library
                        and other.library != record.library):
                    raise BadInput(
                        f"{self.source}:{line}: records of method {record.method!r} made with another reference "
                        f"library ({record.library}) than line {other.library_line}'s ({other.library}): a summary "
                        "is of one run; summarize each library's records apart"
                    )
            seen = self.methods[label] = MethodSeen(label, record.library, line, len(record.probs), record.multi_label)
            seen.predicted = np.zeros(seen.classes, dtype=np.int64)
        elif len(record.probs) != seen.classes or record.multi_label != seen.multi_label:
            raise BadInput(
                f"{self.source}:{line}: {len(record.probs)} classes{' (multi-label)' if record.multi_label else ''}, "
                f"where line {seen.library_line}'s record of {label} has {seen.classes}: records of one model only"
            )
        if not 0 <= record.target < seen.classes or not 0 <= record.predicted < seen.classes:
            raise BadInput(f"{self.source}:{line}: target or predicted class past the {seen.classes} classes of its probs")
        seen.names.setdefault(record.target, record.target_name)
        return seen

    def _word_id(self, key: str, is_word: bool) -> int:
        index = self.vocabulary.get(key)
        if index is None:
            index = self.vocabulary[key] = len(self.vocabulary)
            self.is_word.append(is_word)
        return index

    def _group(self, method: MethodSeen, record, gold, line: int) -> int:
        if gold not in method.gold_lines:
            if len(method.gold_lines) >= MOST_GOLD_VALUES:
                raise BadInput(f"{self.source}:{line}: more than {MOST_GOLD_VALUES} distinct labels: labels are the model's classes")
            method.gold_lines[gold] = line
        key = (method.label, record.target, gold, None if method.multi_label else record.predicted)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = len(self.group_inputs)
            self.group_inputs.append(0)
        return group

    def _associate(self, method: MethodSeen, record, gold, ids: list[int], line: int) -> None:
        """The input's words counted once per method with its predicted class(es) and gold label."""
        texts = (record.text,) if record.pair is None else (record.text, record.pair)
        digest = hashlib.blake2b(repr((record.id, texts)).encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if digest in method.recent:
            method.recent.move_to_end(digest)
            return
        method.recent[digest] = None
        if len(method.recent) > RECENT_INPUTS:
            method.recent.popitem(last=False)
        predicted = [c for c, p in enumerate(record.probs) if p > 0.5] if method.multi_label else [record.predicted]
        method.inputs += 1
        method.predicted[predicted] += 1
        method.gold_inputs[gold] = method.gold_inputs.get(gold, 0) + 1
        table = method.holding.get(gold)
        size = len(self.vocabulary)
        if table is None or len(table) < size:
            grown = np.zeros((max(size, 2 * (0 if table is None else len(table)), 64), 1 + method.classes), np.int64)
            if table is not None:
                grown[: len(table)] = table
            table = method.holding[gold] = grown
        if ids:
            where = np.asarray(ids)
            table[where, 0] += 1
            for c in predicted:
                table[where, 1 + c] += 1
