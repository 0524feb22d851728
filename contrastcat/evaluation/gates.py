"""Gating for CI: bounds on metrics (``--fail-under``) and regressions against a baseline report.

A violated gate is a :class:`~contrastcat.errors.GateFailed` (exit code 3) whose one line names the
method, the metric, the value and the bound; ``evaluate`` raises it after the
report is written and the tables printed, so a failing CI job still shows them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from ..errors import BadInput
from ..io import jsonl
from .metrics import DELETE, KENDALL_METRIC, MASK, METRICS, ORDERS, STEP_GRIDS, TARGETS, Metric
from .stats import BootstrapSettings, paired_difference

REPORT_SCHEMA = "contrastcat/evaluate-report"
REPORT_SCHEMA_VERSION = 2  # 1: the reports of contrastcat before 0.5, which had no schema field

# What --fail-under names: morf.aopc -> the comparison's column morf_aopc.
GATE_NAMES = {
    **{f"{order}.{key}": (f"{order}_{key}", metric) for (order, key), metric in METRICS.items()},
    "kendall.tau": ("kendall_tau_index", KENDALL_METRIC),
}


@dataclass(frozen=True)
class Bound:
    method: str | None  # None: every method in the report
    key: str  # column key
    metric: Metric
    value: float

    def violated_by(self, value: float) -> bool:
        return value < self.value if self.metric.higher_is_better else value > self.value


def split_list(spec: str) -> list[str]:
    """Split at commas outside brackets: a variant label ``contrastcat[refs_used=5,rho=mean]`` stays whole."""
    parts, depth, current = [], 0, ""
    for character in spec:
        depth += {"[": 1, "]": -1}.get(character, 0)
        if character == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += character
    return [part.strip() for part in [*parts, current]]


# A plain ASCII decimal. Python's float() also takes "0_05" (5.0), "٠٫٥" and "inf": a typo in a
# gate must not become another bound, or switch the gate off.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_decimal(text: str, where: str) -> float:
    """``text`` as a finite number written in ASCII decimal (``0.05``, ``-1``, ``5e-2``), else BadInput."""
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise BadInput(f"{where} {shown!r} is not a finite number written in ASCII decimal (like 0.05)")
    return value


def parse_pair(compare: str | None, name: str = "compare") -> tuple[str, str] | None:
    """``"A,B"`` -> (A, B): two different methods (evaluate and render read it alike); ``name``
    is the parameter's, as the caller spells it, for the error."""
    if compare is None:
        return None
    names = split_list(compare)
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise BadInput(f"{name} takes two different methods, A,B; got {compare!r}")
    return names[0], names[1]


def parse_tolerance(text: str) -> float:
    """``--tolerance``: a finite number of at least 0."""
    value = parse_decimal(text.strip(), "`tolerance`")
    if value < 0:
        raise BadInput(f"`tolerance` must be 0 or more, got {text!r}")
    return value


def parse_bounds(spec: str) -> list[Bound]:
    """``morf.aopc=0.5,lerf.lodds=0.1``; ``contrastcat:morf.aopc=0.55`` for one method only."""
    bounds = []
    for part in split_list(spec):
        if not part:
            continue
        name, equals, number = part.rpartition("=")
        method, _, name = name.rpartition(":") if ":" in name else ("", "", name)
        if not equals or name.strip().lower() not in GATE_NAMES:
            raise BadInput(
                f"`fail_under`: {part!r} is not METRIC=VALUE or METHOD:METRIC=VALUE "
                f"(metrics: {', '.join(GATE_NAMES)})"
            )
        value = parse_decimal(number.strip(), f"`fail_under`: {part!r}:")
        key, metric = GATE_NAMES[name.strip().lower()]
        bounds.append(Bound(method.strip() or None, key, metric, value))
    if not bounds:
        raise BadInput("`fail_under` needs at least one METRIC=VALUE")
    return bounds


def _side(metric: Metric) -> str:
    return "below" if metric.higher_is_better else "above"


