"""Gating for CI: bounds on metrics (``--fail-under``) and regressions against a baseline report.

A violated gate is a :class:`GateFailed` (exit code 3) whose one line names the
method, the metric, the value and the bound; ``evaluate`` raises it after the
report is written and the tables printed, so a failing CI job still shows them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .errors import BadInput, ContrastCatError
from .metrics import KENDALL_METRIC, METRICS, Metric
from .stats import BootstrapSettings, paired_difference

REPORT_SCHEMA = "contrastcat/evaluate-report"
REPORT_SCHEMA_VERSION = 2  # 1: the reports of contrastcat 0.1 to 0.5, which had no schema field

# What --fail-under names: morf.aopc -> the comparison's column morf_aopc.
GATE_NAMES = {
    **{f"{order}.{key}": (f"{order}_{key}", metric) for (order, key), metric in METRICS.items()},
    "kendall.tau": ("kendall_tau_index", KENDALL_METRIC),
}


class GateFailed(ContrastCatError):
    """A metric is on the wrong side of its bound, or worse than the baseline's."""

    exit_code = 3


@dataclass(frozen=True)
class Bound:
    method: str | None  # None: every method in the report
    key: str  # column key
    metric: Metric
    value: float

    def violated_by(self, value: float) -> bool:
        return value < self.value if self.metric.higher_is_better else value > self.value


def parse_bounds(spec: str) -> list[Bound]:
    """``morf.aopc=0.5,lerf.lodds=0.1``; ``contrastcat:morf.aopc=0.55`` for one method only."""
    bounds = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, equals, number = part.rpartition("=")
        method, colon, name = name.rpartition(":") if ":" in name else ("", "", name)
        if not equals or name.strip().lower() not in GATE_NAMES:
            raise BadInput(
                f"--fail-under: {part!r} is not METRIC=VALUE or METHOD:METRIC=VALUE "
                f"(metrics: {', '.join(GATE_NAMES)})"
            )
        try:
            value = float(number)
        except ValueError:
            raise BadInput(f"--fail-under: {part!r}: {number!r} is not a number") from None
        if not math.isfinite(value):
            raise BadInput(f"--fail-under: {part!r}: the bound must be a finite number")
        key, metric = GATE_NAMES[name.strip().lower()]
        bounds.append(Bound(method.strip() or None, key, metric, value))
    if not bounds:
        raise BadInput("--fail-under needs at least one METRIC=VALUE")
    return bounds


def _side(metric: Metric) -> str:
    return "below" if metric.higher_is_better else "above"


def check_bounds(comparison, bounds: list[Bound]) -> list[str]:
    """One message per (method, bound) violated; a bound on a method or metric not in the report is one too."""
    rows = {row.method: row for row in comparison.rows}
    problems = []
    for bound in bounds:
        if bound.method is not None and bound.method not in rows:
            problems.append(f"--fail-under names method {bound.method!r}, which is not in the report")
            continue
        for row in [rows[bound.method]] if bound.method is not None else comparison.rows:
            if bound.key not in row.values:
                problems.append(f"--fail-under: {bound.metric.name} was not evaluated (see --order, --kendall)")
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
            document = json.load(stream)
    except OSError as error:
        raise BadInput(f"{path}: cannot read the baseline report ({error.strerror or error})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadInput(f"{path}: not a JSON report ({error})") from None
    if not isinstance(document, dict) or document.get("schema") != REPORT_SCHEMA:
        raise BadInput(f"{path}: not an evaluate report (write one with contrastcat evaluate -o report.json)")
    if document.get("schema_version") != REPORT_SCHEMA_VERSION:
        raise BadInput(
            f"{path}: report schema version {document.get('schema_version')!r}; this contrastcat reads "
            f"{REPORT_SCHEMA_VERSION}: evaluate the baseline's records again"
        )
    return document


SAME_PROTOCOL = ("steps", "perturb", "target", "min_tokens")


def check_baseline(
    report, baseline: dict, tolerance: float, bootstrap: BootstrapSettings, path: str
) -> list[str]:
    """Every (method, metric) of the baseline that this report is worse on by more than ``tolerance``."""
    mine = report.to_dict()
    for name in SAME_PROTOCOL:
        if baseline.get(name) != mine.get(name):
            raise BadInput(
                f"{path}: the baseline was evaluated with {name} {baseline.get(name)!r}, this run with "
                f"{mine.get(name)!r}: compare like with like"
            )
    comparison = report.comparison()
    rows = {row.method: row for row in comparison.rows}
    problems = []
    for old in baseline.get("comparison", {}).get("rows", []):
        method = old.get("method")
        if method not in rows:
            problems.append(f"{method}: in the baseline {path}, not in this report")
            continue
        row = rows[method]
        for key, old_value in (old.get("values") or {}).items():
            if old_value is None or key not in row.values:
                continue
            metric = next(c.metric for c in comparison.columns if c.key == key)
            value = row.values[key]
            allowed = old_value - tolerance if metric.higher_is_better else old_value + tolerance
            if value is not None and not (value < allowed if metric.higher_is_better else value > allowed):
                continue
            shown = "n/a" if value is None else f"{value:.4f}"
            message = (
                f"{method}: {metric.name} {shown} is {_side(metric)} {allowed:.4f}, the baseline's "
                f"{old_value:.4f} with tolerance {tolerance:g} ({path})"
            )
            paired = _paired(report, baseline, method, key, bootstrap)
            if paired is not None:
                low, high = paired.interval.low, paired.interval.high
                message += (
                    f"; paired difference {paired.mean:+.4f} [{low:+.4f}, {high:+.4f}] over {paired.inputs} inputs"
                )
            problems.append(message)
    return problems


def _paired(report, baseline: dict, method: str, key: str, bootstrap: BootstrapSettings):
    """This report − the baseline on the inputs both evaluated, when both kept per-input values."""
    order, _, metric = key.partition("_")
    old = (baseline.get("methods", {}).get(method) or {}).get("per_input", {}).get(order)
    values = report.methods[method].per_input.get(order)
    if not old or values is None or metric not in ("aopc", "lodds"):
        return None
    before = {k: v for k, v in zip(old.get("keys", []), old.get(metric, [])) if v is not None}
    found = paired_difference(values.means(metric), before, bootstrap)
    return found if found is not None and found.interval is not None else None
