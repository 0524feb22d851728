"""Faithfulness of attributions (docs/spec.md §5): perturbation curves and Kendall-τ.

Metrics carry their name and which direction is better, so reports can mark
the best value without knowing the metric (:func:`rank_marks`,
:func:`compare_methods`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..deletion.perturb import DELETE, LERF, MASK, MORF, ranked_positions
from ..deletion.plan import PAPER, STEP_GRIDS, DeletionPlan, step_counts
from ..errors import BadInput
from ..models.tokens import ProbabilityFn
from ..records.record import AttributionRecord, resolve_label
from .stats import BootstrapSettings, Interval, column_intervals, mean_interval

ORDERS = (MORF, LERF)
TARGETS = ("pred", "gold", "record")
CLIP = 1e-12
KENDALL_PASS = 0.05


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool


# Better: MoRF AOPC higher, MoRF LOdds lower, LeRF AOPC lower, LeRF LOdds higher.
METRICS = {
    (MORF, "aopc"): Metric("MoRF AOPC", True),
    (MORF, "lodds"): Metric("MoRF LOdds", False),
    (LERF, "aopc"): Metric("LeRF AOPC", False),
    (LERF, "lodds"): Metric("LeRF LOdds", True),
}
# Mean index τ over inputs (docs/spec.md §5): lower means more class-distinct attributions.
KENDALL_METRIC = Metric("Kendall τ", False)
BEST = "best"
SECOND = "second"


@dataclass(frozen=True)
class EvalSettings:
    orders: tuple[str, ...] = ORDERS
    steps: str = PAPER
    perturb: str = DELETE
    min_tokens: int = 10
    target: str = "pred"
    forward_dtype: str = "same"  # autocast of the curves' passes (`forward_dtype`); same: the weights'

    def __post_init__(self) -> None:
        from ..models.precision import check_forward_dtype

        check_forward_dtype(self.forward_dtype)
        if not self.orders or any(order not in ORDERS for order in self.orders):
            raise BadInput(f"`orders` must be a comma list of {', '.join(ORDERS)}, got {','.join(self.orders)!r}")
        if self.steps not in STEP_GRIDS:
            raise BadInput(f"`steps` must be one of {', '.join(STEP_GRIDS)}, got {self.steps!r}")
        if self.perturb not in (DELETE, MASK):
            raise BadInput(f"`perturb` must be delete or mask, got {self.perturb!r}")
        if self.target not in TARGETS:
            raise BadInput(f"`target` must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if self.min_tokens < 1:
            raise BadInput(f"`min_tokens` must be at least 1, got {self.min_tokens}")


@dataclass
class Curve:
    aopc: list[float]
    lodds: list[float]

    @property
    def aopc_mean(self) -> float:
        return float(np.mean(self.aopc))

    @property
    def lodds_mean(self) -> float:
        return float(np.mean(self.lodds))

    def as_dict(self) -> dict:
        return {"aopc": self.aopc, "lodds": self.lodds, "aopc_mean": self.aopc_mean, "lodds_mean": self.lodds_mean}


def _finite_or_none(value: float) -> float | None:
    """NaN (no input to average over, or τ undefined) is written as null: reports are strict JSON."""
    return None if value is None or math.isnan(value) else value


@dataclass
class Kendall:
    tau_index: float  # τ between the descending-score index arrays P^c and P^ĉ
    tau_scores: float  # τ-b between the raw score vectors
    inputs: int
    index_taus: list[float] = field(default_factory=list, repr=False)  # per input, to pool chunks
    score_taus: list[float] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, index_taus: Sequence[float], score_taus: Sequence[float]) -> Kendall:
        """Mean τ over inputs (NaN, where τ is undefined, left out)."""
        return cls(
            tau_index=float(np.nanmean(index_taus)) if len(index_taus) and not np.all(np.isnan(index_taus)) else float("nan"),
            tau_scores=float(np.nanmean(score_taus)) if len(score_taus) and not np.all(np.isnan(score_taus)) else float("nan"),
            inputs=len(index_taus),
            index_taus=list(index_taus),
            score_taus=list(score_taus),
        )

    @property
    def passes(self) -> bool:
        return self.tau_index < KENDALL_PASS

    def as_dict(self) -> dict:
        return {
            "tau_index": _finite_or_none(self.tau_index),
            "tau_scores": _finite_or_none(self.tau_scores),
            "inputs": self.inputs,
            "passes": self.passes,
        }


@dataclass(frozen=True)
class Evaluable:
    """The records of one method that can be evaluated, and why the others cannot."""

    records: list[AttributionRecord]
    too_short: int  # fewer than min_tokens tokens
    only_special: int  # nothing to perturb
    duplicates: int  # the same input, target, method and settings seen before (first one kept)


def _input_digest(record: AttributionRecord) -> bytes:
    return hashlib.blake2b(
        json.dumps([record.id, record.token_ids, record.target], sort_keys=True).encode(), digest_size=16
    ).digest()


def evaluable(records: Sequence[AttributionRecord], min_tokens: int, seen: set[bytes] | None = None) -> Evaluable:
    """Drop duplicates (keeping the first; ``seen`` carries the keys of earlier chunks), inputs
    too short, and inputs of special tokens only."""
    seen = set() if seen is None else seen
    unique = []
    for record in records:
        # A digest, not the ids themselves: the set lives as long as the stream of records.
        key = _input_digest(record)
        if key not in seen:
            seen.add(key)
            unique.append(record)
    long = long_enough(unique, min_tokens)
    usable = [r for r in long if not all(r.special)]
    return Evaluable(usable, len(unique) - len(long), len(long) - len(usable), len(records) - len(unique))


@dataclass
class PerInput:
    """One order's values per evaluated input: the keys pair inputs across methods and reports."""

    keys: list[str]  # digest of the record's id, token ids and target
    ids: list  # the records' ids, for people
    aopc: np.ndarray  # [n, steps]
    lodds: np.ndarray  # [n, steps]

    def means(self, key: str) -> dict[str, float]:
        """Input key -> the mean over the steps of ``key`` (aopc or lodds)."""
        return dict(zip(self.keys, getattr(self, key).mean(axis=1).tolist()))


