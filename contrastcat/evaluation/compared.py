"""What one comparison of methods measured (each protocol's column, every method's evaluation,
the recommendation) and its report document: everything the table, the paragraph and a later
reader need, as strict JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..deletion.names import DELETE, LERF, MASK, MORF
from ..models.precision import describe_hardware
from .kendall import finite_or_none
from .metrics import ERASER_COMP, ERASER_SUFF, LOO_TAU, PLAUSIBILITY_KEYS, SCALAR_METRICS
from .recommend import Recommendation
from .reports import EvaluationReport
from .sanity import SanityReport
from .stats import BootstrapSettings, paired_difference


@dataclass(frozen=True)
class Column:
    """One protocol of the table: a measure under one perturbation, and which way is better."""

    perturb: str
    key: str  # the report's column key
    heading: str
    higher_is_better: bool

    @property
    def name(self) -> str:
        """``delete:morf_aopc``; a plausibility column by its key alone (it perturbs nothing)."""
        return self.key if self.key in PLAUSIBILITY_KEYS else f"{self.perturb}:{self.key}"


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
PERTURBED = {DELETE: "deletion", MASK: "[MASK]"}  # as the progress names them
# Against the inputs' evidence, where they carry some: the same under either perturbation (no
# input is perturbed), so taken once. No method can be fitted to them; judged by the measures
# free of a rationale threshold, token and IOU F1 shown beside.
PLAUSIBILITY_COLUMNS = tuple(
    Column(DELETE, key, SCALAR_METRICS[key].name, True) for key in PLAUSIBILITY_KEYS
)


def columns_of(reports: Mapping[str, EvaluationReport]) -> tuple[Column, ...]:
    """The table's columns: plausibility's too where the records carry evidence."""
    return COLUMNS + PLAUSIBILITY_COLUMNS * reports[DELETE].settings.plausibility


@dataclass
class Compared:
    """What one comparison measured and what it supports."""

    labels: list[str]  # each choice as the reports name it, in the order given
    seconds: dict[str, float]  # label -> seconds per input, explaining alone
    reports: dict[str, EvaluationReport]  # perturbation -> every method's evaluation
    judged: list[Column]  # the columns no compared method was fitted to: the ranking's
    fitted: dict[str, dict[str, str]]  # label -> column name -> FITTED or PARTLY
    recommendation: Recommendation
    records: list  # every method's attribution records, in turn (kept for the use case; never read here)
    inputs: int
    bootstrap: BootstrapSettings
    sanity: SanityReport | None = None  # model randomisation on the first inputs' maps
    timed: dict[str, int] = field(default_factory=dict)  # label -> inputs its seconds were measured on
    columns: tuple[Column, ...] = COLUMNS  # the table's (plausibility's too where the inputs carry evidence)
    truncated: int = 0  # inputs cut to the model's length

    def values(self, label: str, column: Column) -> dict[str, float]:
        """Input key -> the method's value on ``column``."""
        found = self.reports[column.perturb].methods.get(label)
        return {} if found is None else column_values(found, column)


def column_values(found, column: Column) -> dict[str, float]:
    if column.key in found.scalars:
        return found.scalars[column.key].means()
    order, _, key = column.key.partition("_")
    per_input = found.per_input.get(order)
    return {} if per_input is None else per_input.means(key)


def report_document(compared: Compared, classifier) -> dict:
    """Everything the table, the paragraph and a later reader need, as strict JSON."""
    found = compared.recommendation
    leader = found.best or found.leaders[0]
    methods = []
    for label in found.ranking + tuple(label for label in compared.labels if label not in found.ranking):
        cells = {}
        for column in compared.columns:
            report = compared.reports[column.perturb]
            mine = report.methods.get(label)
            if mine is None:
                continue
            values = compared.values(label, column)
            finite = [v for v in values.values() if math.isfinite(v)]
            cell = {"mean": finite_or_none(sum(finite) / len(finite)) if finite else None, "inputs": len(finite),
                    "fitted": compared.fitted.get(label, {}).get(column.name)}
            if label != leader and leader in report.methods:
                against = paired_difference(values, compared.values(leader, column), compared.bootstrap)
                if against is not None:
                    cell["against_leader"] = against.as_dict()
            cells[column.name] = cell
        entry = {"method": label, "seconds_per_input": compared.seconds[label],
                 "inputs_timed": compared.timed.get(label, compared.inputs), "columns": cells}
        if compared.sanity is not None and label in compared.sanity.methods:
            mine, last = compared.sanity.methods[label], compared.sanity.steps[-1]
            entry["sanity"] = {"rho_randomised": finite_or_none(mine.mean(last)), "passes": mine.passes(last)}
        methods.append(entry)
    evaluated = compared.reports[DELETE].methods.get(leader)
    return {
        "inputs": compared.inputs,
        # The leader's (the same inputs are too short for every method): what the means are over.
        "evaluated": compared.inputs if evaluated is None else evaluated.evaluated,
        "left_out": {} if evaluated is None else {
            "too_short": evaluated.skipped_short, "special_tokens_only": evaluated.skipped_special,
            "duplicates": evaluated.skipped_duplicates},
        "truncated": compared.truncated,
        "hardware": describe_hardware(classifier.device),
        "model": classifier.identity(),
        "columns": [{"name": c.name, "heading": c.heading, "higher_is_better": c.higher_is_better,
                     "judged": c in compared.judged} for c in compared.columns],
        "leader": leader,
        "recommendation": {
            "best": found.best, "leaders": list(found.leaders), "cheap": found.cheap, "cheap_of": found.cheap_of,
            "margin": found.margin, "ranking": list(found.ranking), "not_above_random": list(found.not_above_random),
            "wins": {k: list(v) for k, v in found.wins.items()}, "same_maps": [list(g) for g in found.same_maps],
            "no_intervals": found.no_intervals, "paragraph": found.paragraph,
        },
        "bootstrap": compared.bootstrap.as_dict(),
        "sanity_inputs": None if compared.sanity is None else compared.sanity.inputs,
        "methods": methods,
    }
