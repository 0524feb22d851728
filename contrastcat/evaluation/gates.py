"""Gating for CI: bounds on metrics (``--fail-under``) and regressions against a baseline report.

A violated gate is a :class:`~contrastcat.errors.GateFailed` (exit code 3) whose one line names the
method, the metric, the value and the bound; ``evaluate`` raises it after the
report is written and the tables printed, so a failing CI job still shows them.
"""

from __future__ import annotations

import json

from ..errors import BadInput
from ..spec import Names, backticked
from .bounds import GATE_NAMES
from .metrics import PLAUSIBILITY_KEYS, SCALAR_METRICS, Metric
from .stats import BootstrapSettings, paired_difference

def _side(metric: Metric) -> str:
    return "below" if metric.higher_is_better else "above"


def check_bounds_usable(
    bounds, methods: set[str], settings, kendall: bool, named: Names = backticked, where: str = "the records"
) -> None:
    """Before any work: every bound names a method in the records (``where`` they were read) and a
    metric this run computes with ``settings`` (``named``: the options as the caller spells them)."""
    orders, scalars = settings.orders, settings.scalar_keys
    for bound in bounds:
        if bound.method is not None and bound.method not in methods:
            raise BadInput(f"{named('fail_under')} names method {bound.method!r}, which has no records in {where} "
                           f"(there are: {', '.join(sorted(methods))})")
        evaluated = (
            bound.key == "kendall_tau_index" and kendall or bound.key in scalars or bound.key.split("_")[0] in orders
        )
        if not evaluated and bound.key in PLAUSIBILITY_KEYS:
            raise BadInput(f"{named('fail_under')}: {bound.metric.name} needs evidence, and no record in {where} "
                           "carries any (explain --evidence-field)")
        if not evaluated:
            raise BadInput(
                f"{named('fail_under')}: {bound.metric.name} is not evaluated by this run ({_see(named)})"
            )


def _see(named: Names, options=("orders", "kendall", "eraser", "loo")) -> str:
    return "see " + ", ".join(named(name) for name in options)


def check_bounds(comparison, bounds, named: Names = backticked) -> list[str]:
    """One message per (method, bound) violated; a bound on a method or metric not in the report is one too."""
    rows = {row.method: row for row in comparison.rows}
    problems = []
    for bound in bounds:
        if bound.method is not None and bound.method not in rows:
            problems.append(f"{named('fail_under')} names method {bound.method!r}, which is not in the report")
            continue
        for row in [rows[bound.method]] if bound.method is not None else comparison.rows:
            if bound.key not in row.values:
                problems.append(f"{named('fail_under')}: {bound.metric.name} was not evaluated ({_see(named)})")
                break
            value = row.values[bound.key]
            if value is None:  # a gate that cannot be checked does not pass
                problems.append(
                    f"{row.method}: {bound.metric.name} is undefined (no input gave it a value), so the bound "
                    f"{bound.value:g} cannot be met"
                )
            elif bound.violated_by(value):
                problems.append(
                    f"{row.method}: {bound.metric.name} {value:.4f} is {_side(bound.metric)} the bound {bound.value:g}"
                )
    return problems


def _value(number: float) -> str:
    """A baseline's number in a message: 4 decimals, or 4 digits when it is too large for that to read."""
    return f"{number:.4f}" if abs(number) < 1e6 else f"{number:.4g}"


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


def check_baseline_computable(baseline: dict, path: str, settings, kendall: bool, named: Names = backticked) -> None:
    """Before any work: every metric the baseline holds a value of is one this run computes (else
    the gate would fail after the whole run for a flag left out)."""
    computed = {f"{order}_{key}" for order in settings.orders for key in ("aopc", "lodds")}
    computed |= set(settings.scalar_keys) | ({"kendall_tau_index"} if kendall else set())
    for row in baseline["comparison"]["rows"]:
        for key, value in row["values"].items():
            if value is not None and key not in computed:
                name = next((n for n, (k, _) in GATE_NAMES.items() if k == key), key)
                if key in PLAUSIBILITY_KEYS:
                    raise BadInput(f"{path}: the baseline has {name} for {row['method']}, and no record of this run "
                                   "carries evidence (explain --evidence-field): evaluate as the baseline was")
                raise BadInput(
                    f"{path}: the baseline has {name} for {row['method']}, which this run does not compute "
                    f"({_see(named, ('kendall', 'eraser', 'loo'))}): evaluate as the baseline was"
                )