@dataclass
class MethodReport:
    method: str
    evaluated: int
    skipped_short: int
    curves: dict[str, Curve] = field(default_factory=dict)
    kendall: Kendall | None = None
    skipped_special: int = 0  # only special tokens: nothing to perturb
    skipped_duplicates: int = 0
    truncated: int = 0  # evaluated records whose text was cut to the model's length limit
    per_input: dict[str, PerInput] = field(default_factory=dict, repr=False)
    intervals: dict[str, Interval] = field(default_factory=dict)  # column key -> interval of its mean
    curve_intervals: dict[str, dict[str, list[Interval]]] = field(default_factory=dict)  # order -> key -> per step
    provenance: dict = field(default_factory=dict)  # settings and library of the records

    def add_intervals(self, bootstrap: BootstrapSettings) -> None:
        """Bootstrap intervals over inputs of every mean (one draw of inputs per order)."""
        for order, values in self.per_input.items():
            steps = values.aopc.shape[1]
            found = column_intervals(
                np.concatenate([values.aopc, values.lodds, values.aopc.mean(1, keepdims=True),
                                values.lodds.mean(1, keepdims=True)], axis=1),
                bootstrap,
            )
            if found is None:
                continue
            self.curve_intervals[order] = {"aopc": found[:steps], "lodds": found[steps : 2 * steps]}
            self.intervals[f"{order}_aopc"], self.intervals[f"{order}_lodds"] = found[2 * steps :]
        if self.kendall is not None:
            found = mean_interval(self.kendall.index_taus, bootstrap)
            if found is not None:
                self.intervals["kendall_tau_index"] = found

    def as_dict(self, per_input: bool = False) -> dict:
        out = {
            "evaluated": self.evaluated,
            "skipped_short": self.skipped_short,
            "skipped_special_only": self.skipped_special,
            "skipped_duplicates": self.skipped_duplicates,
            "truncated": self.truncated,
            **{order: curve.as_dict() for order, curve in self.curves.items()},
            "intervals": {key: interval.as_dict() for key, interval in self.intervals.items()},
            "curve_intervals": {
                order: {key: [[i.low, i.high] for i in steps] for key, steps in found.items()}
                for order, found in self.curve_intervals.items()
            },
            **self.provenance,
        }
        if self.kendall is not None:
            out["kendall"] = self.kendall.as_dict()
        if per_input:
            out["per_input"] = {
                order: {
                    "keys": values.keys,
                    "ids": values.ids,
                    "aopc": [_finite_or_none(v) for v in values.aopc.mean(axis=1).tolist()],
                    "lodds": [_finite_or_none(v) for v in values.lodds.mean(axis=1).tolist()],
                }
                for order, values in self.per_input.items()
            }
            if self.kendall is not None:
                out["per_input"]["kendall_tau_index"] = [_finite_or_none(v) for v in self.kendall.index_taus]
        return out


