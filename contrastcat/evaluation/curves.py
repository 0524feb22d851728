"""Faithfulness of attributions (docs/spec.md §5): the perturbation curves (AOPC and log-odds per
step, MoRF and LeRF), summed chunk by chunk over a stream of inputs given as columns (token ids,
scores, special flags: :class:`Inputs`), with a function from token ids to probabilities, as
Captum's metrics take tensors and a forward function. Attribution records become columns in
``usecases.evaluate_records``; Kendall-τ is in :mod:`.kendall`, methods side by side in
:mod:`.comparison`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..deletion.names import DELETE, PAPER
from ..deletion.perturb import ranked_positions
from ..deletion.plan import DeletionPlan, step_counts
from ..models.tokens import ProbabilityFn
from .kendall import Kendall, finite_or_none
from .metrics import ORDERS
from .metrics import ERASER_COMP, ERASER_SUFF, LOO_TAU, PLAUSIBILITY_KEYS
from .plausibility import plausibility_columns
from .scalars import EraserRows, LeaveOneOut, loo_tau
from .stats import BootstrapSettings, Interval, column_intervals, mean_interval

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
    # Plausibility against the records' evidence (.plausibility): set where a record carries any.
    plausibility: bool = False

    @property
    def scalar_keys(self) -> tuple[str, ...]:
        """The comparison's columns of one value per input this evaluation computes."""
        return (ERASER_COMP, ERASER_SUFF) * self.eraser + (LOO_TAU,) * self.loo + PLAUSIBILITY_KEYS * self.plausibility


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
class Inputs:
    """A chunk of one method's inputs as columns: what the curves need of its attribution records
    (made from records by ``usecases.evaluate_records.columns``), nothing more."""

    keys: list[str]  # what pairs one input across methods and reports: its id, token ids and target
    ids: list  # for people
    token_ids: list[list[int]]
    scores: list[list[float]]
    special: list[list[bool]]  # never perturbed
    truncated: list[bool]  # its text was cut to the model's length limit
    positions: list[int] = field(default_factory=list)  # where each input sat in the chunk it came from
    # Plausibility's: the scores in the method's own units (signed where it is: the magnitude
    # ranking needs the sign), and per token whether it is evidence (None: the input gives none).
    raw: list[list[float]] = field(default_factory=list)
    evidence: list[list[bool] | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.positions:
            object.__setattr__(self, "positions", list(range(len(self.keys))))
        if not self.raw:
            object.__setattr__(self, "raw", list(self.scores))
        if not self.evidence:
            object.__setattr__(self, "evidence", [None] * len(self.keys))

    def __len__(self) -> int:
        return len(self.keys)

    def take(self, chosen: Sequence[int]) -> Inputs:
        """The inputs at ``chosen`` (indices into this chunk), keeping their positions."""
        return Inputs(*([column[i] for i in chosen] for column in (
            self.keys, self.ids, self.token_ids, self.scores, self.special, self.truncated, self.positions,
            self.raw, self.evidence)))


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
    repeated: int = 0  # evaluated inputs another one (another id) had the tokens and target of: not in the JSON
    per_input: dict[str, PerInput] = field(default_factory=dict, repr=False)
    intervals: dict[str, Interval] = field(default_factory=dict)  # column key -> interval of its mean
    curve_intervals: dict[str, dict[str, list[Interval]]] = field(default_factory=dict)  # order -> key -> per step
    provenance: dict = field(default_factory=dict)  # settings and library of the records
    scalars: dict[str, Scalar] = field(default_factory=dict)  # ERASER and leave-one-out, by column key
    # Evaluated records scored for another class than their maps explain (``target`` pred or gold):
    # a selection made for the record's class fits no test of another, so no cell is marked fitted.
    other_class: int = 0

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


class CurveTally:
    """One method's perturbation curves, summed chunk by chunk, so records can stream
    through ``evaluate`` without being held (docs/spec.md §5)."""

    def __init__(
        self, method: str, settings: EvalSettings, mask_id: int | None = None, loo: LeaveOneOut | None = None
    ) -> None:
        self.settings, self.mask_id = settings, mask_id
        # Shared by every method's tally of one evaluation: the drops depend on the input, not the map.
        self.loo = loo if loo is not None or not settings.loo else LeaveOneOut(settings.perturb, mask_id)
        self.report = MethodReport(method=method, evaluated=0, skipped_short=0)
        self._seen: set[str] = set()
        self._sums: dict[str, np.ndarray] = {}  # order -> [2, steps]: AOPC and LOdds summed over inputs
        self._keys: list[str] = []
        self._ids: list = []
        self._values: dict[str, list[np.ndarray]] = {}  # order -> chunks of [2, n, steps]
        self._scalars: dict[str, list[np.ndarray]] = {}  # column key -> chunks of [n]

    def evaluable(self, inputs: Inputs) -> Inputs:
        """The inputs that can be evaluated, counted in the report with why the others cannot:
        duplicates (the first one kept, across chunks), inputs shorter than ``min_tokens`` (special
        tokens included) and inputs of special tokens only."""
        report, unique = self.report, []
        for index, key in enumerate(inputs.keys):
            if key not in self._seen:
                self._seen.add(key)
                unique.append(index)
        long = [i for i in unique if len(inputs.token_ids[i]) >= self.settings.min_tokens]
        usable = [i for i in long if not all(inputs.special[i])]
        report.skipped_short += len(unique) - len(long)
        report.skipped_special += len(long) - len(usable)
        report.skipped_duplicates += len(inputs) - len(unique)
        return inputs.take(usable)

    def add(self, inputs: Inputs, predict: ProbabilityFn, targets: Sequence[int] | None = None) -> None:
        """Perturb and score evaluable ``inputs`` (:meth:`evaluable`), each for its class in
        ``targets`` (None: the class the model predicts)."""
        settings, report = self.settings, self.report
        report.evaluated += len(inputs)
        report.truncated += sum(inputs.truncated)
        if not len(inputs):
            return
        base_probs = predict([tuple(ids) for ids in inputs.token_ids])
        targets = [int(np.argmax(p)) for p in base_probs] if targets is None else [int(t) for t in targets]
        plan = DeletionPlan()
        rows: dict[str, list[list[int]]] = {}  # order -> per input, the rows of its 9 steps
        for order in settings.orders:
            rows[order] = []
            for ids, scores, special in zip(inputs.token_ids, inputs.scores, inputs.special):
                ranking = ranked_positions(scores, special, order)
                counts = step_counts(len(ids), len(ranking), settings.steps)
                rows[order].append(plan.steps(ids, ranking, counts, settings.perturb, self.mask_id))
        keys = inputs.keys
        eraser = EraserRows(plan, settings.perturb, self.mask_id) if settings.eraser else None
        loo_rows = []
        for ids, scores, special, key, target in zip(inputs.token_ids, inputs.scores, inputs.special, keys, targets):
            if eraser is not None:
                eraser.add(ids, scores, special)
            if self.loo is not None:
                loo_rows.append(self.loo.add(plan, key, target, ids, special))
        probs = plan.predict(predict)
        raw = base_probs[np.arange(len(inputs)), targets]
        if eraser is not None:
            comp, suff = eraser.values(probs, raw, targets)
            self._scalars.setdefault(ERASER_COMP, []).append(comp)
            self._scalars.setdefault(ERASER_SUFF, []).append(suff)
        if self.loo is not None:
            taus = [
                loo_tau(scores, special, self.loo.drops(key, t, drop_rows, probs, base))
                for scores, special, key, t, drop_rows, base
                in zip(inputs.scores, inputs.special, keys, targets, loo_rows, raw)
            ]
            self._scalars.setdefault(LOO_TAU, []).append(np.array(taus, dtype=np.float64))
        # Whatever the settings: whether any record carries evidence is known once all are read.
        for key, values in plausibility_columns(inputs.raw, inputs.evidence, inputs.special).items():
            self._scalars.setdefault(key, []).append(values)
        p = np.clip(raw, CLIP, 1.0)
        for order, per_input in rows.items():
            index = np.array(per_input)  # [N, 9]
            p_k = np.clip(probs[index, np.asarray(targets)[:, None]], CLIP, 1.0)
            values = np.stack([p[:, None] - p_k, np.log(p_k / p[:, None])])  # [2, N, 9]
            sums = values.sum(axis=1)
            self._sums[order] = self._sums[order] + sums if order in self._sums else sums
            self._values.setdefault(order, []).append(values)
        self._keys += keys
        self._ids += inputs.ids

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
            if key not in PLAUSIBILITY_KEYS or self.settings.plausibility:
                self.report.scalars[key] = Scalar(list(self._keys), list(self._ids), np.concatenate(chunks))
        return self.report
