"""contrastcat evaluate: faithfulness of attribution records."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from contrastcat.deletion.perturb import DELETE
from contrastcat.errors import BadInput, GateFailed
from contrastcat.evaluation.metrics import (
    BEST,
    METRICS,
    SECOND,
    Comparison,
    step_labels,
)
from contrastcat.evaluation.reports import MARKDOWN_DECIMALS, TABLE_DECIMALS, header, number

from .common import (
    BatchOption,
    DeviceOption,
    DtypeOption,
    ForwardDtypeOption,
    QuietOption,
    info,
    phased_progress,
    reports_errors,
    stdout_console,
    warn,
)

EPILOG = """\
Examples:

\b
  contrastcat evaluate attr.jsonl
  contrastcat evaluate attr.jsonl --order morf --steps reference --perturb mask -o report.json
  contrastcat evaluate attr.jsonl --kendall --refs refs.h5 --json
  cat contrastcat.io.jsonl attcat.jsonl random.jsonl | contrastcat evaluate - --markdown
  contrastcat evaluate attr.jsonl --compare contrastcat,attcat --bootstrap 2000
  contrastcat evaluate attr.jsonl --fail-under 'morf.aopc=0.5,lerf.lodds=0.1'
  contrastcat evaluate attr.jsonl --per-input -o report.json      # a baseline for later runs
  contrastcat evaluate attr.jsonl --baseline report.json --tolerance 0.01
  contrastcat evaluate attr.jsonl --plot curves.svg

A file with several methods' records prints one comparison table (mean over
the steps ± half its bootstrap interval over inputs; best of each column in
bold, second underlined); --curves adds each method's step table.
--bootstrap takes 0 (no intervals) or 100 to 100000 resamples; more is
refused. Bounds and --tolerance are finite ASCII decimals (0.05, 5e-2).