def _target(record: AttributionRecord, probs: np.ndarray, target: str, label_names: Sequence[str], where: str) -> int:
    if target == "pred":
        return int(np.argmax(probs))
    if target == "record":
        return int(record.target)
    if record.label is None:
        raise BadInput(f"{where}: `target` gold needs a label in every record")
    return resolve_label(record.label, label_names, where)


class CurveTally:
    """One method's perturbation curves, summed chunk by chunk, so records can stream
    through ``evaluate`` without being held (docs/spec.md §5)."""

    def __init__(
        self,
        method: str,
        settings: EvalSettings,
        label_names: Sequence[str],
        mask_id: int | None = None,
        source: str = "<records>",
    ) -> None:
        self.settings, self.label_names, self.mask_id, self.source = settings, label_names, mask_id, source
        self.report = MethodReport(method=method, evaluated=0, skipped_short=0)
        self._seen: set[bytes] = set()
        self._sums: dict[str, np.ndarray] = {}  # order -> [2, steps]: AOPC and LOdds summed over inputs
        self._keys: list[str] = []
        self._ids: list = []
        self._values: dict[str, list[np.ndarray]] = {}  # order -> chunks of [2, n, steps]

    def add(self, records: Sequence[AttributionRecord], predict: ProbabilityFn) -> list[AttributionRecord]:
        """Perturb and score a chunk of records; returns the ones that were evaluated."""
        settings, report = self.settings, self.report
        chosen = evaluable(records, settings.min_tokens, self._seen)
        usable = chosen.records
        report.evaluated += len(usable)
        report.skipped_short += chosen.too_short
        report.skipped_special += chosen.only_special
        report.skipped_duplicates += chosen.duplicates
        report.truncated += sum(r.truncated for r in usable)
        if not usable:
            return usable
        base_probs = predict([tuple(r.token_ids) for r in usable])
        targets = [
            _target(r, p, settings.target, self.label_names, _where(self.source, r)) for r, p in zip(usable, base_probs)
        ]
        plan = DeletionPlan()
        rows: dict[str, list[list[int]]] = {}  # order -> per record, the rows of its 9 steps
        for order in settings.orders:
            rows[order] = []
            for record in usable:
                ranking = ranked_positions(record.scores, record.special, order)
                counts = step_counts(len(record.token_ids), len(ranking), settings.steps)
                rows[order].append(plan.steps(record.token_ids, ranking, counts, settings.perturb, self.mask_id))
        probs = plan.predict(predict)
        p = np.clip(base_probs[np.arange(len(usable)), targets], CLIP, 1.0)
        for order, per_record in rows.items():
            index = np.array(per_record)  # [N, 9]
            p_k = np.clip(probs[index, np.asarray(targets)[:, None]], CLIP, 1.0)
            values = np.stack([p[:, None] - p_k, np.log(p_k / p[:, None])])  # [2, N, 9]
            sums = values.sum(axis=1)
            self._sums[order] = self._sums[order] + sums if order in self._sums else sums
            self._values.setdefault(order, []).append(values)
        self._keys += [input_key(r) for r in usable]
        self._ids += [r.id for r in usable]
        return usable

    def finish(self) -> MethodReport:
        """The report: mean curves over every evaluated input (none: no curves)."""
        count = self.report.evaluated
        for order, sums in self._sums.items():
            self.report.curves[order] = Curve(
                aopc=[float(v) for v in sums[0] / count], lodds=[float(v) for v in sums[1] / count]
            )
            values = np.concatenate(self._values[order], axis=1)
            self.report.per_input[order] = PerInput(list(self._keys), list(self._ids), values[0], values[1])
        return self.report


