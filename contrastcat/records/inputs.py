"""The inputs ``explain`` reads: JSONL (one object a line) or CSV with a header.

Fields: ``text`` (required, name set by ``text_field``), ``id`` (optional
string or number; defaults to the line number), ``label`` (optional: class
index or class name); with ``pair_field``, that field too (required): the second
text of a sentence pair (NLI's hypothesis, a reranker's passage).

Rows are read as a stream (:meth:`InputFile.rows`), so memory does not grow
with the number of inputs. A bad line raises :class:`BadInput` naming file
and line; with a ``skipped`` list its message goes there and the line is left
out. :meth:`InputFile.check` reads everything once first, for runs that must
fail before they write anything.
"""

from __future__ import annotations

import csv
import functools
import itertools
import math
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import arguments
from ..errors import BadInput, ContrastCatWarning, located
from ..spec import Names, backticked
from ..io import jsonl
from ..io.lines import LineSource, Overlong, line_limit
from .evidence import read_spans

# A class name is short. Records carry their input's label, and a reader checking gold labels
# keeps each distinct one until the model loads: a longer one is refused where it is read.
LONGEST_LABEL = 1000


@dataclass(frozen=True)
class InputRow:
    line: int  # 1-based line in the source file (CSV: the line where the row starts)
    id: Any
    text: str
    label: Any = None  # int, class name, or None
    pair: str | None = None  # the second text of a sentence pair
    # Character spans known to decide the label (records.evidence: (start, end, segment) each);
    # None: the row gives none (or no evidence field was named).
    evidence: tuple[tuple[int, int, int], ...] | None = None


@dataclass(frozen=True)
class InputFields:
    """The names of a row's fields (a CSV's columns): its text, id, label, a pair's second text
    (None: single texts) and its evidence spans (None: not read)."""

    text: str = "text"
    id: str = "id"
    label: str = "label"
    pair: str | None = None
    evidence: str | None = None

    @property
    def named(self) -> tuple[str, ...]:
        return (self.text, self.id, self.label)


SKIPPED_KEPT = 20  # messages kept of the lines skipped; the command line shows as many (cli.explain)


class SkippedLines:
    """The bad lines an ``on_error="skip"`` run leaves out: the first :data:`SKIPPED_KEPT`
    messages, and how many there were in all. Only the first are ever shown, and keeping one
    message for each of millions of bad lines made memory grow with them (about 135 bytes a
    line); the count stays exact. ``len`` is the count; iterating or indexing gives the
    messages kept. It is appended to as a list would be: the readers and target checks take either."""

    def __init__(self, kept: int = SKIPPED_KEPT) -> None:
        self.kept = kept
        self.messages: list[str] = []
        self.count = 0

    def append(self, message: str) -> None:
        self.count += 1
        if len(self.messages) < self.kept:
            self.messages.append(message)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        return iter(self.messages)

    def __getitem__(self, index):
        return self.messages[index]

    def __repr__(self) -> str:
        return f"SkippedLines({self.count} skipped, first {len(self.messages)}: {self.messages!r})"


class _RowProblem(Exception):
    """One input row that cannot be used; the message has no location yet."""


MAX_JSON_DIGITS = 4300  # Python's limit for converting an integer to text, so for writing it
MAX_JSON_INT = 10**MAX_JSON_DIGITS


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fields_of(obj: Mapping, shown: int = 8) -> str:
    """The fields a row has, for a message that says which one is missing (the first ``shown``)."""
    names = [str(key) for key in list(obj)[: shown + 1]]
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "") if names else "none"


def _missing(obj: Mapping, field: str, what: str, named: Names = backticked) -> str:
    return f"missing {what} field {field!r} (its fields: {_fields_of(obj)}; {named(what + '_field')} names another)"


def _text(obj: dict, field: str, what: str, named: Names = backticked) -> str:
    if field not in obj:
        raise _RowProblem(_missing(obj, field, what, named))
    text = obj[field]
    if not isinstance(text, str):
        raise _RowProblem(f"field {field!r} is not a string")
    if not text or text.isspace():  # not strip(): it would copy a long text to look at it
        raise _RowProblem(f"field {field!r} is empty")
    return text


