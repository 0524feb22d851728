"""contrastcat evaluate: faithfulness of attribution records."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from contrastcat.errors import BadInput
from contrastcat.metrics import (
    BEST,
    METRICS,
    ORDERS,
    SECOND,
    Comparison,
    EvalSettings,
    step_labels,
)
from contrastcat.files import atomic_text_output, check_output_path
from contrastcat.perturb import DELETE
from contrastcat.records import RecordFile
from contrastcat.reports import MARKDOWN_DECIMALS, TABLE_DECIMALS, header, number

from .common import (
    BatchOption,
    DeviceOption,
    DtypeOption,
    ForwardDtypeOption,
    QuietOption,
    info,
    load_model,
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
  cat contrastcat.jsonl attcat.jsonl random.jsonl | contrastcat evaluate - --markdown

A file with several methods' records prints one comparison table (mean over
the steps; best of each column in bold, second underlined); --curves adds
each method's step table.
"""



def _orders(value: str) -> tuple[str, ...]:
    orders = tuple(part.strip().lower() for part in value.split(",") if part.strip())
    unknown = [o for o in orders if o not in ORDERS]
    if not orders or unknown:
        raise BadInput(f"--order must be a comma list of {', '.join(ORDERS)}, got {value!r}")
    return orders


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
    batch_size: BatchOption = 64,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    quiet: QuietOption = False,
) -> None:
    """Perturb the most (MoRF) and least (LeRF) relevant tokens first; report AOPC and log-odds per step."""
    # Imported here, not at the top: the model libraries would make every --help slow.
    from contrastcat.library import RefLibrary
    from contrastcat.reports import check_explained, evaluate_records
    from contrastcat.resolve import model_location

    settings = EvalSettings(
        orders=_orders(order), steps=steps, perturb=perturb, min_tokens=min_tokens, target=target,
        forward_dtype=forward_dtype,
    )
    if as_json and markdown:
        raise BadInput("--json and --markdown both print on stdout: pick one (-o writes the JSON report to a file)")
    if output is not None:
        check_output_path(output, [attributions, refs])
    record_file = RecordFile(attributions)
    source = record_file.name
    # Every line, before the model loads; then the records stream.
    total = record_file.check(lambda record: check_explained([record], source))
    first = next(record_file.records())
    library = RefLibrary(refs) if refs is not None else None
    model = model or first.model
    if output is not None:
        check_output_path(output, [model_location(model)])
    classifier = load_model(model, device, quiet, dtype)
    with phased_progress(quiet) as report:
        evaluation = evaluate_records(
            classifier, record_file.records(), settings, library, kendall, batch_size, source,
            progress=lambda done: report("evaluating", done, total),
        )
    record_file.close()
    records_count = evaluation.records
    reports = evaluation.methods
    document = evaluation.to_dict()
    report_text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    if output is not None:
        with atomic_text_output(output, [attributions, refs]) as stream:
            stream.write(report_text + "\n")
        info(f"wrote report to {output}", quiet)
    _say_what_was_left_out(reports, document["truncated"], records_count, quiet)
    if as_json:
        typer.echo(report_text)
        return
    if markdown:
        typer.echo(evaluation.table(MARKDOWN_DECIMALS))
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
            text = number(row.values[column.key], TABLE_DECIMALS)
            if mark is None:
                cells.append(Text(text + ("  " if plain else "")))
            elif plain:
                cells.append(Text(text + PLAIN_SIGNS[mark]))
            else:
                cells.append(Text.assemble((text, STYLES[mark])))  # the number only, not its padding
        table.add_row(Text(row.method), *cells, str(row.evaluated))
    return table
