"""contrastcat evaluate: faithfulness of attribution records."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from contrastcat.api import evaluate_file, is_standard_output, report_blocks
from contrastcat.errors import BadInput, GateFailed

from .common import (
    printing_after,
    BatchOption,
    DeviceOption,
    DtypeOption,
    ForwardDtypeOption,
    QuietOption,
    gate_failed,
    info,
    notifier,
    phased_progress,
    one_thing_on_stdout,
    reports_errors,
    tables_console,
    warn,
)

EPILOG = """\
Examples:

\b
  contrastcat evaluate attr.jsonl
  contrastcat evaluate attr.jsonl --order morf --steps reference --perturb mask -o report.json
  contrastcat evaluate attr.jsonl --kendall --refs refs.h5 --json
  contrastcat evaluate attr.jsonl --eraser --loo --perturb mask      # protocols no method is tuned on
  cat contrastcat.io.jsonl attcat.jsonl random.jsonl | contrastcat evaluate - --markdown
  contrastcat evaluate attr.jsonl --compare contrastcat,attcat --bootstrap 2000
  contrastcat evaluate attr.jsonl --fail-under 'morf.aopc=0.5,lerf.lodds=0.1'
  contrastcat evaluate attr.jsonl --per-input -o report.json      # a baseline for later runs
  contrastcat evaluate attr.jsonl --baseline report.json --tolerance 0.01
  contrastcat evaluate attr.jsonl --plot curves.svg

A file with several methods' records prints one comparison table (mean over
the steps ± half its bootstrap interval over inputs; best of each column in
bold, second underlined); --curves adds each method's step table. A value
marked ᶠ is one its method was fitted to (it chose its maps by that very
test: Contrast-CAT under MoRF deletion), ᵖ partly fitted (the same
perturbation and order at other fractions); docs/cli.md says more.
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


Attributions = Annotated[str, typer.Argument(metavar="ATTR", help="Records from explain (JSONL); - for stdin.")]
Model = Annotated[str | None, typer.Option("--model", "-m", help="Default: the model named in the records.")]
Order = Annotated[str, typer.Option(help="Comma list of morf, lerf.")]
Steps = Annotated[str, typer.Option(help="Step grid: paper (10..90 % of non-special tokens) or reference.")]
Perturb = Annotated[
    str, typer.Option(help="How a token goes, in every metric: delete, or replace by the mask, pad or unk token.")
]
Target = Annotated[str, typer.Option(help="Class whose probability drops: pred, gold or record.")]
MinTokens = Annotated[int, typer.Option(min=1, help="Skip inputs with fewer tokens (special included).")]
Kendall = Annotated[bool, typer.Option(help="Also the Kendall-τ test against the alternative class (c+1) mod C.")]
Eraser = Annotated[
    bool, typer.Option(help="Also ERASER comprehensiveness and sufficiency (top 1, 5, 10, 20, 50 % removed / kept).")
]
Loo = Annotated[bool, typer.Option(help="Also the Kendall τ between each map and the drop of removing each token alone.")]
Refs = Annotated[str | None, typer.Option(help="Reference library for --kendall with contrastcat records.")]
Output = Annotated[str | None, typer.Option("--output", "-o", help="Write the JSON report here.")]
Json = Annotated[bool, typer.Option("--json", help="Print the JSON report on stdout instead of tables.")]
Markdown = Annotated[
    bool, typer.Option("--markdown", help="Print the comparison as a GitHub Markdown table instead of tables.")
]
Curves = Annotated[bool, typer.Option("--curves", help="With several methods, also print each method's step table.")]
Bootstrap = Annotated[int, typer.Option(min=0, help="Bootstrap resamples of the inputs for each mean's interval; 0: none.")]
Ci = Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")]
Seed = Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")]
Compare = Annotated[
    str | None, typer.Option(metavar="A,B", help="Paired difference A − B over their shared inputs, with its interval.")
]
PerInput = Annotated[
    bool, typer.Option("--per-input", help="Keep every input's values in the JSON report (for --baseline).")
]
FailUnder = Annotated[
    str | None,
    typer.Option(metavar="BOUNDS", help="Exit 3 when a metric is worse than its bound: 'morf.aopc=0.5,lerf.lodds=0.1' "
                 "(METHOD:METRIC=VALUE for one method; metrics morf.aopc, morf.lodds, lerf.aopc, lerf.lodds, kendall.tau, "
                 "eraser.comp, eraser.suff, loo.tau)."),
]
Baseline = Annotated[
    str | None, typer.Option(metavar="REPORT", help="Exit 3 when a metric is worse than in this earlier report (-o).")
]
Tolerance = Annotated[
    str, typer.Option(metavar="T", help="How much worse than --baseline a metric may be (a finite number, 0 or more).")
]
Plot = Annotated[
    str | None,
    typer.Option(metavar="FILE", help="Draw the MoRF/LeRF curves, intervals as bands (.png, .svg, .pdf; "
                 "needs matplotlib: pip install 'contrastcat[plot]')."),
]


