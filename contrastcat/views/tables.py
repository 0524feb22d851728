"""An evaluation as terminal tables: one step table per method, the comparison of methods, the
paired differences. What ``contrastcat evaluate`` prints; a notebook can print the same blocks
with a Rich console."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..deletion.plan import step_labels
from ..evaluation.comparison import BEST, SECOND, Comparison
from ..evaluation.metrics import MAGNITUDE, METRICS, PLAUSIBILITY_KEYS, SCALAR_METRICS, SIGNED
from ..evaluation.fitted import SIGNS
from ..evaluation.report_markup import (
    MARKDOWN_DECIMALS,
    TABLE_DECIMALS,
    header,
    no_interval_notes,
    number,
    plus_minus_note,
)
from ..evaluation.reports import EvaluationReport

# Where styles cannot show (not a terminal, TERM=dumb), a sign after the value says it.
PLAIN_SIGNS = {BEST: " *", SECOND: " †"}
STYLES = {BEST: "bold", SECOND: "underline"}


def report_blocks(
    evaluation: EvaluationReport, document: dict, *, markdown: bool = False, curves: bool = False, plain: bool = False
) -> list[str | Text | Table]:
    """What to print, in order: a string is a plain line (or a Markdown table), the rest are Rich
    renderables. ``curves``: each method's step table even when several are compared; ``plain``:
    best and second marked by signs where styles cannot show."""
    if markdown:
        return [evaluation.table(MARKDOWN_DECIMALS), *compare_lines(document, MARKDOWN_DECIMALS)]
    reports = evaluation.methods
    labels = step_labels(evaluation.settings.steps)
    blocks: list[str | Text | Table] = []
    comparison = evaluation.comparison(TABLE_DECIMALS)
    fitted = {row.method: row.fitted for row in comparison.rows}
    if len(reports) == 1 or curves:
        for name, report in reports.items():
            blocks.append(curve_table(name, report, labels, fitted[name]))
            if report.scalars and len(reports) == 1:
                blocks.append(Text(scalar_line(comparison, name)))
            if report.kendall is not None:
                k = report.kendall
                verdict = "passes" if k.passes else "does not pass"
                blocks.append(Text(
                    f"Kendall-τ (c vs (c+1) mod {evaluation.num_classes}, {k.inputs} inputs): "
                    f"index τ = {k.tau_index:.3f} ({verdict} < 0.05), score τ = {k.tau_scores:.3f}"
                ))
    if len(reports) > 1:
        # Plausibility in a table of its own: the two side by side would not fit a terminal.
        blocks.append(comparison_table(comparison, len(labels), plain, lambda key: key not in PLAUSIBILITY_KEYS))
        # Their inputs: those with evidence on a scored token, what the means are over.
        with_evidence = {name: report.scalars[PLAUSIBILITY_KEYS[0]].inputs for name, report in reports.items()
                         if PLAUSIBILITY_KEYS[0] in report.scalars}
        for ranking in (SIGNED, MAGNITUDE) if evaluation.settings.plausibility else ():
            keys = {key for key in PLAUSIBILITY_KEYS if key.endswith(ranking)}
            blocks.append(comparison_table(comparison, ranking, plain, keys.__contains__, with_evidence))
        if evaluation.kendall:
            blocks.append(Text(
                f"Kendall τ: mean index τ between the rankings for c and (c+1) mod {evaluation.num_classes}; "
                "below 0.05 passes."
            ))
    blocks += [Text(line) for line in comparison.legend()]
    blocks += evaluation.footnotes()
    return blocks + compare_lines(document, TABLE_DECIMALS)


def compare_lines(document: dict, decimals: int) -> list[str]:
    """``A − B: MoRF AOPC +0.030 [+0.012, +0.047], excludes 0`` per metric (none without a comparison)."""
    compare = document.get("compare")
    if compare is None:
        return []
    names = {c["key"]: c["name"] for c in document["comparison"]["columns"]}
    lines = [f"{compare['first']} − {compare['second']}, paired over the inputs both evaluated:"]
    for key, found in compare["differences"].items():
        interval = found["interval"]
        if interval is None:
            lines.append(f"  {names.get(key, key)}: {found['mean']:+.{decimals}f} ({found['inputs']} inputs; no interval)")
            continue
        verdict = "excludes 0" if found["excludes_zero"] else "includes 0"
        lines.append(
            f"  {names.get(key, key)}: {found['mean']:+.{decimals}f} "
            f"[{_bound(interval['low'], decimals)}, {_bound(interval['high'], decimals)}], {verdict} "
            f"({found['inputs']} inputs)"
        )
    for key in compare.get("undefined", ()):
        lines.append(f"  {names.get(key, key)}: no difference (no input where both have a value)")
    return lines


def scalar_line(comparison: Comparison, name: str) -> str:
    """One method's metrics of one value per input: ``Comprehensiveness ↑ 0.393 ± 0.020ᵖ, ...``."""
    row = next(r for r in comparison.rows if r.method == name)
    parts = [
        f"{header(c.metric)} {number(row.values[c.key], TABLE_DECIMALS, row.intervals.get(c.key))}"
        f"{SIGNS.get(row.fitted.get(c.key), '')}"
        for c in comparison.columns if c.key in SCALAR_METRICS
    ]
    return f"{name}: " + ", ".join(parts)


