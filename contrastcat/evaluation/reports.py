"""The report of an evaluation: each method's curves and measures (:class:`EvaluationReport`),
whose ``to_dict()`` is the JSON report ``contrastcat evaluate`` writes and whose ``table()`` /
``_repr_html_`` show the comparison. It is made by ``usecases.evaluate_records``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ..deletion.plan import step_labels
from ..errors import BadInput
from .comparison import BEST, KENDALL_METRIC, SCALAR_METRICS, SECOND, Comparison, compare_methods
from .curves import EvalSettings, MethodReport
from .fitted import SIGNS
from .report_schema import REPORT_SCHEMA, REPORT_SCHEMA_VERSION
from .scalars import ERASER_BINS
from .stats import BootstrapSettings, Difference, Interval, paired_difference

TABLE_DECIMALS = 4  # the terminal tables and the JSON report's marks: values that print the same are tied
MARKDOWN_DECIMALS = 3


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

    def difference(self, first: str, second: str) -> dict[str, Difference]:
        """``first`` − ``second`` per metric, paired over the inputs both evaluated, with intervals."""
        if not (isinstance(first, str) and isinstance(second, str)) or first == second:
            raise BadInput(f"`compare` takes two different method names, got {first!r} and {second!r}")
        for name in (first, second):
            if name not in self.methods:
                raise BadInput(f"`compare`: no method {name!r} in the report (it has: {', '.join(self.methods)})")
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
            raise BadInput(f"`compare`: {first} and {second} have no evaluated input in common")
        return found

    def to_dict(self, per_input: bool = False, compare: tuple[str, str] | None = None) -> dict:
        """The JSON report (strict JSON: an undefined value is null); ``per_input`` adds every input's
        values (what a later run needs to pair its inputs with these), ``compare`` a paired difference."""
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
            "bootstrap": self.bootstrap.as_dict(),
            "methods": {name: report.as_dict(per_input) for name, report in self.methods.items()},
            "comparison": self.comparison().as_dict(),
        }
        if compare is not None:
            if isinstance(compare, str) or not isinstance(compare, (tuple, list)) or len(compare) != 2:
                raise BadInput(f"`compare` takes a pair of method names (A, B), got {compare!r}"[:200])
            differences = self.difference(*compare)
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
        # A blank line before each note: Markdown joins lines that touch into one paragraph.
        return markdown_table(self.comparison(decimals)) + "".join("\n\n" + line for line in self.footnotes())

    def footnotes(self) -> list[str]:
        """What a table of this report needs said under it: each measure a method averages over
        fewer inputs than it evaluated (a leave-one-out τ is undefined for a map of equal scores),
        and what ``±`` is, where an interval is shown."""
        lines = []
        for name, report in self.methods.items():
            counts = {SCALAR_METRICS[key].name: scalar.inputs for key, scalar in report.scalars.items()}
            if report.kendall is not None:
                counts[KENDALL_METRIC.name] = int(np.isfinite(report.kendall.index_taus).sum())
            for metric, inputs in counts.items():
                if inputs < report.evaluated:
                    lines.append(f"{name}: {metric} is the mean over {inputs} of its {report.evaluated} inputs "
                                 "(undefined for the others)")
        if any(report.intervals for report in self.methods.values()):  # too few inputs draw none
            lines.append(plus_minus_note(self.bootstrap))
        return lines

    def _repr_html_(self) -> str:
        comparison = self.comparison(MARKDOWN_DECIMALS)
        head = "".join(f"<th>{html.escape(header(c.metric))}</th>" for c in comparison.columns)
        rows = []
        for row in comparison.rows:
            cells = []
            for column in comparison.columns:
                text = number(row.values[column.key], MARKDOWN_DECIMALS, row.intervals.get(column.key))
                text += SIGNS.get(row.fitted.get(column.key), "")
                mark = row.marks[column.key]
                cells.append(f"<td><b>{text}</b></td>" if mark == BEST else f"<td><u>{text}</u></td>"
                             if mark == SECOND else f"<td>{text}</td>")
            rows.append(f"<tr><td>{html.escape(row.method)}</td>{''.join(cells)}<td>{row.evaluated}</td></tr>")
        caption = f"Mean over the {len(step_labels(self.settings.steps))} steps (bold best, underlined second)"
        notes = "".join(f"<p>{html.escape(line)}</p>" for line in self.footnotes())
        return (f"<table><caption>{caption}</caption><tr><th>method</th>{head}<th>inputs</th></tr>"
                f"{''.join(rows)}</table>{notes}")


def plus_minus_note(bootstrap: BootstrapSettings) -> str:
    """What ``±`` is in a table."""
    b = bootstrap
    return f"± half the {b.level:.0%} bootstrap interval over inputs ({b.resamples} resamples, seed {b.seed})."


def number(value: float | None, decimals: int, interval: Interval | None = None) -> str:
    """``0.556``, or ``0.556 ± 0.031`` with an interval (± its half-width; the report has both ends)."""
    if value is None:
        return "n/a"
    if interval is not None and value != 0 and round(value, decimals) == 0 and not interval.contains(0.0):
        # "0.000 ± 0.000" beside an interval that excludes 0 would say the opposite: both in full.
        return f"{value:.1e} ± {interval.half_width:.1e}"
    text = f"{round(value, decimals) + 0.0:.{decimals}f}"  # + 0.0: no "-0.000"
    if interval is not None:
        text += f" ± {round(interval.half_width, decimals) + 0.0:.{decimals}f}"
    return text


def header(metric) -> str:
    return f"{metric.name} {'↑' if metric.higher_is_better else '↓'}"


def markdown_table(comparison: Comparison) -> str:
    """The comparison as a GitHub Markdown table: best **bold**, second <ins>underlined</ins>."""
    headers = ["method", *(header(c.metric) for c in comparison.columns), "inputs"]
    lines = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    decimals = comparison.decimals if comparison.decimals is not None else MARKDOWN_DECIMALS
    for row in comparison.rows:
        cells = [row.method.replace("|", "\\|")]
        for column in comparison.columns:
            text = number(row.values[column.key], decimals, row.intervals.get(column.key))
            mark = row.marks[column.key]
            text = f"**{text}**" if mark == BEST else f"<ins>{text}</ins>" if mark == SECOND else text
            cells.append(text + SIGNS.get(row.fitted.get(column.key), ""))
        cells.append(str(row.evaluated))
        lines.append("| " + " | ".join(cells) + " |")
    legend = comparison.legend()
    lines += ["", *legend] if legend else []
    return "\n".join(lines)
