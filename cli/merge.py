"""contrastcat merge: join the part files of a sharded explain run."""

from __future__ import annotations

from typing import Annotated

import typer

from contrastcat.api import merge as merge_parts

from .common import QuietOption, info, printing_after, reports_errors

EPILOG = """\
Examples:

\b
  contrastcat explain in.jsonl --refs refs.h5 --shard 0/2 -o part0.jsonl   # on one machine
  contrastcat explain in.jsonl --refs refs.h5 --shard 1/2 -o part1.jsonl   # on another
  contrastcat merge part0.jsonl part1.jsonl -o attr.jsonl
  contrastcat merge parts/*.jsonl -o - | contrastcat render -
"""


FLAGS = {"parts": "PART", "output": "--output"}  # the API's names, as this command spells them


@reports_errors
def merge(
    parts: Annotated[list[str], typer.Argument(metavar="PART...", help="The part files of every shard, any order.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Records (JSONL); - for stdout.")] = "-",
    quiet: QuietOption = False,
) -> None:
    """Join the parts written by explain --shard I/N into the run's records, in input order:
    the same bytes one process writes. Nothing is written unless every shard is there, complete."""
    written = merge_parts(parts, output)
    # The merged records are written whole by now: Ctrl-C in the "wrote" line says so.
    with printing_after(("every record", output)):
        if output != "-":
            info(f"wrote {written} record(s) to {output}", quiet)
