"""The compare use case: which explanation to trust for *this* model, measured on its inputs.

Each method explains the same inputs alone (so its time is its own), then every record is
evaluated twice, with deletion and with the tokenizer's [MASK], each time with the curves,
ERASER comprehensiveness and sufficiency and the leave-one-out τ. The methods are ranked and a
method recommended (:mod:`contrastcat.evaluation.recommend`) only on the protocols no compared
method's own selection was fitted to: Contrast-CAT chooses its maps by deletion MoRF, so that
column and the ones it partly fitted are shown, marked, and not judged by.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..attribution.pipeline import ExplainSettings, check_library, explain
from ..deletion.perturb import DELETE, LERF, MASK, MORF
from ..errors import BadInput
from ..evaluation.curves import EvalSettings
from ..evaluation.fitted import fitted_cells
from ..evaluation.recommend import DEFAULT_MARGIN, Candidate, Protocol, Recommendation, recommend
from ..evaluation.reports import EvaluationReport
from ..evaluation.scalars import ERASER_COMP, ERASER_SUFF, LOO_TAU, LeaveOneOut
from ..evaluation.stats import BootstrapSettings
from ..methods import build_method, build_methods
from ..records.inputs import InputRow
from ..records.record import AttributionRecord
from ..records.variants import MethodLabels
from .evaluate_records import Evaluating, evaluate_records

Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True)
class Column:
    """One protocol of the table: a measure under one perturbation, and which way is better."""

    perturb: str
    key: str  # the report's column key
    heading: str
    higher_is_better: bool

    @property
    def name(self) -> str:
        return f"{self.perturb}:{self.key}"


COLUMNS = (
    Column(DELETE, f"{MORF}_aopc", "MoRF AOPC, deletion", True),
    Column(MASK, f"{MORF}_aopc", "MoRF AOPC, [MASK]", True),
    Column(DELETE, f"{LERF}_aopc", "LeRF AOPC, deletion", False),
    Column(MASK, f"{LERF}_aopc", "LeRF AOPC, [MASK]", False),
    Column(DELETE, ERASER_COMP, "comprehensiveness", True),
    Column(DELETE, ERASER_SUFF, "sufficiency", False),
    Column(MASK, ERASER_COMP, "comprehensiveness, [MASK]", True),
    Column(MASK, ERASER_SUFF, "sufficiency, [MASK]", False),
    Column(DELETE, LOO_TAU, "LOO τ", True),
    Column(MASK, LOO_TAU, "LOO τ, [MASK]", True),
)
PERTURBATIONS = (DELETE, MASK)


@dataclass(frozen=True)
class Choice:
    """A method and its own options (a variant of it is another choice)."""

    method: str
    options: Mapping[str, object] = field(default_factory=dict)


# The paper's method, the tool's LRP variant and its cheap setting (docs/methods.md), the
# strongest of the others on the embedded models, and chance.
DEFAULT_CHOICES = (
    Choice("contrastcat"),
    Choice("contrastcat-lrp"),
    Choice("contrastcat-lrp", {"refs_used": 20, "test_steps": "5"}),
    Choice("attnlrp"),
    Choice("full-lrp"),
    Choice("attcat"),
    Choice("tis"),
    Choice("integrated-gradients"),
    Choice("random"),
)


@dataclass
class Compared:
    """What one comparison measured and what it supports."""

    labels: list[str]  # each choice as the reports name it, in the order given
    seconds: dict[str, float]  # label -> seconds per input, explaining alone
    reports: dict[str, EvaluationReport]  # perturbation -> every method's evaluation
    judged: list[Column]  # the columns no compared method was fitted to: the ranking's
    fitted: dict[str, dict[str, str]]  # label -> column name -> FITTED or PARTLY
    recommendation: Recommendation
    records: list[AttributionRecord]
    inputs: int

    def values(self, label: str, column: Column) -> dict[str, float]:
        """Input key -> the method's value on ``column``."""
        found = self.reports[column.perturb].methods.get(label)
        return {} if found is None else _values(found, column)