Exit codes: 0 done; 1 the run failed; 2 bad input, also when no record could
be evaluated (all shorter than --min-tokens or only special tokens) or the
--baseline is damaged, foreign or named by -o; 3 a --fail-under bound or
the --baseline was not met (after the report is written and printed); 130
interrupted.
"""



# The API's names for the options whose flag says it differently (errors speak in flags here).
FLAGS = {"records": "ATTR", "library": "--refs", "orders": "--order", "output": "--output"}


@reports_errors
def evaluate(
    attributions: Annotated[str, typer.Argument(metavar="ATTR", help="Records from explain (JSONL); - for stdin.")],
    model: Annotated[str | None, typer.Option("--model", "-m", help="Default: the model named in the records.")] = None,
    order: Annotated[str, typer.Option(help="Comma list of morf, lerf.")] = "morf,lerf",
    steps: Annotated[str, typer.Option(help="Step grid: paper (10..90 % of non-special tokens) or reference.")] = "paper",
    perturb: Annotated[str, typer.Option(help="delete (remove tokens) or mask (mask token).")] = DELETE,
    target: Annotated[str, typer.Option(help="Class whose probability drops: pred, gold or record.")] = "pred",
    min_tokens: Annotated[int, typer.Option(min=1, help="Skip inputs with fewer tokens (special included).")] = 10,
    kendall: Annotated[bool, typer.Option(help="Also the Kendall-τ test against the alternative class (c+1) mod C.")] = False,
    refs: Annotated[str | None, typer.Option(help="Reference library for --kendall with contrastcat records.")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write the JSON report here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report on stdout instead of tables.")] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the comparison as a GitHub Markdown table instead of tables.")
    ] = False,
    curves: Annotated[
        bool, typer.Option("--curves", help="With several methods, also print each method's step table.")
    ] = False,
    bootstrap: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples of the inputs for each mean's interval; 0: none.")
    ] = 1000,
    ci: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
    compare: Annotated[
        str | None, typer.Option(metavar="A,B", help="Paired difference A − B over their shared inputs, with its interval.")
    ] = None,
    per_input: Annotated[
        bool, typer.Option("--per-input", help="Keep every input's values in the JSON report (for --baseline).")
    ] = False,
    fail_under: Annotated[
        str | None,
        typer.Option(metavar="BOUNDS", help="Exit 3 when a metric is worse than its bound: 'morf.aopc=0.5,lerf.lodds=0.1' "
                     "(METHOD:METRIC=VALUE for one method; metrics morf.aopc, morf.lodds, lerf.aopc, lerf.lodds, kendall.tau)."),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(metavar="REPORT", help="Exit 3 when a metric is worse than in this earlier report (-o).")
    ] = None,
    tolerance: Annotated[
        str, typer.Option(metavar="T", help="How much worse than --baseline a metric may be (a finite number, 0 or more).")
    ] = "0.01",
    plot: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="Draw the MoRF/LeRF curves, intervals as bands (.png, .svg, .pdf; "
                     "needs matplotlib: pip install 'contrastcat[plot]')."),
    ] = None,
    batch_size: BatchOption = 64,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    quiet: QuietOption = False,
) -> None:
    """Perturb the most (MoRF) and least (LeRF) relevant tokens first; report AOPC and log-odds per step."""
    # Imported here, not at the top: the model libraries would make every --help slow.
    from contrastcat.api import evaluate_file

    if as_json and markdown:
        raise BadInput("--json and --markdown both print on stdout: pick one (-o writes the JSON report to a file)")
    with phased_progress(quiet) as progress:
        run = evaluate_file(
            attributions, model, refs, output=output, kendall=kendall, orders=order, steps=steps,
            perturb=perturb, min_tokens=min_tokens, target=target, bootstrap=bootstrap, ci=ci, seed=seed,
            compare=compare, per_input=per_input, fail_under=fail_under, baseline=baseline, tolerance=tolerance,
            plot=plot, batch_size=batch_size, device=device, dtype=dtype, forward_dtype=forward_dtype,
            progress=progress, notify=lambda line: info(line, quiet),
        )
    _say_what_was_left_out(run.evaluation.methods, run.document["truncated"], run.evaluation.records, quiet)
    _print(run.evaluation, run.document, run.text, as_json, markdown, curves, kendall, steps)
    if run.problems:
        more = f" (and {len(run.problems) - 1} more)" if len(run.problems) > 1 else ""
        raise GateFailed(run.problems[0] + more)


def _print(evaluation, document, report_text, as_json, markdown, curves, kendall, steps) -> None:
    reports = evaluation.methods
    if as_json:
        typer.echo(report_text)
        return
    if markdown:
        typer.echo(evaluation.table(MARKDOWN_DECIMALS))
        _print_compare(document, MARKDOWN_DECIMALS)
        return
    console = stdout_console(soft_wrap=True)
    if len(reports) == 1 or curves:
        for name, report in reports.items():
            console.print(_curve_table(name, report, step_labels(steps)))
            if report.kendall is not None:
                k = report.kendall
                verdict = "passes" if k.passes else "does not pass"
                console.print(
                    f"Kendall-τ (c vs (c+1) mod {evaluation.num_classes}, {k.inputs} inputs): "
                    f"index τ = {k.tau_index:.3f} ({verdict} < 0.05), score τ = {k.tau_scores:.3f}"
                )
    if len(reports) > 1:
        comparison = evaluation.comparison(TABLE_DECIMALS)
        table = _comparison_table(comparison, len(step_labels(steps)), plain=console.color_system is None)
        # A terminal wraps the headers to fit; a pipe or file gets the whole table, unwrapped.
        if not console.is_terminal:
            console.width = max(console.width, console.measure(table, options=console.options.update_width(1000)).maximum)
        console.print(table)
        if kendall:
            console.print(
                f"Kendall τ: mean index τ between the rankings for c and (c+1) mod {evaluation.num_classes}; "
                "below 0.05 passes."
            )
    if evaluation.bootstrap.resamples:
        b = evaluation.bootstrap
        typer.echo(f"± half the {b.level:.0%} bootstrap interval over inputs ({b.resamples} resamples, seed {b.seed}).")
    _print_compare(document, TABLE_DECIMALS)


def _print_compare(document: dict, decimals: int) -> None:
    """``A − B: MoRF AOPC +0.030 [+0.012, +0.047], excludes 0`` per metric."""
    compare = document.get("compare")
    if compare is None:
        return
    names = {c["key"]: c["name"] for c in document["comparison"]["columns"]}
    typer.echo(f"{compare['first']} − {compare['second']}, paired over the inputs both evaluated:")
    for key, found in compare["differences"].items():
        interval = found["interval"]
        if interval is None:
            typer.echo(f"  {names.get(key, key)}: {found['mean']:+.{decimals}f} ({found['inputs']} inputs; no interval)")
            continue
        verdict = "excludes 0" if found["excludes_zero"] else "includes 0"
        typer.echo(
            f"  {names.get(key, key)}: {found['mean']:+.{decimals}f} "
            f"[{interval['low']:+.{decimals}f}, {interval['high']:+.{decimals}f}], {verdict} ({found['inputs']} inputs)"
        )


def _say_what_was_left_out(reports: dict, truncated: int, total: int, quiet: bool) -> None:
    """Records that were not evaluated, or that explain truncated inputs: one note each, on stderr."""
    special = sum(r.skipped_special for r in reports.values())
    duplicates = sum(r.skipped_duplicates for r in reports.values())
    if special:
        warn(f"{special} record(s) hold only special tokens (nothing to perturb): not evaluated")
    if duplicates:
        warn(f"{duplicates} duplicate record(s) (same id, input, target, method and settings): not counted again")
    if truncated:
        info(f"note: {truncated} of {total} record(s) explain a truncated input (their records say truncated: true)", quiet)


def _curve_table(name: str, report, labels: list[str]) -> Table:
    """Steps as rows, metrics as columns: fits an 80-column terminal."""
    left_out = f", {report.skipped_short} skipped (too short)"
    if report.skipped_special:
        left_out += f", {report.skipped_special} skipped (only special tokens)"
    if report.skipped_duplicates:
        left_out += f", {report.skipped_duplicates} duplicates skipped"
    table = Table(title=Text(f"{name}: {report.evaluated} inputs evaluated{left_out}"), title_justify="left")
    table.add_column("step", justify="right")
    columns = []
    for order, curve in report.curves.items():
        for key in ("aopc", "lodds"):
            metric = METRICS[(order, key)]
            table.add_column(header(metric), justify="right")
            columns.append(getattr(curve, key))
    for step, label in enumerate(labels):
        table.add_row(label, *[f"{values[step]:.4f}" for values in columns])
    table.add_section()
    table.add_row("mean", *[f"{sum(values) / len(values):.4f}" for values in columns], style="bold")
    keys = [f"{order}_{key}" for order in report.curves for key in ("aopc", "lodds")]
    if all(key in report.intervals for key in keys):  # its own row: the table still fits 80 columns
        table.add_row("±", *[f"{report.intervals[key].half_width:.4f}" for key in keys])
    return table


# Where styles cannot show (not a terminal, TERM=dumb), a sign after the value says it.
PLAIN_SIGNS = {BEST: " *", SECOND: " †"}
STYLES = {BEST: "bold", SECOND: "underline"}


def _comparison_table(comparison: Comparison, steps: int, plain: bool) -> Table:
    """Methods as rows, the mean of each metric over the steps as columns."""
    legend = "* best, † second" if plain else "bold best, underlined second"
    table = Table(title=f"Mean over the {steps} steps ({legend} in each column)", title_justify="left")
    table.add_column("method", no_wrap=True)
    for column in comparison.columns:
        table.add_column(header(column.metric), justify="right")
    table.add_column("inputs", justify="right")
    for row in comparison.rows:
        cells = []
        for column in comparison.columns:
            mark = row.marks[column.key]
            text = number(row.values[column.key], TABLE_DECIMALS, row.intervals.get(column.key))
            if mark is None:
                cells.append(Text(text + ("  " if plain else "")))
            elif plain:
                cells.append(Text(text + PLAIN_SIGNS[mark]))
            else:
                cells.append(Text.assemble((text, STYLES[mark])))  # the number only, not its padding
        table.add_row(Text(row.method), *cells, str(row.evaluated))
    return table
