"""The evaluate report as a file: its schema, and reading one back (a baseline) strictly: a damaged
or foreign report is one line, before any work."""

from __future__ import annotations

import json
import math

from ..deletion.names import PERTURBATIONS, STEP_GRIDS
from ..errors import BadInput
from ..io import jsonl
from ..io.lines import LINE_LIMIT_ENV, RECORD_LINES, Overlong, line_limit, read_bounded
from .metrics import METRICS, ORDERS, TARGETS
from .scalars import SCALAR_KEYS

REPORT_SCHEMA = "contrastcat/evaluate-report"
REPORT_SCHEMA_VERSION = 2  # 1: the reports of contrastcat before 0.5, which had no schema field


def read_baseline(path: str) -> dict:
    """A report written by ``evaluate -o`` (schema version 2), or one line saying why not."""
    limit = line_limit(RECORD_LINES)  # a report is read whole: bounded as a record line is
    try:
        with open(path, "rb") as stream:
            raw = read_bounded(stream, limit)
        if isinstance(raw, Overlong):
            raise BadInput(
                f"{path}: not a JSON report (larger than {limit >> 20} MiB, {RECORD_LINES} × ${LINE_LIMIT_ENV}: "
                "far more than any report evaluate writes)"
            )
        text = raw.decode("utf-8")
    except OSError as error:
        raise BadInput(f"{path}: cannot read the baseline report ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: not a JSON report (not UTF-8: {error.reason} at byte {error.start})") from None
    document = _strict_json(text, path)
    if not isinstance(document, dict) or document.get("schema") != REPORT_SCHEMA:
        raise BadInput(f"{path}: not an evaluate report (write one with contrastcat evaluate -o report.json)")
    if document.get("schema_version") != REPORT_SCHEMA_VERSION:
        raise BadInput(
            f"{path}: report schema version {document.get('schema_version')!r}; this contrastcat reads "
            f"{REPORT_SCHEMA_VERSION}: evaluate the baseline's records again"
        )
    _check_shape(document, path)
    return document


def _strict_json(text: str, path: str):
    """The report as ``evaluate -o`` writes it: strict JSON (no NaN, no repeated key), read whole;
    what Python's reader would take otherwise, or fail on with another error, is one line."""
    try:
        document = jsonl.loads(text)  # the strict reader of every file here, its memory bounded
    except json.JSONDecodeError as error:
        raise BadInput(f"{path}:{error.lineno}: not a JSON report ({error.msg}, column {error.colno})") from None
    except jsonl.NotStrictJSON as error:
        raise BadInput(f"{path}: not a JSON report ({error})") from None
    except RecursionError:
        raise BadInput(f"{path}: not a JSON report (nested too deeply to read)") from None
    except ValueError as error:  # an integer with more digits than Python converts
        raise BadInput(f"{path}: not a JSON report (a number too long to read: {str(error).split(';')[0]})") from None
    problem = jsonl.tree_problem(document)
    if problem is not None:
        raise BadInput(f"{path}: not a JSON report ({problem})")
    return document


def _number_or_none(value) -> bool:
    return value is None or isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# What a baseline must say about how it was made, and the form of each: a report without them
# cannot be compared with anything (a missing fingerprint would pass any model).
IDENTITY_FIELDS = {
    "model_fingerprint": (lambda v: isinstance(v, str) and v.startswith("sha256:"), "a sha256: fingerprint"),
    "steps": (lambda v: v in STEP_GRIDS, f"one of {', '.join(STEP_GRIDS)}"),
    "perturb": (lambda v: v in PERTURBATIONS, f"one of {', '.join(PERTURBATIONS)}"),
    "target": (lambda v: v in TARGETS, f"one of {', '.join(TARGETS)}"),
    "min_tokens": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a count"),
    "orders": (lambda v: isinstance(v, list) and v and all(o in ORDERS for o in v), "a list of morf, lerf"),
    "forward_dtype": (lambda v: isinstance(v, str), "a precision name"),
}


# The comparison's columns: each curve metric of each order, Kendall τ, and the metrics of one value per input.
COLUMN_KEYS = frozenset({*(f"{order}_{key}" for order, key in METRICS), "kendall_tau_index", *SCALAR_KEYS})


