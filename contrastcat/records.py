"""The files ``explain`` reads and writes: input rows and attribution records.

Inputs are JSONL (one object a line) or CSV with a header. Fields:
``text`` (required, name set by ``text_field``), ``id`` (optional string or
number; defaults to the line number), ``label`` (optional: class index or
class name).

An attribution record is one JSON object a line, fields as in
:class:`AttributionRecord`. Readers validate everything up front, so a bad
line is reported (file and line) before any work or output starts; with a
``skipped`` list, bad input lines are collected there instead and left out.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from . import jsonl
from .errors import BadInput, located
from .files import STDIO, atomic_text_output, read_text
from .spans import record_html


@dataclass(frozen=True)
class InputRow:
    line: int  # 1-based line in the source file (CSV: the line where the row starts)
    id: Any
    text: str
    label: Any = None  # int, class name, or None


@dataclass
class AttributionRecord:
    """One explained input. ``scores[i]`` belongs to ``tokens[i]``, in [0, 1]."""

    id: Any
    text: str
    tokens: list[str]
    token_ids: list[int]
    offsets: list[list[int]]  # character span [start, end) of each token in ``text``
    special: list[bool]  # special tokens ([CLS], [SEP], ...) are never perturbed
    scores: list[float]
    target: int
    target_name: str
    probs: list[float]  # softmax over classes for the unperturbed input
    predicted: int
    label: Any
    method: str
    model: str
    model_fingerprint: str
    library: str | None  # fingerprint of the reference library, or null
    refs_kept: int | None = None  # Contrast-CAT: maps kept by the deletion test
    refs_total: int | None = None  # Contrast-CAT: maps computed
    truncated: bool = False  # the text had more tokens than the model's length limit
    tokens_dropped: int = 0  # how many tokens were cut off its end
    pad_token_id: int | None = None  # the token batches were padded with (decoders: often EOS)
    model_dtype: str | None = None  # the weights' precision: float32, bfloat16, float16
    settings: dict = field(default_factory=dict)
    line: int | None = field(default=None, compare=False, repr=False)  # where it was read; never written

    def to_dict(self) -> dict:
        """The record as written to JSONL (without where it was read from)."""
        values = asdict(self)
        del values["line"]
        return values

    def to_json(self) -> str:
        return jsonl.dumps(self.to_dict())

    def _repr_html_(self) -> str:
        return record_html(self)


class Records(list):
    """A list of records, as ``contrastcat.explain(...)`` returns them: a notebook shows them coloured."""

    def to_dicts(self) -> list[dict]:
        return [record.to_dict() for record in self]

    def save(self, path: str) -> int:
        """Write them as JSONL (atomically; ``-``: standard output)."""
        return write_records(path, self)

    def _repr_html_(self) -> str:
        shown = [record_html(record) for record in self[:50]]
        more = f"<p><small>… and {len(self) - 50} more</small></p>" if len(self) > 50 else ""
        return "".join(shown) + more


class _RowProblem(Exception):
    """One input row that cannot be used; the message has no location yet."""


def _input_format(path: str, text: str) -> str:
    lowered = path.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    first = text.lstrip()[:1]
    return "jsonl" if first in ("{", "") else "csv"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _row(line: int, obj: dict, text_field: str, id_field: str, label_field: str) -> InputRow:
    if text_field not in obj:
        raise _RowProblem(f"missing text field {text_field!r}")
    text = obj[text_field]
    if not isinstance(text, str):
        raise _RowProblem(f"field {text_field!r} is not a string")
    if not text.strip():
        raise _RowProblem(f"field {text_field!r} is empty")
    identifier = obj.get(id_field)
    if identifier is None or identifier == "":
        identifier = line
    elif isinstance(identifier, bool) or not isinstance(identifier, (str, int, float)):
        raise _RowProblem(f"field {id_field!r} must be a string or a number")
    label = obj.get(label_field)
    if label is not None and not (isinstance(label, str) or _is_int(label)):
        raise _RowProblem(f"field {label_field!r} must be a class index or a class name")
    return InputRow(line=line, id=identifier, text=text, label=label)


def read_inputs(
    path: str,
    text_field: str = "text",
    id_field: str = "id",
    label_field: str = "label",
    skipped: list[str] | None = None,
) -> list[InputRow]:
    """All rows of a JSONL or CSV file (``-``: standard input), validated.

    A bad line raises :class:`BadInput` naming file and line, unless
    ``skipped`` is given: then each bad line's message is appended there and
    the line is left out.
    """
    content = read_text(path)
    name = "<stdin>" if path == STDIO else path
    rows: list[InputRow] = []

    def bad(line: int | None, problem: str) -> None:
        message = located(name, line, problem)
        if skipped is None:
            raise BadInput(message)
        skipped.append(message)

    def add(line: int, obj: dict) -> None:
        try:
            rows.append(_row(line, obj, text_field, id_field, label_field))
        except _RowProblem as problem:
            bad(line, str(problem))

    if _input_format(path, content) == "jsonl":
        for number, raw in jsonl.lines(content):
            try:
                obj = jsonl.parse(raw)
            except jsonl.NotStrictJSON as error:
                bad(number, str(error))
                continue
            if not isinstance(obj, dict):
                bad(number, "expected a JSON object")
                continue
            add(number, obj)
    else:
        _read_csv(name, content, text_field, label_field, add, bad)
    if not rows:
        more = f" ({len(skipped)} bad line(s) skipped)" if skipped else ""
        raise BadInput(located(name, None, f"no input rows{more}"))
    return rows


def _read_csv(
    name: str,
    content: str,
    text_field: str,
    label_field: str,
    add: Callable[[int, dict], None],
    bad: Callable[[int | None, str], None],
) -> None:
    # strict: a stray quote is an error, not a field that silently swallows the lines after it.
    reader = csv.reader(io.StringIO(content, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise BadInput(located(name, None, "empty CSV file (no header)")) from None
    except csv.Error as error:
        raise BadInput(located(name, 1, f"unreadable CSV header ({error})")) from None
    if text_field not in header:
        raise BadInput(located(name, 1, f"no column {text_field!r} (columns: {', '.join(header)})"))
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise BadInput(located(name, 1, f"column {repeated[0]!r} appears more than once in the header"))
    end = reader.line_num
    while True:
        start = end + 1  # a quoted field may span lines: report the line where the row starts
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            end = reader.line_num
            if "unexpected end of data" in str(error):
                bad(start, "a quoted field is never closed (it would swallow the rest of the file)")
            else:
                bad(start, f"malformed CSV ({error})")
            continue
        end = reader.line_num
        if not values or (len(values) == 1 and not values[0].strip() and len(header) > 1):
            continue  # a blank line
        if len(values) != len(header):
            bad(start, f"{len(values)} field(s), but the header has {len(header)}")
            continue
        obj: dict[str, Any] = dict(zip(header, values))
        if obj.get(label_field) == "":
            obj[label_field] = None
        add(start, obj)


def resolve_label(value: Any, label_names: Sequence[str], where: str) -> int:
    """A label given as an index (int or digit string) or as a class name -> class index."""
    if isinstance(value, bool):
        raise BadInput(f"{where}: label {value!r} is not a class index or name")
    if isinstance(value, int) or (isinstance(value, str) and _integer_text(value)):
        index = int(value)
        if 0 <= index < len(label_names):
            return index
        raise BadInput(f"{where}: label {index} out of range (model has {len(label_names)} classes)")
    if isinstance(value, str):
        lowered = [name.lower() for name in label_names]
        if value.strip().lower() in lowered:
            return lowered.index(value.strip().lower())
    raise BadInput(f"{where}: label {_short_repr(value)} is not one of {', '.join(label_names)} or an index")


def _integer_text(text: str) -> bool:
    """ASCII digits with an optional minus: str.isdigit() also takes '²' and '٣', which int() refuses or misreads."""
    body = text.strip()
    body = body[1:] if body.startswith("-") else body
    return body.isascii() and body.isdigit()


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


SCORE_DECIMALS = 6


def rounded(scores) -> list[float]:
    """Scores as records store them; re-attributions are rounded the same way before comparing."""
    return [round(float(s), SCORE_DECIMALS) for s in scores]


def write_records(path: str, records: Iterable[AttributionRecord], inputs: Sequence[str | None] = ()) -> int:
    """Write records atomically (``-``: standard output); returns how many."""
    count = 0
    with atomic_text_output(path, inputs) as stream:
        for record in records:
            stream.write(record.to_json() + "\n")
            count += 1
    return count


# --- reading records -------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(v) for v in value)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _plain_settings(value: Any) -> bool:
    return isinstance(value, dict) and all(v is None or isinstance(v, (str, int, float, bool)) for v in value.values())


def _index(value: Any) -> bool:
    return _is_int(value) and value >= 0


# What each field of a record must hold, and how to say so.
RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool), "a string or a number"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "tokens": (_list_of(lambda v: isinstance(v, str)), "a list of strings"),
    "scores": (_list_of(_number), "a list of finite numbers"),
    "target": (_index, "a class index (an integer, 0 or more)"),
    "token_ids": (_list_of(_index), "a list of token ids (integers, 0 or more)"),
    "special": (_list_of(lambda v: isinstance(v, bool)), "a list of booleans"),
    "offsets": (_list_of(lambda o: isinstance(o, list) and len(o) == 2 and all(_index(v) for v in o)),
                "a list of [start, end] pairs of integers"),
    "target_name": (lambda v: isinstance(v, str), "a string"),
    "probs": (_list_of(_number), "a list of finite numbers"),
    "predicted": (_index, "a class index (an integer, 0 or more)"),
    "method": (lambda v: isinstance(v, str), "a string"),
    "model": (lambda v: isinstance(v, str), "a string"),
    "model_fingerprint": (lambda v: isinstance(v, str), "a string"),
    "library": (_optional(lambda v: isinstance(v, str)), "a string or null"),
    "refs_kept": (_optional(_index), "an integer or null"),
    "refs_total": (_optional(_index), "an integer or null"),
    "truncated": (lambda v: isinstance(v, bool), "true or false"),
    "tokens_dropped": (_index, "an integer, 0 or more"),
    "pad_token_id": (_optional(_index), "a token id or null"),
    "model_dtype": (_optional(lambda v: v in ("float32", "bfloat16", "float16")), "float32, bfloat16, float16 or null"),
    "settings": (_plain_settings, "an object of plain values (strings, numbers, booleans)"),
}
REQUIRED = ("id", "text", "tokens", "scores", "target")
PER_TOKEN = ("token_ids", "offsets", "special")


def _check_record(obj: dict, where: str) -> AttributionRecord:
    missing = [key for key in REQUIRED if key not in obj]
    if missing:
        raise BadInput(f"{where}: not an attribution record (missing {', '.join(sorted(missing))})")
    for key, (valid, expected) in RECORD_FIELDS.items():
        if key in obj and not (valid(obj[key]) or (key in PER_TOKEN and obj[key] is None)):
            raise BadInput(f"{where}: {key!r} must be {expected}")
    length = len(obj["tokens"])
    if len(obj["scores"]) != length:
        raise BadInput(f"{where}: 'tokens' and 'scores' must be lists of the same length")
    for key in PER_TOKEN:
        if obj.get(key) is not None and len(obj[key]) != length:
            raise BadInput(f"{where}: {key!r} must be a list with one entry per token")
    offsets = obj.get("offsets")
    if offsets is not None and any(not start <= end <= len(obj["text"]) for start, end in offsets):
        raise BadInput(f"{where}: 'offsets' must be spans [start, end) inside 'text'")
    known = {f.name for f in fields(AttributionRecord)} - {"line"}
    values = {key: value for key, value in obj.items() if key in known}
    for key in PER_TOKEN:
        if values.get(key) is None:
            values.pop(key, None)  # null: as if absent, filled in below
    values.setdefault("token_ids", [])
    # Without flags, a token with an empty character span is a special token ([CLS], [SEP]).
    values.setdefault("special", [start == end for start, end in offsets] if offsets else [False] * length)
    values.setdefault("offsets", [[0, 0]] * length)
    values.setdefault("target_name", str(obj["target"]))
    values.setdefault("probs", [])
    values.setdefault("predicted", obj["target"])
    values.setdefault("label", None)
    values.setdefault("method", "unknown")
    values.setdefault("model", "")
    values.setdefault("model_fingerprint", "")
    values.setdefault("library", None)
    return AttributionRecord(**values)


def read_records(path: str) -> list[AttributionRecord]:
    """All attribution records of a JSONL file (``-``: standard input), validated."""
    content = read_text(path)
    name = "<stdin>" if path == STDIO else path
    records = []
    for number, raw in jsonl.lines(content):
        where = f"{name}:{number}"
        try:
            obj = jsonl.parse(raw)
        except jsonl.NotStrictJSON as error:
            raise BadInput(f"{where}: {error}") from None
        if not isinstance(obj, dict):
            raise BadInput(f"{where}: expected a JSON object")
        record = _check_record(obj, where)
        record.line = number
        records.append(record)
    if not records:
        raise BadInput(f"{name}: no attribution records")
    return records


def rows_from_objects(
    items, text_field: str = "text", id_field: str = "id", label_field: str = "label", source: str = "<inputs>"
) -> list[InputRow]:
    """Input rows from Python objects: strings (the text), or mappings with a text field (a list
    of dicts, a ``datasets.Dataset``). Item i counts as line i + 1 in messages; ids default to i."""
    rows = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            item = {text_field: item}
        if not isinstance(item, Mapping):
            raise BadInput(f"{source}: item {index}: expected a string or a mapping with a {text_field!r} field")
        values = dict(item)
        values.setdefault(id_field, index)
        try:
            rows.append(_row(index + 1, values, text_field, id_field, label_field))
        except _RowProblem as problem:
            raise BadInput(f"{source}: item {index}: {problem}") from None
    if not rows:
        raise BadInput(f"{source}: no inputs")
    return rows