def compare(
    classifier,
    rows: Sequence[InputRow],
    library=None,
    choices: Sequence[Choice] = DEFAULT_CHOICES,
    *,
    seed: int = 0,
    batch_size: int = 16,
    bootstrap: BootstrapSettings = BootstrapSettings(),
    margin: float = DEFAULT_MARGIN,
    progress: Progress | None = None,
) -> Compared:
    """Explain ``rows`` with each choice alone (timed), evaluate every record under both
    perturbations, and recommend from the columns no choice was fitted to."""
    say = progress or (lambda phase, done, total: None)
    if len(choices) < 2:
        raise BadInput("compare needs at least two methods")
    if not rows:
        raise BadInput("compare: no inputs to explain")
    methods = [_method(choice, seed) for choice in choices]
    check_library(methods, library)
    settings = ExplainSettings(batch_size=batch_size)
    # One input first, by the cheapest method: what a first pass costs once (allocations, lazy
    # set-up) is not the first method's.
    list(explain(classifier, rows[:1], build_methods(["random"]), None, options=settings))
    records: list[AttributionRecord] = []
    seconds: list[float] = []
    for number, method in enumerate(methods):
        say(f"explaining ({method.name})", number, len(methods))
        began = time.perf_counter()
        found = list(explain(classifier, rows, [method], library if method.uses_library else None, options=settings))
        seconds.append((time.perf_counter() - began) / len(rows))
        records += found
    labels_of = MethodLabels("compare")
    labels, start = [], 0
    for method in methods:  # labelled as the evaluation labels them: the same records, in the same order
        labels.append(labels_of.label(records[start]))
        start += len(rows)
    if len(set(labels)) != len(labels):
        raise BadInput("compare: a method is given twice with the same options")
    reports = {}
    for number, perturb in enumerate(PERTURBATIONS):
        say(f"evaluating ({perturb})", len(methods) + number, None)
        reports[perturb] = evaluate_records(
            classifier, records, EvalSettings(perturb=perturb, eraser=True, loo=True),
            Evaluating(library, bootstrap=bootstrap, batch_size=batch_size * 4, loo=LeaveOneOut(perturb, None),
                       source="compare"),
        )
    fitted = {label: _fitted(reports, label) for label in labels}
    judged = [column for column in COLUMNS if not any(column.name in cells for cells in fitted.values())]
    candidates = [
        Candidate(label, seconds[index], {column.name: _values(reports[column.perturb].methods[label], column)
                                          for column in judged})
        for index, label in enumerate(labels) if all(label in report.methods for report in reports.values())
    ]
    if len(candidates) < 2 or not judged:
        raise BadInput("compare: too few methods had inputs long enough to evaluate")
    recommendation = recommend(candidates, [Protocol(c.name, c.higher_is_better) for c in judged], bootstrap, margin)
    return Compared(labels, dict(zip(labels, seconds)), reports, judged, fitted, recommendation, records, len(rows))


def _method(choice: Choice, seed: int):
    """The choice's method, with the comparison's seed where the method takes one."""
    method = build_method(choice.method, **choice.options)  # an option it does not take is refused here
    if "seed" in method.settings() and "seed" not in choice.options:
        method = build_method(choice.method, **{**choice.options, "seed": seed})
    return method


def _values(found, column: Column) -> dict[str, float]:
    if column.key in found.scalars:
        return found.scalars[column.key].means()
    order, _, key = column.key.partition("_")
    per_input = found.per_input.get(order)
    return {} if per_input is None else per_input.means(key)


def _fitted(reports: dict[str, EvaluationReport], label: str) -> dict[str, str]:
    cells = {}
    for perturb, report in reports.items():
        found = report.methods.get(label)
        if found is None:
            continue
        provenance = found.provenance
        for key, kind in fitted_cells(provenance.get("method_name", ""), provenance.get("settings"), perturb,
                                      report.settings.orders).items():
            cells[f"{perturb}:{key}"] = kind
    return cells