def _row(line: int, obj: dict, fields: InputFields, named: Names = backticked) -> InputRow:
    """One row read (``named``: how the caller spells an option, for a missing field's message)."""
    text = _text(obj, fields.text, "text", named)
    pair = None if fields.pair is None else _text(obj, fields.pair, "pair", named)
    checked = [(fields.text, text), (fields.id, obj.get(fields.id)), (fields.label, obj.get(fields.label))]
    if fields.pair is not None:
        checked.append((fields.pair, pair))
    for name, value in checked:
        if isinstance(value, str) and not _encodable(value):
            raise _RowProblem(f"field {name!r} is not valid Unicode (it holds an unpaired surrogate)")
        if arguments.plain_int(value) and abs(value) >= MAX_JSON_INT:
            raise _RowProblem(f"field {name!r} has more than {MAX_JSON_DIGITS} digits, more than a JSON file holds")
    identifier = obj.get(fields.id)
    if identifier is None or identifier == "":
        identifier = line
    elif isinstance(identifier, bool) or not isinstance(identifier, (str, int, float)):
        raise _RowProblem(f"field {fields.id!r} must be a string or a number")
    elif isinstance(identifier, float) and not math.isfinite(identifier):  # JSON cannot write it back
        raise _RowProblem(f"field {fields.id!r} must be a finite number, got {identifier!r}")
    label = obj.get(fields.label)
    if label is not None and not (isinstance(label, str) or arguments.plain_int(label)):
        raise _RowProblem(f"field {fields.label!r} must be a class index or a class name")
    if isinstance(label, str) and len(label) > LONGEST_LABEL:
        raise _RowProblem(
            f"field {fields.label!r} is {len(label)} characters long: a class name is at most {LONGEST_LABEL}"
        )
    evidence = _evidence(obj, fields.evidence, (text,) if pair is None else (text, pair))
    return InputRow(line=line, id=identifier, text=text, label=label, pair=pair, evidence=evidence)


def _evidence(obj: dict, field: str | None, texts: tuple[str, ...]) -> tuple[tuple[int, int, int], ...] | None:
    """The row's evidence spans, checked against its texts; None where it has none. A CSV cell
    holds them as JSON text (``[[4, 9]]``); an empty cell or a null is none."""
    value = None if field is None else obj.get(field)
    if hasattr(value, "tolist"):  # a NumPy array (of NumPy integers) from Python: its plain values
        value = value.tolist()
    if value is None or (isinstance(value, str) and value.strip() in ("", "null")):
        return None
    if isinstance(value, str):
        try:
            value = jsonl.parse(value)
        except (jsonl.NotStrictJSON, ValueError):
            raise _RowProblem(f"field {field!r} must be a JSON list of [start, end] character spans, "
                              f"got {arguments.shown(value, 40)}") from None
    try:
        return read_spans(value, texts, f"field {field!r}")
    except BadInput as problem:
        raise _RowProblem(str(problem)) from None


class InputFile:
    """The rows of one JSONL or CSV file (``-``: standard input), read as a stream."""

    def __init__(self, path: str, fields: InputFields = InputFields(), named: Names = backticked) -> None:
        self.source = LineSource(path)
        self.named = named  # how the caller spells an option, for the warning of a forgotten pair
        self.fields = fields
        self.checked: int | None = None  # rows found by check()
        self._pair_unused = False  # said once: rows carry a pair no one asked to explain

    @property
    def name(self) -> str:
        return self.source.name

    def check(self) -> int:
        """Read every line once and raise on the first bad one; returns the number of rows.
        Standard input is kept for the pass that follows."""
        self.checked = sum(1 for _ in self._rows(None, keep=True))
        return self.checked

    def rows(self, skipped: list[str] | SkippedLines | None = None) -> Iterator[InputRow]:
        """The rows, in file order; a bad line raises, or with ``skipped`` is listed there and left out."""
        return self._rows(skipped, keep=False)

    def _rows(self, skipped: list[str] | SkippedLines | None, keep: bool) -> Iterator[InputRow]:
        name = self.name
        fields = self.fields
        found, with_evidence = 0, 0

        def bad(line: int | None, problem: str) -> None:
            message = located(name, line, problem)
            if skipped is None:
                raise BadInput(message)
            skipped.append(message)

        def row(line: int, obj: dict) -> InputRow | None:
            if fields.pair is None and not self._pair_unused:
                self._pair_unused = _warn_if_pair_forgotten(f"{name}:{line}", obj, fields.named, self.named)
            try:
                return _row(line, obj, fields, self.named)
            except _RowProblem as problem:
                bad(line, str(problem))
                return None

        lines = self._decoded(keep)
        first = next(lines, None)
        if first is not None:
            lines = itertools.chain([first], lines)
        if first is None or _input_format(self.source.path, first[1]) == "jsonl":
            parsed = _jsonl_objects(lines, bad)
        else:
            parsed = _csv_objects(name, _bare_cr_split(lines), fields, bad, self.named)
        for number, obj in parsed:
            made = row(number, obj)
            if made is not None:
                found += 1
                with_evidence += made.evidence is not None
                yield made
        if not found:
            more = f" ({len(skipped)} bad line(s) skipped)" if skipped else ""
            raise BadInput(located(name, None, f"no input rows{more}"))
        if fields.evidence is not None and not with_evidence:
            # With skip too: the output is published only at the end, so nothing is written.
            _no_evidence(located(name, None, ""), fields.evidence, self.named)

    def _decoded(self, keep: bool) -> Iterator[tuple[int, str | Overlong, int]]:
        """Lines with their ends, and their sizes in bytes. Bytes that are not UTF-8 become lone
        surrogates here, so the row they belong to (a CSV row may span lines) is refused whole,
        never spliced."""
        return self.source.sized_lines(keep, errors="surrogateescape")

    def close(self) -> None:
        self.source.close()


