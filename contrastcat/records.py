"""The files ``explain`` reads and writes: input rows and attribution records.

Inputs are JSONL (one object a line) or CSV with a header. Fields:
``text`` (required, name set by ``text_field``), ``id`` (optional; defaults
to the line number), ``label`` (optional: class index or class name).

An attribution record is one JSON object a line, fields as in
:class:`AttributionRecord`. Readers validate everything up front, so a bad
line is reported (file and line) before any work or output starts.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .errors import BadInput, located
from .files import STDIO, atomic_text_output, read_text


@dataclass(frozen=True)
class InputRow:
    line: int  # 1-based line in the source file (CSV: the physical line of the row)
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
    settings: dict = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def _input_format(path: str, text: str) -> str:
    lowered = path.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    first = text.lstrip()[:1]
    return "jsonl" if first in ("{", "") else "csv"


def _row(path: str, line: int, obj: dict, text_field: str, id_field: str, label_field: str) -> InputRow:
    if text_field not in obj:
        raise BadInput(located(path, line, f"missing text field {text_field!r}"))
    text = obj[text_field]
    if not isinstance(text, str):
        raise BadInput(located(path, line, f"field {text_field!r} is not a string"))
    if not text.strip():
        raise BadInput(located(path, line, f"field {text_field!r} is empty"))
    return InputRow(line=line, id=obj.get(id_field, line), text=text, label=obj.get(label_field))


def read_inputs(
    path: str,
    text_field: str = "text",
    id_field: str = "id",
    label_field: str = "label",
) -> list[InputRow]:
    """All rows of a JSONL or CSV file (``-``: standard input), validated."""
    content = read_text(path)
    name = "<stdin>" if path == STDIO else path
    rows: list[InputRow] = []
    if _input_format(path, content) == "jsonl":
        for number, raw in enumerate(content.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as error:
                raise BadInput(located(name, number, f"malformed JSON ({error.msg}, column {error.colno})")) from None
            if not isinstance(obj, dict):
                raise BadInput(located(name, number, "expected a JSON object"))
            rows.append(_row(name, number, obj, text_field, id_field, label_field))
    else:
        reader = csv.DictReader(io.StringIO(content, newline=""))
        if reader.fieldnames is None:
            raise BadInput(located(name, None, "empty CSV file (no header)"))
        if text_field not in reader.fieldnames:
            raise BadInput(
                located(name, 1, f"no column {text_field!r} (columns: {', '.join(reader.fieldnames)})")
            )
        for record in reader:
            number = reader.line_num
            obj = {key: value for key, value in record.items() if key is not None}
            if obj.get(label_field) == "":
                obj[label_field] = None
            rows.append(_row(name, number, obj, text_field, id_field, label_field))
    if not rows:
        raise BadInput(located(name, None, "no input rows"))
    return rows


def resolve_label(value: Any, label_names: Sequence[str], where: str) -> int:
    """A label given as an index (int or digit string) or as a class name -> class index."""
    if isinstance(value, bool):
        raise BadInput(f"{where}: label {value!r} is not a class index or name")
    if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        index = int(value)
        if 0 <= index < len(label_names):
            return index
        raise BadInput(f"{where}: label {index} out of range (model has {len(label_names)} classes)")
    if isinstance(value, str):
        lowered = [name.lower() for name in label_names]
        if value.strip().lower() in lowered:
            return lowered.index(value.strip().lower())
    raise BadInput(f"{where}: label {value!r} is not one of {', '.join(label_names)} or an index")


SCORE_DECIMALS = 6


def rounded(scores) -> list[float]:
    """Scores as records store them; re-attributions are rounded the same way before comparing."""
    return [round(float(s), SCORE_DECIMALS) for s in scores]


def write_records(path: str, records: Iterable[AttributionRecord]) -> int:
    """Write records atomically (``-``: standard output); returns how many."""
    count = 0
    with atomic_text_output(path) as stream:
        for record in records:
            stream.write(record.to_json() + "\n")
            count += 1
    return count


def _check_record(obj: dict, where: str) -> AttributionRecord:
    missing = sorted(key for key in ("id", "text", "tokens", "scores", "target") if key not in obj)
    if missing:
        raise BadInput(f"{where}: not an attribution record (missing {', '.join(missing)})")
    tokens, scores = obj["tokens"], obj["scores"]
    if not isinstance(tokens, list) or not isinstance(scores, list) or len(tokens) != len(scores):
        raise BadInput(f"{where}: 'tokens' and 'scores' must be lists of the same length")
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) for s in scores):
        raise BadInput(f"{where}: 'scores' must be finite numbers")
    length = len(tokens)
    for key in ("token_ids", "offsets", "special"):
        value = obj.get(key)
        if value is not None and (not isinstance(value, list) or len(value) != length):
            raise BadInput(f"{where}: {key!r} must be a list with one entry per token")
    offsets = obj.get("offsets")
    if offsets is not None and not all(
        isinstance(o, list) and len(o) == 2 and all(isinstance(v, int) for v in o) for o in offsets
    ):
        raise BadInput(f"{where}: 'offsets' must be [start, end] pairs of integers")
    settings = obj.get("settings")
    if settings is not None and not (
        isinstance(settings, dict)
        and all(v is None or isinstance(v, (str, int, float, bool)) for v in settings.values())
    ):
        raise BadInput(f"{where}: 'settings' must be an object of plain values (strings, numbers, booleans)")
    known = {f.name for f in fields(AttributionRecord)}
    values = {key: value for key, value in obj.items() if key in known}
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
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as error:
            raise BadInput(f"{where}: malformed JSON ({error.msg}, column {error.colno})") from None
        if not isinstance(obj, dict):
            raise BadInput(f"{where}: expected a JSON object")
        records.append(_check_record(obj, where))
    if not records:
        raise BadInput(f"{name}: no attribution records")
    return records