def input_key(record: AttributionRecord) -> str:
    """What pairs one input across methods and reports: its id, token ids and target."""
    return _input_digest(record).hex()


def perturbation_curves(
    records: Sequence[AttributionRecord],
    predict: ProbabilityFn,
    settings: EvalSettings,
    label_names: Sequence[str],
    mask_id: int | None = None,
    source: str = "<records>",
) -> MethodReport:
    """AOPC(k) = mean (p - p_k) and LOdds(k) = mean log(p_k / p) per step and order.

    Duplicates, inputs shorter than ``min_tokens`` and inputs of special tokens
    only are left out and counted (:func:`evaluable`).
    """
    tally = CurveTally(records[0].method if records else "", settings, label_names, mask_id, source)
    tally.add(records, predict)
    return tally.finish()


def _where(source: str, record: AttributionRecord) -> str:
    return f"{source}:{record.line}" if record.line is not None else f"{source}: record id {record.id!r}"


def check_records(records: Sequence[AttributionRecord], vocab_size: int, num_classes: int, source: str) -> None:
    """Every record can be evaluated on this model: token ids in its vocabulary, targets among its classes."""
    for record in records:
        where = _where(source, record)
        if not record.token_ids:
            raise BadInput(f"{where}: record id {record.id!r} has no token_ids; evaluate needs explain's records")
        outside = next((i for i in record.token_ids if i >= vocab_size), None)
        if outside is not None:
            raise BadInput(
                f"{where}: token id {outside} is not in the model's vocabulary (ids 0..{vocab_size - 1}); "
                "were these records made with another model?"
            )
        for name in ("target", "predicted"):
            value = getattr(record, name)
            if value >= num_classes:
                raise BadInput(f"{where}: {name} {value} is not a class of the model (it has {num_classes}: 0..{num_classes - 1})")


class MethodLabels:
    """Labels of method variants, kept across chunks of a record stream.

    The first settings seen for a method label it by its name alone; other
    variants of it (an ablation run) are labelled by the settings in which
    they differ from the first, e.g. ``contrastcat[refs_used=5]``.
    """

    def __init__(self) -> None:
        self._first: dict[str, dict] = {}

    def label(self, record: AttributionRecord) -> str:
        own = {**record.settings, "library": record.library}  # a library ablation is a variant too
        base = self._first.setdefault(record.method, own)
        names = sorted(set(base) | set(own))
        differing = [f"{n}={_short(own.get(n))}" for n in names if own.get(n) != base.get(n)]
        return f"{record.method}[{','.join(differing)}]" if differing else record.method

    def group(self, records: Iterable[AttributionRecord]) -> dict[str, list[AttributionRecord]]:
        groups: dict[str, list[AttributionRecord]] = {}
        for record in records:
            groups.setdefault(self.label(record), []).append(record)
        return groups


def group_by_method(records: Sequence[AttributionRecord]) -> dict[str, list[AttributionRecord]]:
    """Records grouped by method and settings, in order of first appearance (see :class:`MethodLabels`)."""
    return MethodLabels().group(records)


