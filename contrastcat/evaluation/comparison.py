"""Methods side by side: each metric, which direction is better, and the best and second of each column."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .curves import MethodReport
from .fitted import LEGEND, fitted_cells
from .metrics import KENDALL_METRIC, METRICS, ORDERS, SCALAR_METRICS, Metric
from .stats import Interval


BEST = "best"


SECOND = "second"


def _comparable(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def rank_marks(
    values: Sequence[float | None], higher_is_better: bool, decimals: int | None = None
) -> list[str | None]:
    """Mark the best and the second-best values of one column of a comparison.

    Returns, for each value, :data:`BEST`, :data:`SECOND` or None. Ranking is
    dense: every value tied for best is marked best, and every value equal to
    the next distinct value is marked second (so ``[0.5, 0.5, 0.3]`` higher-is-
    better gives best, best, second). With ``decimals``, values are compared
    rounded to that many places, so values that print the same are tied. None
    and NaN are never marked, and nothing is marked unless at least two values
    are comparable: a lone value is not "best" of anything.
    """
    keyed = [round(v, decimals) if decimals is not None and _comparable(v) else v for v in values]
    distinct = sorted({v for v in keyed if _comparable(v)}, reverse=higher_is_better)
    if sum(_comparable(v) for v in keyed) < 2:
        return [None] * len(values)
    marks = {distinct[0]: BEST}
    if len(distinct) > 1:
        marks[distinct[1]] = SECOND
    return [marks.get(v) if _comparable(v) else None for v in keyed]


@dataclass(frozen=True)
class Column:
    key: str  # stable name for scripts: morf_aopc, morf_lodds, lerf_aopc, lerf_lodds, kendall_tau_index
    metric: Metric

    def as_dict(self) -> dict:
        return {"key": self.key, "name": self.metric.name, "higher_is_better": self.metric.higher_is_better}


@dataclass
class ComparisonRow:
    method: str
    evaluated: int
    values: dict[str, float | None]  # column key -> mean over steps (None: not computed or NaN)
    marks: dict[str, str | None]  # column key -> BEST, SECOND or None
    intervals: dict[str, Interval | None] = field(default_factory=dict)  # column key -> bootstrap interval
    fitted: dict[str, str] = field(default_factory=dict)  # column key -> fitted.FITTED or PARTLY

    def as_dict(self) -> dict:
        return {
            "method": self.method, "evaluated": self.evaluated, "values": self.values, "marks": self.marks,
            "intervals": {k: None if v is None else v.as_dict() for k, v in self.intervals.items()},
            "fitted": dict(self.fitted),
        }


@dataclass
class Comparison:
    """Methods as rows, the mean of each evaluated metric as columns, best and second marked."""

    columns: list[Column]
    rows: list[ComparisonRow]
    decimals: int | None  # precision the marks were decided at (ties after rounding)

    def legend(self) -> list[str]:
        """What each fitted mark shown in the table means, once per kind of mark."""
        shown = {kind for row in self.rows for kind in row.fitted.values()}
        return [LEGEND[kind] for kind in LEGEND if kind in shown]

    def as_dict(self) -> dict:
        return {
            "decimals": self.decimals,
            "columns": [c.as_dict() for c in self.columns],
            "rows": [r.as_dict() for r in self.rows],
        }


def compare_methods(
    reports: Sequence[MethodReport],
    orders: Sequence[str] = ORDERS,
    kendall: bool = False,
    decimals: int | None = None,
    scalars: Sequence[str] = (),
    perturb: str | None = None,
) -> Comparison:
    """One row per report (in the given order): the area of each curve (the mean
    over the steps) for ``orders``, the Kendall index τ when ``kendall``, and the mean of each of
    ``scalars`` (.scalars' column keys); each column ranked by :func:`rank_marks` in the metric's
    direction. With ``perturb`` (the evaluation's), each row says which cells its method was fitted to."""
    columns = [Column(f"{order}_{key}", METRICS[(order, key)]) for order in orders for key in ("aopc", "lodds")]
    columns += [Column(key, SCALAR_METRICS[key]) for key in scalars]
    if kendall:
        columns.append(Column("kendall_tau_index", KENDALL_METRIC))

    def value(report: MethodReport, column: Column) -> float | None:
        if column.key == "kendall_tau_index":
            found = report.kendall.tau_index if report.kendall is not None else None
        elif column.key in SCALAR_METRICS:
            found = report.scalars[column.key].mean if column.key in report.scalars else None
        else:
            order, key = column.key.split("_")
            curve = report.curves.get(order)
            found = getattr(curve, f"{key}_mean") if curve is not None else None
        return float(found) if _comparable(found) else None

    table = [{c.key: value(r, c) for c in columns} for r in reports]
    marks: list[dict[str, str | None]] = [{} for _ in reports]
    for column in columns:
        ranked = rank_marks([row[column.key] for row in table], column.metric.higher_is_better, decimals)
        for row_marks, mark in zip(marks, ranked):
            row_marks[column.key] = mark
    keys = {c.key for c in columns}

    def fitted(report: MethodReport) -> dict[str, str]:
        if perturb is None or report.other_class:
            return {}
        found = fitted_cells(report.provenance.get("method_name", ""), report.provenance.get("settings"), perturb, orders)
        return {key: kind for key, kind in found.items() if key in keys}

    rows = [
        ComparisonRow(r.method, r.evaluated, values, m, {c.key: r.intervals.get(c.key) for c in columns}, fitted(r))
        for r, values, m in zip(reports, table, marks)
    ]
    return Comparison(columns, rows, decimals)
