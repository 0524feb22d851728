"""How a report's comparison looks as a Markdown table and in HTML, and how a number with its
interval is written: the terminal's tables (:mod:`contrastcat.views.tables`) use the same.

This sits with the report, not with the views, because a report's notebook display
(``_repr_html_``) and ``table()`` are part of the object, as a record's are
(:mod:`contrastcat.records.markup`); the views compose these pieces.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .comparison import BEST, SECOND, Comparison
from .fitted import SIGNS
from .levels import level_text
from .stats import BootstrapSettings, Interval, why_no_interval

TABLE_DECIMALS = 4  # the terminal tables and the JSON report's marks: values that print the same are tied
MARKDOWN_DECIMALS = 3


def plus_minus_note(bootstrap: BootstrapSettings) -> str:
    """What ``±`` is in a table."""
    b = bootstrap
    return f"± half the {level_text(b.level)} bootstrap interval over inputs ({b.resamples} resamples, seed {b.seed})."


def no_interval_notes(counts: dict[str, int], bootstrap: BootstrapSettings) -> list[str]:
    """Why intervals asked for were not drawn, per method (``counts``: the inputs of each
    method that has none), one line for the methods that share a reason."""
    reasons: dict[str, list[str]] = {}
    for name, count in counts.items():
        why = why_no_interval(bootstrap, count)
        if why is not None:
            reasons.setdefault(why, []).append(name)
    return [f"No interval for {', '.join(names)}: {why}." for why, names in reasons.items()]


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


def markdown_report(comparison: Comparison, footnotes: Sequence[str]) -> str:
    """:func:`markdown_table`, and under it what its numbers need said."""
    # A blank line before each note: Markdown joins lines that touch into one paragraph.
    return markdown_table(comparison) + "".join("\n\n" + line for line in footnotes)


def html_report(comparison: Comparison, steps: int, footnotes: Sequence[str]) -> str:
    """The comparison as an HTML table (a notebook's display), the means over ``steps`` steps."""
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
    caption = f"Mean over the {steps} steps (bold best, underlined second)"
    notes = "".join(f"<p>{html.escape(line)}</p>" for line in footnotes)
    return (f"<table><caption>{caption}</caption><tr><th>method</th>{head}<th>inputs</th></tr>"
            f"{''.join(rows)}</table>{notes}")
