"""Variants of a method (an ablation run) told apart by the settings in which they differ."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from ..errors import BadInput
from ..io import jsonl
from .record import AttributionRecord

# What the labels of one run may hold: the first settings of each method and each variant's
# label, estimated as the memory their JSON takes as one string (a string of any character past
# U+FFFF takes 4 bytes a character) and a Python object's overhead per value. A file
# whose every record names a method (or settings) of its own would otherwise be held whole, many
# times its size; a comparison of methods names a few.
MOST_HELD = 100_000_000
_PER_VALUE = 150  # a setting held: its key and value as Python objects, and its slot in a dict
_PER_LABEL = 400  # a label held: its key, its string, and their slots in a dict and a set


MADE_ELSEWHERE = "made_elsewhere"  # the setting of a record another tool made, once aligned to a model


class MethodLabels:
    """Labels of method variants, kept across chunks of a record stream.

    The first settings seen for a method label it by its name alone; other
    variants of it (an ablation run) are labelled by the settings in which
    they differ from the first, e.g. ``contrastcat[refs_used=5]``; another tool's records under
    a method's name, beside this tool's, by that alone: ``contrastcat[made_elsewhere=True]``
    (or ``…=False`` for this tool's, where the other tool's came first). A label is
    one method's and settings' only: where another's would read the same (a
    method named ``contrastcat[refs_used=5]``; two libraries whose fingerprints
    begin alike), the later one is told apart by a number, ``…#2``.
    """

    def __init__(self, source: str | None = None) -> None:
        self.source = source  # the file the records come from, named where too many are refused
        self._first: dict[tuple[str, bool], dict] = {}  # (method, made elsewhere) -> its first settings
        self._kind: dict[str, bool] = {}  # method -> whether its first record was made elsewhere
        self._labels: dict[str, str] = {}  # what a variant is (method, settings as written) -> its label
        self._taken: set[str] = set()
        self._numbered: dict[str, int] = {}  # a label that reads like another's -> the last number it took
        self._held = 0  # estimated bytes of the above

    def label(self, record: AttributionRecord) -> str:
        own = {**record.settings, "library": record.library}  # a library ablation is a variant too
        # Another tool's map under a method's name has none of its settings: set against this
        # tool's records of that name, it differs by where it was made, not by every setting.
        # Made elsewhere: said so once aligned to a model's tokens, or still without token ids.
        elsewhere = record.settings.get(MADE_ELSEWHERE) is True or not record.token_ids
        first_kind = self._kind.setdefault(record.method, elsewhere)
        base = self._first.get((record.method, elsewhere))
        if base is None:
            size = sys.getsizeof(record.method) + sys.getsizeof(jsonl.dumps(own)) + _PER_VALUE * (len(own) + 1)
            self._hold(record, size)
            base = self._first[record.method, elsewhere] = own
        names = sorted((set(base) | set(own)) - {MADE_ELSEWHERE})
        differing = [(n, own.get(n)) for n in names if not _same(own.get(n), base.get(n))]
        if elsewhere != first_kind:
            differing.insert(0, (MADE_ELSEWHERE, elsewhere))
        variant = jsonl.dumps([record.method, differing])  # as written: 1 and true are two values
        found = self._labels.get(variant)
        if found is None:
            shown = f"{record.method}[{','.join(f'{n}={_short(v)}' for n, v in differing)}]" if differing else record.method
            # Numbered on from the last number this label took: many variants that print alike (1
            # and "1") are numbered in linear time, not by trying #2, #3, ... again for each.
            count = self._numbered.get(shown, 1)
            found = shown if count == 1 else f"{shown}#{count}"
            while found in self._taken:
                count += 1
                found = f"{shown}#{count}"
            self._numbered[shown] = count
            self._hold(record, sys.getsizeof(variant) + 2 * sys.getsizeof(found) + _PER_LABEL)
            self._labels[variant] = found
            self._taken.add(found)
        return found

    def _hold(self, record: AttributionRecord, size: int) -> None:
        self._held += size
        if self._held > MOST_HELD:
            source = self.source or "records"
            where = f"{source}:{record.line}" if record.line is not None else f"{source}: record id {record.id!r}"
            raise BadInput(
                f"{where}: more methods and variants of methods (by their settings) than one run compares: their "
                f"names and settings take over {MOST_HELD // 10**6} MB (does each record name a method or settings "
                "of its own?)"
            )

    def group(self, records: Iterable[AttributionRecord]) -> dict[str, list[AttributionRecord]]:
        groups: dict[str, list[AttributionRecord]] = {}
        for record in records:
            groups.setdefault(self.label(record), []).append(record)
        return groups


def group_by_method(records: Sequence[AttributionRecord]) -> dict[str, list[AttributionRecord]]:
    """Records grouped by method and settings, in order of first appearance (see :class:`MethodLabels`)."""
    return MethodLabels().group(records)


def _same(a, b) -> bool:
    """Equal as written: 1 and true, or 0 and false, are two settings (Python finds them equal)."""
    return a == b and type(a) is type(b)


def _short(value) -> str:
    """Fingerprints are long; their first hex digits tell libraries apart in a label."""
    text = str(value)
    return text[:15] if text.startswith("sha256:") else text