def _short(value) -> str:
    """Fingerprints are long; their first hex digits tell libraries apart in a label."""
    text = str(value)
    return text[:15] if text.startswith("sha256:") else text


def long_enough(records: Sequence[AttributionRecord], min_tokens: int) -> list[AttributionRecord]:
    """Records with at least ``min_tokens`` tokens (special tokens included); the rest are skipped."""
    return [r for r in records if len(r.token_ids) >= min_tokens]


def kendall_tau_b(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's τ-b (ties accounted for), as scipy.stats.kendalltau computes it; O(T²)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    upper = np.triu_indices(len(x), k=1)
    dx = np.sign(x[:, None] - x[None, :])[upper]
    dy = np.sign(y[:, None] - y[None, :])[upper]
    concordance = float((dx * dy).sum())
    denominator = np.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return concordance / denominator if denominator > 0 else float("nan")


def descending_order(scores: Sequence[float]) -> np.ndarray:
    """Token indices by descending score, ties by position."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def kendall_confidence(scores_c: Sequence[Sequence[float]], scores_alt: Sequence[Sequence[float]]) -> Kendall:
    """Mean τ over inputs between the attributions for c and for the alternative class."""
    index_taus, score_taus = [], []
    for first, second in zip(scores_c, scores_alt):
        index_taus.append(kendall_tau_b(descending_order(first), descending_order(second)))
        score_taus.append(kendall_tau_b(first, second))
    return Kendall.of(index_taus, score_taus)


def alternative_class(target: int, num_classes: int) -> int:
    return (target + 1) % num_classes


Explainer = Callable[[Sequence[AttributionRecord], Sequence[int]], list[list[float]]]


def kendall_for_records(records: Sequence[AttributionRecord], num_classes: int, explain_for: Explainer) -> Kendall:
    """Attribute every record again for ĉ = (c + 1) mod C and compare with its scores."""
    alternatives = [alternative_class(int(r.target), num_classes) for r in records]
    return kendall_confidence([r.scores for r in records], explain_for(records, alternatives))


def mark_special_tokens(records: Iterable[AttributionRecord], special_ids: Iterable[int]) -> None:
    """Flag, in place, every token whose id is one of ``special_ids`` as special.

    Records written by other tools may not flag every special token; evaluation
    must never perturb them. Flags already set stay set.
    """
    special = set(special_ids)
    for record in records:
        record.special = [flag or token in special for flag, token in zip(record.special, record.token_ids)]


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

    def as_dict(self) -> dict:
        return {
            "method": self.method, "evaluated": self.evaluated, "values": self.values, "marks": self.marks,
            "intervals": {k: None if v is None else v.as_dict() for k, v in self.intervals.items()},
        }


@dataclass
class Comparison:
    """Methods as rows, the mean of each evaluated metric as columns, best and second marked."""

    columns: list[Column]
    rows: list[ComparisonRow]
    decimals: int | None  # precision the marks were decided at (ties after rounding)

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
) -> Comparison:
    """One row per report (in the given order): the area of each curve (the mean
    over the steps) for ``orders``, and the Kendall index τ when ``kendall``;
    each column ranked by :func:`rank_marks` in the metric's direction."""
    columns = [Column(f"{order}_{key}", METRICS[(order, key)]) for order in orders for key in ("aopc", "lodds")]
    if kendall:
        columns.append(Column("kendall_tau_index", KENDALL_METRIC))

    def value(report: MethodReport, column: Column) -> float | None:
        if column.key == "kendall_tau_index":
            found = report.kendall.tau_index if report.kendall is not None else None
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
    rows = [
        ComparisonRow(r.method, r.evaluated, values, m, {c.key: r.intervals.get(c.key) for c in columns})
        for r, values, m in zip(reports, table, marks)
    ]
    return Comparison(columns, rows, decimals)
