"""contrastcat merge: join the part files of a sharded explain run."""

from __future__ import annotations

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, MergeOptions

from .common import info, printing_after, reports_errors
from .spec import command

EPILOG = """\
Examples:

\b
  contrastcat explain in.jsonl --refs refs.h5 --shard 0/2 -o part0.jsonl   # on one machine
  contrastcat explain in.jsonl --refs refs.h5 --shard 1/2 -o part1.jsonl   # on another
  contrastcat merge part0.jsonl part1.jsonl -o attr.jsonl
  contrastcat merge parts/*.jsonl -o - | contrastcat render -
"""


def _merge(values: dict) -> None:
    options = MergeOptions.read(values, ON_COMMAND_LINE, where=None)
    written = api.run_merge(options)
    # The merged records are written whole by now: Ctrl-C in the "wrote" line says so.
    with printing_after(("every record", options.output)):
        if options.output != "-":
            info(f"wrote {written} record(s) to {options.output}", options.quiet)


merge = reports_errors(command(
    MergeOptions, _merge,
    "Join the parts written by explain --shard I/N into the run's records, in input order:\n"
    "the same bytes one process writes. Nothing is written unless every shard is there, complete.",
))
