"""Faithfulness of attributions (docs/spec.md §5): the perturbation curves (AOPC and log-odds per
step, MoRF and LeRF), summed chunk by chunk over a stream of records, and the records they can be
computed on. Kendall-τ is in :mod:`.kendall`, methods side by side in :mod:`.comparison`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..deletion.perturb import DELETE, LERF, MORF, ranked_positions
from ..deletion.plan import PAPER, DeletionPlan, step_counts
from ..errors import BadInput
from ..models.tokens import ProbabilityFn
from ..records.record import AttributionRecord, resolve_label
from .kendall import Kendall, finite_or_none
from .scalars import ERASER_COMP, ERASER_SUFF, LOO_TAU, EraserRows, LeaveOneOut, loo_tau
from .stats import BootstrapSettings, Interval, column_intervals, mean_interval

ORDERS = (MORF, LERF)
TARGETS = ("pred", "gold", "record")
CLIP = 1e-12


@dataclass(frozen=True)
class EvalSettings:
    """The protocol of an evaluation; its values were checked where the command's options were
    read (``usecases.evaluate_file.EvaluateOptions``), once."""

    orders: tuple[str, ...] = ORDERS
    steps: str = PAPER
    perturb: str = DELETE
    min_tokens: int = 10
    target: str = "pred"
    forward_dtype: str = "same"  # autocast of the curves' passes (`forward_dtype`); same: the weights'
    eraser: bool = False  # also ERASER comprehensiveness and sufficiency (.scalars)
    loo: bool = False  # also the leave-one-out τ (.scalars)

    @property
    def scalar_keys(self) -> tuple[str, ...]:
        """The comparison's columns of one value per input this evaluation computes."""
        return (ERASER_COMP, ERASER_SUFF) * self.eraser + (LOO_TAU,) * self.loo


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
class Scalar:
    """A metric of one value per input (:mod:`.scalars`): NaN where it is undefined for an input,
    left out of the mean and of any pairing."""

    keys: list[str]
    ids: list
    values: np.ndarray  # [n]

    @property
    def mean(self) -> float:
        finite = self.values[np.isfinite(self.values)]
        return float(finite.mean()) if len(finite) else float("nan")

    @property
    def inputs(self) -> int:
        """Inputs it is defined for."""
        return int(np.isfinite(self.values).sum())

    def means(self) -> dict[str, float]:
        return dict(zip(self.keys, self.values.tolist()))


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
    scalars: dict[str, Scalar] = field(default_factory=dict)  # ERASER and leave-one-out, by column key

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
        for key, scalar in self.scalars.items():
            found = mean_interval(scalar.values, bootstrap)
            if found is not None:
                self.intervals[key] = found

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
        for key, scalar in self.scalars.items():
            out[key] = {"mean": finite_or_none(scalar.mean), "inputs": scalar.inputs}
        if per_input:
            out["per_input"] = {
                order: {
                    "keys": values.keys,
                    "ids": values.ids,
                    "aopc": [finite_or_none(v) for v in values.aopc.mean(axis=1).tolist()],
                    "lodds": [finite_or_none(v) for v in values.lodds.mean(axis=1).tolist()],
                }
                for order, values in self.per_input.items()
            }
            if self.kendall is not None:
                out["per_input"]["kendall_tau_index"] = [finite_or_none(v) for v in self.kendall.index_taus]
            for key, scalar in self.scalars.items():
                out["per_input"][key] = {"keys": scalar.keys, "values": [finite_or_none(v) for v in scalar.values.tolist()]}
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
        loo: LeaveOneOut | None = None,
    ) -> None:
        self.settings, self.label_names, self.mask_id, self.source = settings, label_names, mask_id, source
        # Shared by every method's tally of one evaluation: the drops depend on the input, not the map.
        self.loo = loo if loo is not None or not settings.loo else LeaveOneOut(settings.perturb, mask_id)
        self.report = MethodReport(method=method, evaluated=0, skipped_short=0)
        self._seen: set[bytes] = set()
        self._sums: dict[str, np.ndarray] = {}  # order -> [2, steps]: AOPC and LOdds summed over inputs
        self._keys: list[str] = []
        self._ids: list = []
        self._values: dict[str, list[np.ndarray]] = {}  # order -> chunks of [2, n, steps]
        self._scalars: dict[str, list[np.ndarray]] = {}  # column key -> chunks of [n]

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
        keys = [input_key(r) for r in usable]
        eraser = EraserRows(plan, settings.perturb, self.mask_id) if settings.eraser else None
        loo_rows = []
        for record, key, target in zip(usable, keys, targets):
            if eraser is not None:
                eraser.add(record.token_ids, record.scores, record.special)
            if self.loo is not None:
                loo_rows.append(self.loo.add(plan, key, target, record.token_ids, record.special))
        probs = plan.predict(predict)
        raw = base_probs[np.arange(len(usable)), targets]
        if eraser is not None:
            comp, suff = eraser.values(probs, raw, targets)
            self._scalars.setdefault(ERASER_COMP, []).append(comp)
            self._scalars.setdefault(ERASER_SUFF, []).append(suff)
        if self.loo is not None:
            taus = [
                loo_tau(r.scores, r.special, self.loo.drops(key, t, rows, probs, base))
                for r, key, t, rows, base in zip(usable, keys, targets, loo_rows, raw)
            ]
            self._scalars.setdefault(LOO_TAU, []).append(np.array(taus, dtype=np.float64))
        p = np.clip(raw, CLIP, 1.0)
        for order, per_record in rows.items():
            index = np.array(per_record)  # [N, 9]
            p_k = np.clip(probs[index, np.asarray(targets)[:, None]], CLIP, 1.0)
            values = np.stack([p[:, None] - p_k, np.log(p_k / p[:, None])])  # [2, N, 9]
            sums = values.sum(axis=1)
            self._sums[order] = self._sums[order] + sums if order in self._sums else sums
            self._values.setdefault(order, []).append(values)
        self._keys += keys
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
        for key, chunks in self._scalars.items():
            self.report.scalars[key] = Scalar(list(self._keys), list(self._ids), np.concatenate(chunks))
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


def long_enough(records: Sequence[AttributionRecord], min_tokens: int) -> list[AttributionRecord]:
    """Records with at least ``min_tokens`` tokens (special tokens included); the rest are skipped."""
    return [r for r in records if len(r.token_ids) >= min_tokens]


def mark_special_tokens(records: Iterable[AttributionRecord], special_ids: Iterable[int]) -> None:
    """Flag, in place, every token whose id is one of ``special_ids`` as special.

    Records written by other tools may not flag every special token; evaluation
    must never perturb them. Flags already set stay set.
    """
    special = set(special_ids)
    for record in records:
        record.special = [flag or token in special for flag, token in zip(record.special, record.token_ids)]