def check_bounds_usable(bounds: list[Bound], methods: set[str], orders, kendall: bool) -> None:
    """Before any work: every bound names a method in the records and a metric this run computes."""
    for bound in bounds:
        if bound.method is not None and bound.method not in methods:
            raise BadInput(f"`fail_under` names method {bound.method!r}, which has no records (there are: "
                           f"{', '.join(sorted(methods))})")
        evaluated = bound.key == "kendall_tau_index" and kendall or bound.key.split("_")[0] in orders
        if not evaluated:
            raise BadInput(f"`fail_under`: {bound.metric.name} is not evaluated by this run (see `orders`, `kendall`)")


def check_bounds(comparison, bounds: list[Bound]) -> list[str]:
    """One message per (method, bound) violated; a bound on a method or metric not in the report is one too."""
    rows = {row.method: row for row in comparison.rows}
    problems = []
    for bound in bounds:
        if bound.method is not None and bound.method not in rows:
            problems.append(f"`fail_under` names method {bound.method!r}, which is not in the report")
            continue
        for row in [rows[bound.method]] if bound.method is not None else comparison.rows:
            if bound.key not in row.values:
                problems.append(f"`fail_under`: {bound.metric.name} was not evaluated (see `orders`, `kendall`)")
                break
            value = row.values[bound.key]
            if value is None or bound.violated_by(value):
                shown = "n/a" if value is None else f"{value:.4f}"
                problems.append(
                    f"{row.method}: {bound.metric.name} {shown} is {_side(bound.metric)} the bound {bound.value:g}"
                )
    return problems