def _check_shape(document: dict, path: str) -> None:
    """Every part the gate reads, each of the type it expects: a damaged or foreign baseline is
    exit 2 before any work, never a crash or a misleading regression after it."""
    for name, (fits, kind) in IDENTITY_FIELDS.items():
        if name not in document:
            raise BadInput(f"{path}: damaged report: no {name!r} (what it was evaluated with); write it again with evaluate -o")
        if not fits(document[name]):
            raise BadInput(f"{path}: damaged report: {name!r} must be {kind}, got {_short(document[name])}")
    methods, comparison = document.get("methods"), document.get("comparison")
    rows = comparison.get("rows") if isinstance(comparison, dict) else None
    if not isinstance(methods, dict) or not isinstance(rows, list):
        raise BadInput(f"{path}: damaged report: 'methods' must be an object and 'comparison.rows' a list")
    if not rows:  # every report evaluates at least one method: an empty gate would pass any run
        raise BadInput(f"{path}: damaged report: 'comparison.rows' is empty, so there is nothing to compare with")
    # Each row has the curves' metrics of the report's orders (a value may be null), and Kendall τ at most.
    curves = {f"{order}_{key}" for order in document["orders"] for key in ("aopc", "lodds")}
    for index, row in enumerate(rows):
        values = row.get("values") if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(row.get("method"), str) or not isinstance(values, dict) or not all(
            _number_or_none(v) for v in values.values()
        ):
            raise BadInput(f"{path}: damaged report: comparison row {index} needs a method name and numeric values")
        unknown = sorted(set(values) - COLUMN_KEYS)
        if unknown:
            raise BadInput(f"{path}: damaged report: comparison row {index} has an unknown metric {_short(unknown[0])}")
        missing, extra = sorted(curves - set(values)), sorted(set(values) - curves - {"kendall_tau_index", *SCALAR_KEYS})
        if missing or extra:
            raise BadInput(
                f"{path}: damaged report: comparison row {index} ({_short(row['method'])}) "
                + (f"has no {missing[0]!r}" if missing else f"has {extra[0]!r}, which its orders do not include")
                + f" (orders: {', '.join(document['orders'])})"
            )
        method = methods.get(row["method"])
        if not isinstance(method, dict):
            raise BadInput(f"{path}: damaged report: method {row['method']!r} is in the comparison but not in 'methods'")
        _check_method(method, row["method"], path)
    if all(value is None for row in rows for value in row["values"].values()):
        # a run that evaluated nothing stops with exit 2, so no real report is all null; it would gate nothing
        raise BadInput(f"{path}: damaged report: every value in 'comparison.rows' is null, so there is nothing to compare with")


def _check_method(method: dict, name: str, path: str) -> None:
    if not isinstance(method.get("method_name"), str) or not isinstance(method.get("settings"), dict):
        raise BadInput(f"{path}: damaged report: method {name!r} needs a 'method_name' string and a 'settings' object")
    if not (method.get("library") is None or isinstance(method.get("library"), (str, dict))):
        raise BadInput(f"{path}: damaged report: method {name!r}: 'library' must be null, a string or an object")
    per_input = method.get("per_input", {})
    if not isinstance(per_input, dict):
        raise BadInput(f"{path}: damaged report: method {name!r}: 'per_input' must be an object, got {_short(per_input)}")
    for order, found in per_input.items():
        where = f"{path}: damaged report: per-input values of {name!r} ({_short(order)})"
        if order in SCALAR_KEYS:
            _check_scalar(found, where)
        elif order != "kendall_tau_index":
            _check_per_input(order, found, where)


def _keys(found, where: str) -> list:
    keys = found.get("keys") if isinstance(found, dict) else None
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise BadInput(f"{where}: 'keys' must be a list of strings")
    if len(set(keys)) != len(keys):
        raise BadInput(f"{where}: an input's key appears twice, so inputs cannot be paired")
    return keys


def _check_scalar(found, where: str) -> None:
    """A metric of one value per input: keys and as many values (null where undefined)."""
    keys = _keys(found, where)
    values = found.get("values")
    if not isinstance(values, list) or len(values) != len(keys) or not all(_number_or_none(v) for v in values):
        raise BadInput(f"{where}: 'values' must be a list of finite numbers or nulls, one per key ({len(keys)})")


def _check_per_input(order, found, where: str) -> None:
    """One order's per-input values: keys (one per input, each once) and as many AOPC and
    log-odds rows; the gate pairs inputs by key, so a repeated key would make the pairing a guess."""
    if order not in ORDERS:
        raise BadInput(f"{where}: not an order (morf, lerf) or a metric ({', '.join(SCALAR_KEYS)})")
    keys = _keys(found, where)
    for part in ("aopc", "lodds"):
        values = found.get(part)
        if not isinstance(values, list) or len(values) != len(keys):
            raise BadInput(f"{where}: {part!r} must be a list with one entry per key ({len(keys)})")
        if not all(_number_or_none(v) for v in values):
            raise BadInput(f"{where}: {part!r} holds a value that is not a finite number or null")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
