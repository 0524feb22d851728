"""The report of an evaluation: each method's curves and measures (:class:`EvaluationReport`),
whose ``to_dict()`` is the JSON report ``contrastcat evaluate`` writes and whose ``table()`` /
``_repr_html_`` show the comparison (drawn by :mod:`.report_markup`). It is made by
``usecases.evaluate_records``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..deletion.plan import step_labels
from ..arguments import shown
from ..errors import BadInput
from ..spec import Names, backticked
from .comparison import Comparison, compare_methods
from .metrics import ERASER_BINS, KENDALL_METRIC, PLAUSIBILITY_KEYS, SCALAR_METRICS
from .curves import EvalSettings, MethodReport
from .report_markup import (
    MARKDOWN_DECIMALS,
    TABLE_DECIMALS,
    html_report,
    markdown_report,
    no_interval_notes,
    plus_minus_note,
)
from .plausibility import IOU_MATCH, THRESHOLD
from .report_schema import REPORT_SCHEMA, REPORT_SCHEMA_VERSION
from .stats import BootstrapSettings, Difference, paired_difference


@dataclass
class EvaluationReport:
    """Faithfulness of a set of records, per method (and settings)."""

    source: str
    model: str
    model_fingerprint: str
    records: int
    settings: EvalSettings
    truncated: int  # records that explain a truncated input
    methods: dict[str, MethodReport]
    kendall: bool
    num_classes: int
    bootstrap: BootstrapSettings = BootstrapSettings()
    made_elsewhere: int = 0  # records of other tools, aligned to the model's tokens (usecases.elsewhere)
    limit: int | None = None  # only the first records of the file were evaluated (evaluate --limit)

    def comparison(self, decimals: int = TABLE_DECIMALS) -> Comparison:
        return compare_methods(
            list(self.methods.values()), self.settings.orders, self.kendall, decimals, self.settings.scalar_keys,
            self.settings.perturb,
        )

    def difference(self, first: str, second: str, named: Names = backticked) -> dict[str, Difference]:
        """``first`` − ``second`` per metric, paired over the inputs both evaluated, with intervals
        (``named`` spells the option that asked for it in a message, as the caller does)."""
        if not (isinstance(first, str) and isinstance(second, str)) or first == second:
            raise BadInput(f"{named('compare')} takes two different method names, got {shown(first)} and {shown(second)}")
        for name in (first, second):
            if name not in self.methods:
                raise BadInput(f"{named('compare')}: no method {shown(name)} in the report (it has: {', '.join(self.methods)})")
        a, b = self.methods[first], self.methods[second]
        found = {}
        for order in self.settings.orders:
            if order in a.per_input and order in b.per_input:
                for key in ("aopc", "lodds"):
                    paired = paired_difference(a.per_input[order].means(key), b.per_input[order].means(key), self.bootstrap)
                    if paired is not None:
                        found[f"{order}_{key}"] = paired
        for key in self.settings.scalar_keys:
            if key in a.scalars and key in b.scalars:
                paired = paired_difference(a.scalars[key].means(), b.scalars[key].means(), self.bootstrap)
                if paired is not None:
                    found[key] = paired
        if a.kendall is not None and b.kendall is not None and a.per_input and b.per_input:
            keys_a, keys_b = next(iter(a.per_input.values())).keys, next(iter(b.per_input.values())).keys
            paired = paired_difference(
                dict(zip(keys_a, a.kendall.index_taus)), dict(zip(keys_b, b.kendall.index_taus)), self.bootstrap
            )
            if paired is not None:
                found["kendall_tau_index"] = paired
        if not found:
            raise BadInput(f"{named('compare')}: {first} and {second} have no evaluated input in common")
        return found

    def to_dict(self, per_input: bool = False, compare: tuple[str, str] | None = None,
                named: Names = backticked) -> dict:
        """The JSON report (strict JSON: an undefined value is null); ``per_input`` adds every input's
        values (what a later run needs to pair its inputs with these), ``compare`` a paired difference
        (``named``: how the caller spells that option)."""
        from ..version import __version__

        document = {
            "schema": REPORT_SCHEMA,
            "schema_version": REPORT_SCHEMA_VERSION,
            "tool": {"name": "contrastcat", "version": __version__},
            "input": self.source,
            "model": self.model,
            "model_fingerprint": self.model_fingerprint,
            "records": self.records,
            # Only when set: a report of every record reads as it did before the option existed.
            **({"limit": self.limit} if self.limit is not None else {}),
            "steps": self.settings.steps,
            "step_labels": step_labels(self.settings.steps),
            "perturb": self.settings.perturb,
            "target": self.settings.target,
            "min_tokens": self.settings.min_tokens,
            "forward_dtype": self.settings.forward_dtype,
            "truncated": self.truncated,
            "made_elsewhere": self.made_elsewhere,
            "orders": list(self.settings.orders),
            "eraser": self.settings.eraser,
            "eraser_bins": list(ERASER_BINS),
            "loo": self.settings.loo,
            # Only where the records carry evidence: a report without reads as it did before.
            **({"plausibility": {"threshold": THRESHOLD, "iou_match": IOU_MATCH}} if self.settings.plausibility else {}),
            "bootstrap": self.bootstrap.as_dict(),
            "methods": {name: report.as_dict(per_input) for name, report in self.methods.items()},
            "comparison": self.comparison().as_dict(),
        }
        if compare is not None:
            if isinstance(compare, str) or not isinstance(compare, (tuple, list)) or len(compare) != 2:
                raise BadInput(f"{named('compare')} takes a pair of method names (A, B), got {shown(compare)}")
            differences = self.difference(*compare, named=named)
            document["compare"] = {
                "first": compare[0], "second": compare[1],
                "differences": {key: d.as_dict() for key, d in differences.items()},
                # evaluated, but no input has a value for both (a τ of a constant map): said, not dropped
                "undefined": [c["key"] for c in document["comparison"]["columns"] if c["key"] not in differences],
            }
        return document

    def table(self, decimals: int = MARKDOWN_DECIMALS) -> str:
        """The comparison as a GitHub Markdown table: best **bold**, second <ins>underlined</ins>;
        under it, what its numbers need said (:meth:`footnotes`)."""
        return markdown_report(self.comparison(decimals), self.footnotes())

    def footnotes(self) -> list[str]:
        """What a table of this report needs said under it: each measure a method averages over
        fewer inputs than it evaluated (a leave-one-out τ is undefined for a map of equal scores),
        and what ``±`` is, where an interval is shown."""
        lines, columns = [], {}
        lines += self._evidence_note()
        for name, report in self.methods.items():
            # Plausibility's counts are said once, by _evidence_note.
            counts = {key: (SCALAR_METRICS[key].name, scalar.inputs) for key, scalar in report.scalars.items()
                      if key not in PLAUSIBILITY_KEYS}
            if report.kendall is not None:
                counts["kendall_tau_index"] = (KENDALL_METRIC.name, int(np.isfinite(report.kendall.index_taus).sum()))
            for key, (metric, inputs) in counts.items():
                if inputs < report.evaluated:
                    lines.append(f"{name}: {metric} is the mean over {inputs} of its {report.evaluated} inputs "
                                 "(undefined for the others)")
                    if report.intervals and key not in report.intervals:  # the method's others have one
                        columns[f"{name} {metric}"] = inputs
        if any(report.intervals for report in self.methods.values()):  # too few inputs draw none
            lines.append(plus_minus_note(self.bootstrap))
        lines += no_interval_notes(
            {name: report.evaluated for name, report in self.methods.items() if not report.intervals} | columns,
            self.bootstrap,
        )
        return lines

    def _evidence_note(self) -> list[str]:
        """Plausibility's means: over the inputs whose evidence falls on tokens the map scores
        (one line for the report, where each method has as many; else one per method)."""
        if not self.settings.plausibility:
            return []
        found = {name: (report.scalars[PLAUSIBILITY_KEYS[0]].inputs, report.evaluated)
                 for name, report in self.methods.items() if PLAUSIBILITY_KEYS[0] in report.scalars}
        why = ("the others have no evidence on a token the map scores; rationale: the tokens at or above "
               f"{THRESHOLD:g} of the largest key, IOU match at {IOU_MATCH:g}")
        if len(set(found.values())) == 1:
            inputs, evaluated = next(iter(found.values()))
            return [f"plausibility: means over the {inputs} of {evaluated} inputs with evidence ({why})"]
        return [f"{name}: plausibility over {inputs} of its {evaluated} inputs with evidence ({why})"
                for name, (inputs, evaluated) in found.items()]

    def _repr_html_(self) -> str:
        return html_report(self.comparison(MARKDOWN_DECIMALS), len(step_labels(self.settings.steps)), self.footnotes())