def _input_format(path: str, first_line: str | Overlong) -> str:
    lowered = path.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if isinstance(first_line, Overlong):
        return "jsonl"  # no CSV header is that long; the JSON reader names the line
    first = first_line.lstrip()[:1]
    return "jsonl" if first in ("{", "") else "csv"


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a byte that is not UTF-8


def _not_utf8(text: str) -> str | None:
    """Where a decoded line holds bytes that are not UTF-8 (see InputFile._decoded), or None."""
    found = _ESCAPED_BYTE.search(text)
    if found is None:
        return None
    at = found.start()
    return f"not UTF-8 text (byte {len(text[:at].encode('utf-8', 'surrogateescape'))} of the line)"


def _bare_cr_split(lines) -> Iterator[tuple[int, str | Overlong, int]]:
    """CSV lines may end in a lone CR (old Mac files), as the csv module's universal newlines
    allow; such pieces are numbered as lines of their own, each with its size in bytes."""
    extra = 0
    for number, raw, size in lines:
        pieces = re.split(r"(?<=\r)(?!\n)", raw) if not isinstance(raw, Overlong) and "\r" in raw else [raw]
        if len(pieces) == 1:
            yield number + extra, raw, size
            continue
        for piece in pieces:
            if piece:  # within the line's limit: encoding a piece (not ASCII) to count it is bounded
                size = len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogateescape"))
                yield number + extra, piece, size
                extra += 1
        extra -= 1


def _within_limit(lines, bad) -> Iterator[tuple[int, str]]:
    """The lines (sizes dropped), an overlong one reported as bad (and so skippable: JSON Lines
    rows are lines)."""
    for number, raw, _ in lines:
        if isinstance(raw, Overlong):
            bad(number, raw.problem)
        else:
            yield number, raw


def _jsonl_objects(lines, bad) -> Iterator[tuple[int, dict]]:
    for number, raw in jsonl.lines(_within_limit(lines, bad)):
        problem = _not_utf8(raw)
        if problem:
            bad(number, problem)
            continue
        try:
            obj = jsonl.parse(raw)
        except jsonl.NotStrictJSON as error:
            bad(number, str(error))
            continue
        if not isinstance(obj, dict):
            bad(number, "expected a JSON object")
            continue
        yield number, obj