@reports_errors
def evaluate(
    attributions: Attributions,
    model: Model = None,
    order: Order = "morf,lerf",
    steps: Steps = "paper",
    perturb: Perturb = "delete",
    target: Target = "pred",
    min_tokens: MinTokens = 10,
    kendall: Kendall = False,
    eraser: Eraser = False,
    loo: Loo = False,
    refs: Refs = None,
    output: Output = None,
    as_json: Json = False,
    markdown: Markdown = False,
    curves: Curves = False,
    bootstrap: Bootstrap = 1000,
    ci: Ci = 0.95,
    seed: Seed = 0,
    compare: Compare = None,
    per_input: PerInput = False,
    fail_under: FailUnder = None,
    baseline: Baseline = None,
    tolerance: Tolerance = "0.01",
    plot: Plot = None,
    batch_size: BatchOption = 64,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    quiet: QuietOption = False,
) -> None:
    """Perturb the most (MoRF) and least (LeRF) relevant tokens first; report AOPC and log-odds per step."""
    if as_json and markdown:
        raise BadInput("--json and --markdown both print on stdout: pick one (-o writes the JSON report to a file)")
    one_thing_on_stdout(output, **{"--json": as_json, "--markdown": markdown})
    with phased_progress(quiet) as progress:
        run = evaluate_file(
            attributions, model, refs, output=output, kendall=kendall, eraser=eraser, loo=loo, orders=order, steps=steps,
            perturb=perturb, min_tokens=min_tokens, target=target, bootstrap=bootstrap, ci=ci, seed=seed,
            compare=compare, per_input=per_input, fail_under=fail_under, baseline=baseline, tolerance=tolerance,
            plot=plot, batch_size=batch_size, device=device, dtype=dtype, forward_dtype=forward_dtype,
            progress=progress, notify=notifier(quiet, FLAGS),
        )
    tables = None if is_standard_output(output) else "the tables"  # with -o -, they go to stderr
    printed = "the JSON report" if as_json else "the Markdown table" if markdown else tables
    with printing_after(("the report", output), ("the picture", plot), stdout=printed):
        for level, line in run.notes():
            warn(line) if level == "warning" else info(line, quiet)
        _print(run, as_json, markdown, curves, tables_console(output, quiet, soft_wrap=True))
        _gates(run.problems)


def _gates(problems: list[str]) -> None:
    """Exit 3 on a failed gate: one line, or with several a line each and then the count."""
    if len(problems) > 1:
        for problem in problems:
            gate_failed(problem)
        raise GateFailed(f"{len(problems)} gates failed (each above)")
    if problems:
        raise GateFailed(problems[0])


def _print(run, as_json: bool, markdown: bool, curves: bool, console) -> None:
    if as_json:
        typer.echo(run.text)
        return
    if console is None:
        return
    for block in report_blocks(run, markdown=markdown, curves=curves, plain=console.color_system is None):
        if isinstance(block, str):
            typer.echo(block, err=console.stderr)
            continue
        # A terminal wraps a table's headers to fit; a pipe or file gets the whole table, unwrapped.
        if isinstance(block, Table) and not console.is_terminal:
            console.width = max(console.width, console.measure(block, options=console.options.update_width(1000)).maximum)
        console.print(block)