def curve_table(name: str, report, labels: list[str], fitted: dict[str, str] | None = None) -> Table:
    """Steps as rows, metrics as columns: fits an 80-column terminal."""
    left_out = f", {report.skipped_short} skipped (too short)"
    if report.skipped_special:
        left_out += f", {report.skipped_special} skipped (only special tokens)"
    if report.skipped_duplicates:
        left_out += f", {report.skipped_duplicates} duplicates skipped"
    table = Table(title=Text(f"{name}: {report.evaluated} inputs evaluated{left_out}"), title_justify="left")
    table.add_column("step", justify="right")
    columns = []
    fitted = fitted or {}
    for order, curve in report.curves.items():
        for key in ("aopc", "lodds"):
            sign = SIGNS.get(fitted.get(f"{order}_{key}"), "")
            table.add_column(header(METRICS[(order, key)]) + sign, justify="right")
            columns.append(getattr(curve, key))
    for step, label in enumerate(labels):
        table.add_row(label, *[f"{values[step]:.4f}" for values in columns])
    table.add_section()
    table.add_row("mean", *[f"{sum(values) / len(values):.4f}" for values in columns], style="bold")
    keys = [f"{order}_{key}" for order in report.curves for key in ("aopc", "lodds")]
    if all(key in report.intervals for key in keys):  # its own row: the table still fits 80 columns
        table.add_row("±", *[f"{report.intervals[key].half_width:.4f}" for key in keys])
    return table


def comparison_table(comparison: Comparison, steps: int | str, plain: bool, shown=lambda key: True,
                     inputs: dict[str, int] | None = None) -> Table:
    """Methods as rows, the mean of each metric over the steps as columns (those ``shown``
    takes; ``steps`` a ranking's name: plausibility's under that ranking, a mean over inputs)."""
    legend = "* best, † second" if plain else "bold best, underlined second"
    title = (f"Mean over the {steps} steps" if isinstance(steps, int) else
             f"Plausibility against the evidence, tokens ranked by {'signed score' if steps == SIGNED else 'magnitude'}")
    table = Table(title=f"{title} ({legend} in each column)", title_justify="left")
    table.add_column("method", no_wrap=True)
    columns = [column for column in comparison.columns if shown(column.key)]
    for column in columns:
        table.add_column(header(column.metric), justify="right", overflow="fold")  # a heading is never cut short
    table.add_column("inputs", justify="right")
    for row in comparison.rows:
        cells = []
        for column in columns:
            mark = row.marks[column.key]
            text = number(row.values[column.key], TABLE_DECIMALS, row.intervals.get(column.key))
            text += SIGNS.get(row.fitted.get(column.key), "")
            if mark is None:
                cells.append(Text(text + ("  " if plain else "")))
            elif plain:
                cells.append(Text(text + PLAIN_SIGNS[mark]))
            else:
                cells.append(Text.assemble((text, STYLES[mark])))  # the number only, not its padding
        table.add_row(Text(row.method), *cells, str((inputs or {}).get(row.method, row.evaluated)))
    return table


def _bound(value: float, decimals: int) -> str:
    """An interval's end: ``+0.0123``; one that would print as ``+0.0000`` though it is not 0
    keeps its sign and size (``+4.2e-05``), or "[+0.0000, …], excludes 0" would read as a slip."""
    text = f"{value:+.{decimals}f}"
    return f"{value:+.1e}" if value != 0 and float(text) == 0 else text


def sanity_blocks(report) -> list[str | Text | Table]:
    """The sanity check as printed: the ρ of each method (columns) at each step of the cascade
    (rows), ± half its interval, then one verdict line per method."""
    table = Table(
        title=f"Spearman ρ with the original maps, weights re-initialised cumulatively from the top "
              f"({report.inputs} inputs, seed {report.seed})",
        title_justify="left",
    )
    table.add_column("randomised up to", no_wrap=True)
    for label in report.methods:
        table.add_column(Text(label), justify="right")  # Text: a variant's [refs_used=5] is not markup
    for step in report.steps:
        cells = []
        for label, found in report.methods.items():
            value = found.mean(step)
            cells.append(number(None if value != value else value, 3, report.intervals.get(label, {}).get(step)))
        table.add_row(step, *cells)
    lines: list[str | Text | Table] = [table, *(Text(line) for line in report.verdicts())]
    if any(i is not None for steps in report.intervals.values() for i in steps.values()):
        lines.append(plus_minus_note(report.bootstrap))
    else:
        lines += [Text(line) for line in no_interval_notes({"any method": report.inputs}, report.bootstrap)]
    return lines