def _csv_objects(name: str, lines, fields: InputFields, bad, named: Names = backticked) -> Iterator[tuple[int, dict]]:
    taken: dict[int, int] = {}  # the csv reader's line count -> file line, for the lines of the current row
    sizes: dict[int, int] = {}  # the same lines' sizes: a row of many short lines is bounded too
    held = [0]

    def text():
        for number, raw, size in lines:
            if isinstance(raw, Overlong):  # never skippable: where its rows end cannot be known
                raise BadInput(located(name, number, raw.problem))
            key = len(taken) + dropped[0]
            taken[key], sizes[key] = number, size
            held[0] += size
            # Quoted fields spanning lines: never skippable either, since the reader would stop
            # inside a field and read the lines after it as rows of their own (false inputs). A
            # field is never longer than its row, so the csv module's field limit is never met.
            # Counted as a line is: in bytes (the limit is in MiB; an emoji is four), without
            # the row's final line end (the line ends inside its quoted fields are its text).
            if held[0] - _end_length(raw) > limit:
                start = taken[min(taken)]
                raise BadInput(located(name, start, f"a row longer than {limit >> 20} MiB; {Overlong(limit).advice}"))
            yield raw

    dropped = [0]
    # strict: a stray quote is an error, not a field that silently swallows the lines after it.
    reader = csv.reader(text(), strict=True)
    limit = line_limit()
    header = _csv_header(name, reader, limit, (fields.text, fields.pair), named)
    while True:
        before = reader.line_num
        for old in [key for key in taken if key < before]:  # memory stays that of one row
            del taken[old]
            held[0] -= sizes.pop(old)
            dropped[0] += 1
        try:
            values = _next_row(reader, limit)
        except StopIteration:
            break
        except csv.Error as error:
            start = taken.get(before, before + 1)  # a quoted field may span lines: where the row starts
            if "unexpected end of data" in str(error):
                bad(start, "a quoted field is never closed (it would swallow the rest of the file)")
            else:
                bad(start, f"malformed CSV ({error})")
            continue
        start = taken[before]
        if not values or (len(values) == 1 and not values[0].strip() and len(header) > 1):
            continue  # a blank line
        if len(values) != len(header):
            bad(start, f"{len(values)} field(s), but the header has {len(header)}")
            continue
        problem = next((p for p in map(_not_utf8, values) if p), None)
        if problem:
            bad(start, problem.replace(" of the line", " of a field"))
            continue
        obj: dict[str, Any] = dict(zip(header, values))
        if obj.get(fields.label) == "":
            obj[fields.label] = None
        yield start, obj


def _csv_header(name: str, reader, limit: int, needed: tuple[str | None, ...], named: Names = backticked) -> list[str]:
    """The header row: there, UTF-8, holding every column ``needed``, each column once. Never
    skippable: every row depends on it."""
    try:
        header = _next_row(reader, limit)
    except StopIteration:
        raise BadInput(located(name, None, "empty CSV file (no header)")) from None
    except csv.Error as error:
        raise BadInput(located(name, 1, f"unreadable CSV header ({error})")) from None
    if any(_not_utf8(column) for column in header):
        raise BadInput(located(name, 1, "the CSV header is not UTF-8 text"))
    for column in needed:
        if column is not None and column not in header:
            raise BadInput(located(name, 1, f"no column {column!r} (columns: {', '.join(header) or 'none'}; "
                                            f"{named('text_field')}, {named('label_field')}, ... name others)"))
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise BadInput(located(name, 1, f"column {repeated[0]!r} appears more than once in the header"))
    return header


def _end_length(line: str) -> int:
    """How long a CSV line's end is: CRLF, LF or (old Mac files) a lone CR."""
    return 2 if line.endswith("\r\n") else 1 if line.endswith(("\n", "\r")) else 0


def _next_row(reader, limit: int) -> list[str]:
    """The csv reader's next row, a field as long as a line may be (the csv module's own limit,
    131,072 characters, is process-wide and far below a JSON Lines text's: set for this read only)."""
    before = csv.field_size_limit(limit)
    try:
        return next(reader)
    finally:
        csv.field_size_limit(before)


def read_inputs(
    path: str,
    text_field: str = "text",
    id_field: str = "id",
    label_field: str = "label",
    skipped: list[str] | None = None,
    pair_field: str | None = None,
) -> list[InputRow]:
    """All rows of a JSONL or CSV file (``-``: standard input), validated (see :class:`InputFile`)."""
    return list(InputFile(path, InputFields(text_field, id_field, label_field, pair_field)).rows(skipped))


# The names a sentence pair's second text goes by in common data sets (GLUE, SNLI/MNLI, QQP, the
# tokenizers' own ``text_pair``, SQuAD-style ``context``, rerankers' ``document``): a row with one of
# them, explained without ``pair_field``, is most likely a pair classifier's input with the option
# forgotten. ``premise`` is one too where it is not the text (the hypothesis is explained alone).
PAIR_NAMES = (
    "pair", "text_pair", "text_b", "text2", "hypothesis", "premise", "sentence2", "sentence_b", "question2",
    "passage", "context", "document",
)
# Names too common on their own to mean a pair, that do beside their partner as the text field:
# QNLI's ``question`` and ``sentence`` (``sentence`` alone is SST-2's single text).
PARTNER_NAMES = {"question": ("sentence",), "sentence": ("question",)}


def _key(name: str) -> str:
    """A field name however it is written (``Hypothesis``, ``text-b``, ``sentence_2``). Asked
    of every field of every row until a warning is given: names of a usual length are cached,
    long ones (a crafted file's megabyte keys) are not, so the cache stays small."""
    return _short_key(name) if len(name) <= _CACHED_NAME else re.sub(r"[\s_\-]", "", name).lower()