def read_baseline(path: str) -> dict:
    """A report written by ``evaluate -o`` (schema version 2), or one line saying why not."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
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
        document = json.loads(
            text, parse_constant=jsonl._refuse_constant, parse_float=jsonl._finite_float,
            object_pairs_hook=jsonl._unique_keys,  # the hooks of every strict reader here
        )
    except json.JSONDecodeError as error:
        raise BadInput(f"{path}:{error.lineno}: not a JSON report ({error.msg}, column {error.colno})") from None
    except jsonl.NotStrictJSON as error:
        raise BadInput(f"{path}: not a JSON report ({error})") from None
    except RecursionError:
        raise BadInput(f"{path}: not a JSON report (nested too deeply to read)") from None
    except ValueError as error:  # an integer with more digits than Python converts
        raise BadInput(f"{path}: not a JSON report (a number too long to read: {str(error).split(';')[0]})") from None
    bad = jsonl.first_invalid_string(document)
    if bad is not None:
        raise BadInput(f"{path}: not a JSON report (not valid Unicode: {bad} holds an unpaired surrogate)")
    return document


def _number_or_none(value) -> bool:
    return value is None or isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# What a baseline must say about how it was made, and the form of each: a report without them
# cannot be compared with anything (a missing fingerprint would pass any model).
IDENTITY_FIELDS = {
    "model_fingerprint": (lambda v: isinstance(v, str) and v.startswith("sha256:"), "a sha256: fingerprint"),
    "steps": (lambda v: v in STEP_GRIDS, f"one of {', '.join(STEP_GRIDS)}"),
    "perturb": (lambda v: v in (DELETE, MASK), f"{DELETE} or {MASK}"),
    "target": (lambda v: v in TARGETS, f"one of {', '.join(TARGETS)}"),
    "min_tokens": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a count"),
    "orders": (lambda v: isinstance(v, list) and v and all(o in ORDERS for o in v), "a list of morf, lerf"),
    "forward_dtype": (lambda v: isinstance(v, str), "a precision name"),
}
COLUMN_KEYS = frozenset(key for key, _ in GATE_NAMES.values())


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
        missing, extra = sorted(curves - set(values)), sorted(set(values) - curves - {"kendall_tau_index"})
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


def _check_method(method: dict, name: str, path: str) -> None:
    if not isinstance(method.get("method_name"), str) or not isinstance(method.get("settings"), dict):
        raise BadInput(f"{path}: damaged report: method {name!r} needs a 'method_name' string and a 'settings' object")
    if not (method.get("library") is None or isinstance(method.get("library"), (str, dict))):
        raise BadInput(f"{path}: damaged report: method {name!r}: 'library' must be null, a string or an object")
    per_input = method.get("per_input", {})
    for order, found in (per_input.items() if isinstance(per_input, dict) else [(None, None)]):
        if order == "kendall_tau_index":
            continue
        if order not in ORDERS or not isinstance(found, dict) or not isinstance(found.get("keys"), list) or not all(
            isinstance(found.get(k), list) and len(found[k]) == len(found["keys"]) and all(_number_or_none(v) for v in found[k])
            for k in ("aopc", "lodds")
        ) or not all(isinstance(key, str) for key in found["keys"]):
            raise BadInput(f"{path}: damaged report: per-input values of {name!r} ({_short(order)})")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_same_protocol(baseline: dict, path: str, protocol: dict) -> None:
    """Before any work: the baseline was evaluated as this run will be (``protocol``: report fields)."""
    for name, value in protocol.items():
        if name in baseline and baseline.get(name) != value:
            raise BadInput(
                f"{path}: the baseline was evaluated with {name} {baseline.get(name)!r}, this run with "
                f"{value!r}: compare like with like"
            )


def _identity(method: dict) -> str:
    """What makes two reports' methods the same one: its name, settings and library, not its label
    (labels of variants depend on which came first in the records)."""
    return json.dumps([method.get("method_name"), method.get("settings"), method.get("library")], sort_keys=True)


def check_baseline(
    report, mine: dict, baseline: dict, tolerance: float, bootstrap: BootstrapSettings, path: str
) -> list[str]:
    """Every (method, metric) of the baseline that this report (``mine``: its ``to_dict()``) is worse on
    by more than ``tolerance``; a metric of the baseline this run did not compute counts as worse."""
    check_same_protocol(baseline, path, {name: mine[name] for name in ("model_fingerprint", "forward_dtype")})
    comparison = report.comparison()
    rows = {row.method: row for row in comparison.rows}
    by_identity = {_identity(mine["methods"][label]): label for label in rows}
    problems = []
    for old in baseline["comparison"]["rows"]:
        method = old["method"]
        label = by_identity.get(_identity(baseline["methods"][method]))
        if label is None:
            problems.append(f"{method}: in the baseline {path}, not in this report (same method, settings and library)")
            continue
        row = rows[label]
        for key, old_value in old["values"].items():
            if old_value is None:
                continue
            found = next((c.metric for c in comparison.columns if c.key == key), None)
            if found is None:
                name = next((n for n, (k, _) in GATE_NAMES.items() if k == key), key)
                problems.append(f"{label}: {name} is in the baseline {path} but not evaluated by this run")
                continue
            metric = found
            value = row.values[key]
            allowed = old_value - tolerance if metric.higher_is_better else old_value + tolerance
            if value is not None and not (value < allowed if metric.higher_is_better else value > allowed):
                continue
            shown = "n/a" if value is None else f"{value:.4f}"
            message = (
                f"{label}: {metric.name} {shown} is {_side(metric)} {allowed:.4f}, the baseline's "
                f"{old_value:.4f} with tolerance {tolerance:g} ({path})"
            )
            paired = _paired(report, baseline, label, method, key, bootstrap)
            if paired is not None:
                low, high = paired.interval.low, paired.interval.high
                message += (
                    f"; paired difference {paired.mean:+.4f} [{low:+.4f}, {high:+.4f}] over {paired.inputs} inputs"
                )
            problems.append(message)
    return problems


def _paired(report, baseline: dict, label: str, old_label: str, key: str, bootstrap: BootstrapSettings):
    """This report − the baseline on the inputs both evaluated, when both kept per-input values."""
    order, _, metric = key.partition("_")
    old = baseline["methods"][old_label].get("per_input", {}).get(order)
    values = report.methods[label].per_input.get(order)
    if not old or values is None or metric not in ("aopc", "lodds"):
        return None
    before = {k: v for k, v in zip(old.get("keys", []), old.get(metric, [])) if v is not None}
    found = paired_difference(values.means(metric), before, bootstrap)
    return found if found is not None and found.interval is not None else None
