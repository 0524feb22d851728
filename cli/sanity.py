"""contrastcat sanity: do the maps depend on the model? (model randomisation, Adebayo et al. 2018)"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from contrastcat.api import is_standard_output, sanity_blocks, sanity_file

from .common import (
    printing_after,
    BatchOption,
    DeviceOption,
    DtypeOption,
    QuietOption,
    notifier,
    one_thing_on_stdout,
    phased_progress,
    reports_errors,
    tables_console,
)

EPILOG = """\
Examples:

\b
  contrastcat explain in.jsonl --refs refs.h5 --method contrastcat,attcat,random -o attr.jsonl
  contrastcat sanity attr.jsonl --refs refs.h5
  contrastcat sanity attr.jsonl --refs refs.h5 -o sanity.json --plot sanity.png --json

Each record is explained again, by its own method and settings, for its own
class, on copies of the model whose weights are re-initialised cumulatively
from the top: the classification head, then the last layer ... the first,
then the embeddings. Per step, the Spearman ρ between each input's original
and new map (non-special tokens), with a bootstrap interval over inputs. A
method passes when its maps on the fully randomised model correlate below
0.5 with the original ones. Library methods need --refs: the references are
captured again under each copy, never read from the original activations.

Exit codes: 0 done (whatever the verdicts); 1 the run failed; 2 bad input;
130 interrupted.
"""

FLAGS = {"records": "ATTR", "library": "--refs", "output": "--output"}


@reports_errors
def sanity(
    attributions: Annotated[str, typer.Argument(metavar="ATTR", help="Records from explain (JSONL); - for stdin.")],
    model: Annotated[str | None, typer.Option("--model", "-m", help="Default: the model named in the records.")] = None,
    refs: Annotated[str | None, typer.Option(help="The reference library the records were made with.")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write the JSON report here.")] = None,
    plot: Annotated[str | None, typer.Option(metavar="FILE", help="Draw ρ per step (.png, .svg, .pdf; needs matplotlib).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report on stdout instead of the table.")] = False,
    per_input: Annotated[bool, typer.Option("--per-input", help="Keep every input's ρ in the JSON report.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the re-initialisation and of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples for each mean's interval; 0: none.")] = 1000,
    ci: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    batch_size: BatchOption = 16,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    quiet: QuietOption = False,
) -> None:
    """Model randomisation: the maps of each method on copies of the model destroyed layer by layer."""
    one_thing_on_stdout(output, **{"--json": as_json})
    with phased_progress(quiet) as progress:
        report, document = sanity_file(
            attributions, model, refs, output=output, plot=plot, per_input=per_input, seed=seed, bootstrap=bootstrap,
            ci=ci, batch_size=batch_size, device=device, dtype=dtype, progress=progress, notify=notifier(quiet, FLAGS),
        )
    printed = "the JSON report" if as_json else None if is_standard_output(output) else "the table"
    with printing_after(("the report", output), ("the picture", plot), stdout=printed):
        _print(report, document, as_json, tables_console(output, quiet, soft_wrap=True))


def _print(report, document: dict, as_json: bool, console) -> None:
    if as_json:
        import json

        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if console is None:
        return
    for block in sanity_blocks(report):
        if isinstance(block, Table) and not console.is_terminal:
            console.width = max(console.width, console.measure(block, options=console.options.update_width(1000)).maximum)
        console.print(block) if not isinstance(block, str) else typer.echo(block, err=console.stderr)