_CACHED_NAME = 64  # longer than any pair column's name


@functools.lru_cache(maxsize=1024)
def _short_key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


_PAIR_KEYS = frozenset(map(_key, PAIR_NAMES))
_PARTNER_KEYS = {_key(text): frozenset(map(_key, partners)) for text, partners in PARTNER_NAMES.items()}


def _pair_like(key: str, text_field: str = "text") -> bool:
    """A field name that says "the second text" beside ``text_field``, however it is written;
    never the text field itself (NLI explained by its hypothesis alone has a ``hypothesis`` text)."""
    if not isinstance(key, str) or _key(key) == _key(text_field):
        return False
    return _key(key) in _PAIR_KEYS or _key(key) in _PARTNER_KEYS.get(_key(text_field), ())


def _warn_if_pair_forgotten(where: str, obj: Mapping, fields: tuple[str, str, str], named: Names = backticked) -> bool:
    """Warn (and say so) where a row holds a second text no one asked to explain: the first
    text alone would be explained, silently, for the pairs the data was meant to be."""
    name = next((key for key, value in obj.items()
                 if key not in fields and _pair_like(key, fields[0]) and isinstance(value, str) and value), None)
    if name is None:
        return False
    warnings.warn(
        f"{where}: the inputs have a {name!r} field, but {named('pair_field')} is not given: only {fields[0]!r} is "
        f"explained (pass {named('pair_field')} {name} to explain them as sentence pairs)",
        ContrastCatWarning, stacklevel=3,
    )
    return True


def rows_from_objects(items, fields: InputFields = InputFields(), source: str = "<inputs>") -> list[InputRow]:
    """Input rows from Python objects: strings (the text), ``(text, pair)`` tuples (a sentence
    pair), or mappings with a text field (a list of dicts, a ``datasets.Dataset``; with
    ``fields.pair``, the pair's second text there too). Pairs and single texts do not mix.
    Item i counts as line i + 1 in messages; ids default to i."""
    text_field, id_field, label_field = fields.named
    pair_field = fields.pair
    if pair_field is not None and pair_field in fields.named:
        raise BadInput(f"{source}: `pair_field` {pair_field!r} is also the text, id or label field")
    if fields.evidence is not None and fields.evidence in (*fields.named, pair_field):
        raise BadInput(f"{source}: `evidence_field` {fields.evidence!r} is also the text, id, label or pair field")
    # The key a (text, pair) tuple's second text goes under: the pair field, or a name no other field has.
    tuple_key = pair_field or next(k for k in ("pair", "second text", "pair text") if k not in fields.named)
    rows, warned = [], pair_field is not None
    for index, item in enumerate(items):
        where = f"{source}: item {index}"
        pair = pair_field
        if isinstance(item, str):
            item = {text_field: item}
        elif isinstance(item, tuple):
            if len(item) != 2:
                raise BadInput(f"{where}: a sentence pair is a (text, pair) tuple of two strings, got {len(item)} items")
            pair = tuple_key
            item = {text_field: item[0], pair: item[1]}
        elif not isinstance(item, Mapping):
            raise BadInput(f"{where}: expected a string, a (text, pair) tuple or a mapping with a {text_field!r} field")
        values = dict(item)
        if text_field not in values:  # said before the default id joins its fields
            raise BadInput(f"{where}: {_missing(values, text_field, 'text', backticked)}")
        values.setdefault(id_field, index)
        if not warned and pair is None:
            warned = _warn_if_pair_forgotten(where, values, fields.named)
        try:
            row = _row(index + 1, values, replace(fields, pair=pair))
        except _RowProblem as problem:
            raise BadInput(f"{where}: {problem}") from None
        if rows and (row.pair is None) != (rows[0].pair is None):
            kinds = ("a sentence pair", "a single text") if row.pair is None else ("a single text", "a sentence pair")
            raise BadInput(f"{where}: is {kinds[1]}, but item 0 is {kinds[0]}: explain pairs and single texts apart")
        rows.append(row)
    if not rows:
        raise BadInput(f"{source}: no inputs")
    if fields.evidence is not None and all(row.evidence is None for row in rows):
        _no_evidence(f"{source}: ", fields.evidence, backticked)
    return rows


def _no_evidence(where: str, field: str, named: Names) -> None:
    """No row has the evidence field asked for: a misspelt name would otherwise give records
    without evidence, silently."""
    raise BadInput(f"{where}no row has the evidence field {field!r} that {named('evidence_field')} names")
