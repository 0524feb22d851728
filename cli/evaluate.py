"""contrastcat evaluate: faithfulness of attribution records."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from contrastcat.deletion.perturb import DELETE
from contrastcat.errors import BadInput
from contrastcat.evaluation.metrics import (
    BEST,
    METRICS,
    ORDERS,
    SECOND,
    Comparison,
    EvalSettings,
    MethodLabels,
    step_labels,
)
from contrastcat.evaluation.reports import MARKDOWN_DECIMALS, TABLE_DECIMALS, header, number
from contrastcat.io.files import atomic_text_output, check_output_path
from contrastcat.records.record import RecordFile

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
    from contrastcat.evaluation.gates import (
        GateFailed,
        check_baseline,
        check_bounds,
        check_bounds_usable,
        check_same_protocol,
        parse_bounds,
        parse_tolerance,
        read_baseline,
    )
    from contrastcat.evaluation.metrics import check_records
    from contrastcat.evaluation.reports import (
        check_against_model,
        check_explained,
        check_fingerprinted,
        evaluate_records,
    )
    from contrastcat.evaluation.stats import BootstrapSettings
    from contrastcat.library import RefLibrary
    from contrastcat.models.precision import on_classifier
    from contrastcat.models.resolve import model_location
    from contrastcat.records.record import resolve_label

    settings = EvalSettings(
        orders=_orders(order), steps=steps, perturb=perturb, min_tokens=min_tokens, target=target,
        forward_dtype=forward_dtype,
    )
    if as_json and markdown:
        raise BadInput("--json and --markdown both print on stdout: pick one (-o writes the JSON report to a file)")
    resampling = BootstrapSettings(bootstrap, ci, seed)
    pair = _pair(compare)
    bounds = parse_bounds(fail_under) if fail_under is not None else []
    allowed = parse_tolerance(tolerance)
    old_report = read_baseline(baseline) if baseline is not None else None
    if old_report is not None:
        check_same_protocol(old_report, baseline, {
            "steps": settings.steps, "perturb": settings.perturb, "target": settings.target,
            "min_tokens": settings.min_tokens, "orders": list(settings.orders),
        })
    if plot is not None:
        from contrastcat.views.plots import plot_format, require_matplotlib

        plot_format(plot)
        require_matplotlib()
        check_output_path(plot, [attributions, refs, baseline])
    if output is not None:  # the baseline is an input: a report over it would pass the next run
        check_output_path(output, [attributions, refs, baseline])
    record_file = RecordFile(attributions)
    source = record_file.name
    # Every line, before the model loads; then the records stream.
    labels = MethodLabels()
    seen_methods: set[str] = set()

    models: dict[tuple, object] = {}  # the first record of each (weights, precision): all the model check needs
    reach = _Reach()  # the records that may hold the first token id or class the model does not have
    gold: dict = {}  # each --target gold label -> the line of its first record to be evaluated
    left_out = {"short": 0, "special": 0}

    def check(record) -> None:
        check_explained([record], source)
        check_fingerprinted([record], source)
        models.setdefault((record.model_fingerprint, record.model_dtype), record)
        seen_methods.add(labels.label(record))
        reach.add(record)
        if len(record.token_ids) < settings.min_tokens:
            left_out["short"] += 1
        elif all(record.special):
            left_out["special"] += 1
        elif settings.target == "gold":
            if record.label is None:
                raise BadInput(f"{source}:{record.line}: --target gold needs a label in every record")
            gold.setdefault(_label_key(record.label), (record.label, record.line))

    total = record_file.check(check)
    if left_out["short"] + left_out["special"] == total:  # before the model loads: nothing it could do
        raise BadInput(
            f"{source}: none of its {total} record(s) could be evaluated ({left_out['short']} shorter than "
            f"--min-tokens {settings.min_tokens}, {left_out['special']} only special tokens): nothing to report"
        )
    missing = [name for name in pair or () if name not in seen_methods]
    if missing:
        raise BadInput(f"--compare: no method {missing[0]!r} in {source} (it has: {', '.join(sorted(seen_methods))})")
    check_bounds_usable(bounds, seen_methods, settings.orders, kendall)
    first = next(record_file.records())
    library = RefLibrary(refs) if refs is not None else None
    model = model or first.model
    if output is not None:
        check_output_path(output, [model_location(model)])
    classifier = load_model(model, device, quiet, dtype)
    # Every record's model, vocabulary, classes and gold label, before any work, however long the file.
    check_against_model(list(models.values()), classifier, source)
    check_records(reach.records, classifier.model.get_input_embeddings().num_embeddings, classifier.num_classes, source)
    for label, line in sorted(gold.values(), key=lambda found: found[1]):
        resolve_label(label, classifier.label_names, f"{source}:{line}")
    if old_report is not None:  # what the report will say it was evaluated with, before any work
        check_same_protocol(old_report, baseline, {
            "model_fingerprint": classifier.fingerprint,
            "forward_dtype": on_classifier(settings, classifier).forward_dtype,
        })
    with phased_progress(quiet) as report:
        evaluation = evaluate_records(
            classifier, record_file.records(), settings, library, kendall, batch_size, source,
            progress=lambda done: report("evaluating", done, total), bootstrap=resampling,
        )
    record_file.close()
    records_count = evaluation.records
    reports = evaluation.methods
    document = evaluation.to_dict(per_input or baseline is not None, pair)
    report_text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    if output is not None:
        with atomic_text_output(output, [attributions, refs, baseline]) as stream:
            stream.write(report_text + "\n")
        info(f"wrote report to {output}", quiet)
    if plot is not None:
        from contrastcat.views.plots import plot_curves

        plot_curves(evaluation, plot, [attributions, refs, baseline])
        info(f"wrote the curves to {plot}", quiet)
    _say_what_was_left_out(reports, document["truncated"], records_count, quiet)
    problems = check_bounds(evaluation.comparison(), bounds) if bounds else []
    if old_report is not None:
        problems += check_baseline(evaluation, document, old_report, allowed, resampling, baseline)
    _print(evaluation, document, report_text, as_json, markdown, curves, kendall, steps)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise GateFailed(problems[0] + more)


class _Reach:
    """The records that raise the largest token id or class seen so far, each as much of it as the
    model check reads: the first record the model cannot take is always one of them, so the whole
    file is judged before any work without being held."""

    def __init__(self) -> None:
        self.records: list[SimpleNamespace] = []
        self._token = self._class = -1

    def add(self, record) -> None:
        token, klass = max(record.token_ids), max(record.target, record.predicted)
        if token > self._token or klass > self._class:
            self._token, self._class = max(token, self._token), max(klass, self._class)
            self.records.append(SimpleNamespace(
                id=record.id, line=record.line, token_ids=[token], target=record.target, predicted=record.predicted,
            ))


def _label_key(label) -> tuple:
    """One key per distinct label, each resolved once after the model loads (1 and "1" kept apart)."""
    return (type(label).__name__, label if isinstance(label, (str, int, float, bool)) else json.dumps(label))


def _pair(compare: str | None) -> tuple[str, str] | None:
    from contrastcat.evaluation.gates import split_list

    if compare is None:
        return None
    names = split_list(compare)
    if len(names) != 2 or not all(names):
        raise BadInput(f"--compare takes two methods, A,B; got {compare!r}")
    return names[0], names[1]


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
