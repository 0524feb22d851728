"""contrastcat evaluate: faithfulness of attribution records."""

from __future__ import annotations

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, EvaluateOptions, is_standard_output

from .common import (
    gates,
    info,
    notifier,
    one_thing_on_stdout,
    phased_progress,
    print_blocks,
    printing_after,
    reports_errors,
    tables_console,
    warn,
)
from .spec import command

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



def _evaluate(values: dict) -> None:
    quiet, output = values["quiet"], values["output"]
    one_thing_on_stdout(output, **{"--json": values["as_json"], "--markdown": values["markdown"]})
    with phased_progress(quiet) as progress:
        options = EvaluateOptions.read(
            {**values, "progress": progress, "notify": notifier(quiet)}, ON_COMMAND_LINE, where=None
        )
        run = api.run_evaluate(options)
    tables = None if is_standard_output(output) else "the tables"  # with -o -, they go to stderr
    printed = "the JSON report" if options.as_json else "the Markdown table" if options.markdown else tables
    with printing_after(("the report", output), ("the picture", options.plot), stdout=printed):
        for level, line in run.notes():
            warn(line) if level == "warning" else info(line, quiet)
        _print(run, options, tables_console(output, quiet, soft_wrap=True))
        gates(run.problems)


evaluate = reports_errors(command(
    EvaluateOptions, _evaluate,
    "Perturb the most (MoRF) and least (LeRF) relevant tokens first; report AOPC and log-odds per step.",
))


def _print(run, options, console) -> None:
    if options.as_json:
        typer.echo(run.text)
        return
    if console is None:
        return
    print_blocks(console, api.report_blocks(run, markdown=options.markdown, curves=options.curves,
                                            plain=console.color_system is None))