def _identity(method: dict) -> str:
    """What makes two reports' methods the same one: its name, settings and library, not its label
    (labels of variants depend on which came first in the records)."""
    return json.dumps([method.get("method_name"), method.get("settings"), method.get("library")], sort_keys=True)


def check_baseline(
    report, mine: dict, baseline: dict, tolerance: float, bootstrap: BootstrapSettings, path: str
) -> tuple[list[str], list[str]]:
    """Every (method, metric) of the baseline that this report (``mine``: its ``to_dict()``) is worse on
    by more than ``tolerance``; a metric of the baseline this run did not compute counts as worse.
    Second: the metrics the baseline has no value of (undefined there) but this run has, which
    nothing gates — said, not skipped silently."""
    check_same_protocol(baseline, path, {name: mine[name] for name in ("model_fingerprint", "forward_dtype")})
    comparison = report.comparison()
    rows = {row.method: row for row in comparison.rows}
    by_identity = {_identity(mine["methods"][label]): label for label in rows}
    problems, unchecked = [], []
    for old in baseline["comparison"]["rows"]:
        method = old["method"]
        label = by_identity.get(_identity(baseline["methods"][method]))
        if label is None:
            problems.append(f"{method}: in the baseline {path}, not in this report (same method, settings and library)")
            continue
        row = rows[label]
        for key, value in row.values.items():
            if value is not None and old["values"].get(key) is None:
                column = next(c for c in comparison.columns if c.key == key)
                unchecked.append(f"{label}: {column.metric.name} has no value in the baseline {path}: not gated")
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
            if value is None:  # undefined here, defined in the baseline: not a pass
                message = (
                    f"{label}: {metric.name} is undefined in this run (no input gave it a value), the baseline's "
                    f"{_value(old_value)} ({path})"
                )
            else:
                message = (
                    f"{label}: {metric.name} {value:.4f} is {_side(metric)} {_value(allowed)}, the baseline's "
                    f"{_value(old_value)} with tolerance {tolerance:g} ({path})"
                )
            paired = _paired(report, baseline, label, method, key, bootstrap)
            if paired is not None:
                low, high = paired.interval.low, paired.interval.high
                message += (
                    f"; paired difference {paired.mean:+.4f} [{low:+.4f}, {high:+.4f}] over {paired.inputs} inputs"
                )
            problems.append(message)
    gated = {by_identity.get(_identity(baseline["methods"][old["method"]])) for old in baseline["comparison"]["rows"]}
    unchecked += [f"{label}: not in the baseline {path}: not gated" for label in rows if label not in gated]
    return problems, unchecked


def _paired(report, baseline: dict, label: str, old_label: str, key: str, bootstrap: BootstrapSettings):
    """This report − the baseline on the inputs both evaluated, when both kept per-input values."""
    if key in SCALAR_METRICS:
        old = baseline["methods"][old_label].get("per_input", {}).get(key)
        scalar = report.methods[label].scalars.get(key)
        if not old or scalar is None:
            return None
        before = {k: v for k, v in zip(old.get("keys", []), old.get("values", [])) if v is not None}
        found = paired_difference(scalar.means(), before, bootstrap)
        return found if found is not None and found.interval is not None else None
    order, _, metric = key.partition("_")
    old = baseline["methods"][old_label].get("per_input", {}).get(order)
    values = report.methods[label].per_input.get(order)
    if not old or values is None or metric not in ("aopc", "lodds"):
        return None
    before = {k: v for k, v in zip(old.get("keys", []), old.get(metric, [])) if v is not None}
    found = paired_difference(values.means(metric), before, bootstrap)
    return found if found is not None and found.interval is not None else None
