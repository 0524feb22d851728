"""contrastcat sanity: do the maps depend on the model? (model randomisation, Adebayo et al. 2018)"""

from __future__ import annotations

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, SanityOptions, is_standard_output

from .common import (
    notifier,
    one_thing_on_stdout,
    phased_progress,
    printing_after,
    reports_errors,
    tables_console,
)
from .spec import command

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

def _sanity(values: dict) -> None:
    quiet, output, as_json = values["quiet"], values["output"], values["as_json"]
    one_thing_on_stdout(output, **{"--json": as_json})
    with phased_progress(quiet) as progress:
        chosen = SanityOptions.read(
            {**values, "progress": progress, "notify": notifier(quiet)}, ON_COMMAND_LINE, where=None
        )
        report, document = api.run_sanity(chosen)
    printed = "the JSON report" if as_json else None if is_standard_output(output) else "the table"
    with printing_after(("the report", output), ("the picture", chosen.plot), stdout=printed):
        _print(report, document, as_json, tables_console(output, quiet, soft_wrap=True))


sanity = reports_errors(command(
    SanityOptions, _sanity,
    "Model randomisation: the maps of each method on copies of the model destroyed layer by layer.",
))


def _print(report, document: dict, as_json: bool, console) -> None:
    # Rich's tables load with the output they print: --help and refusals need none.
    from rich.table import Table

    if as_json:
        import json

        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if console is None:
        return
    for block in api.sanity_blocks(report):
        if isinstance(block, Table) and not console.is_terminal:
            console.width = max(console.width, console.measure(block, options=console.options.update_width(1000)).maximum)
        console.print(block) if not isinstance(block, str) else typer.echo(block, err=console.stderr)
