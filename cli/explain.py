"""contrastcat explain: token attributions for each input."""

from __future__ import annotations

import json
import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, ExplainOptions
from contrastcat.errors import BadInput

from .common import info, notifier, phased_progress, printing_after, reports_errors, warn
from .spec import command, defaulted

EPILOG = """\
Examples:

\b
  contrastcat explain reviews.jsonl -o attr.jsonl          # ./refs.h5 and its model, else minilm-rt
  contrastcat explain reviews.jsonl --refs refs.h5 -o attr.jsonl
  contrastcat explain reviews.csv --text-field review --refs refs.h5 -o - | contrastcat render -
  contrastcat explain reviews.jsonl --method attcat --model bert-sst2 -o attcat.jsonl
  contrastcat explain nli.jsonl --pair-field hypothesis --refs nli-refs.h5 -o nli.jsonl   # sentence pairs
  contrastcat explain reviews.jsonl --refs refs.h5 --method contrastcat,attcat,rollout -o all.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --refs-used 5 --layers 3 --no-refine -o ablation.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --forward-dtype bfloat16 -o attr.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --shard 0/4 -o part0.jsonl   # then: contrastcat merge
  torchrun --nproc-per-node 2 -m contrastcat_cli explain reviews.jsonl --refs refs.h5 -o attr.jsonl
  contrastcat explain --list-methods
"""


def _list_methods(as_json: bool) -> None:
    # Rich's tables load with the output they print: --help and refusals need none.
    from rich.console import Console
    from rich.table import Table

    rows = [
        {
            "name": row["name"], "needs_refs": row["needs_library"],
            "options": ["--" + name.replace("_", "-") for name in row["options"]],
            "description": row["description"],
        }
        for row in api.list_methods()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(show_header=True, box=None)
    for column in ("method", "needs --refs", "options", "description"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], "yes" if row["needs_refs"] else "no", ", ".join(row["options"]) or "-",
                      row["description"])
    Console(highlight=False).print(table)


def _explain(values: dict) -> None:
    method_options = values.pop("method_options", None) or {}  # one flag per method option (cli.method_flags)
    quiet = values["quiet"]
    if values["list_methods"]:
        _list_methods(values["as_json"])
        return
    if values["as_json"]:
        raise BadInput("--json goes with --list-methods (the records are JSON Lines already)")
    with phased_progress(quiet) as progress:
        # Every option is checked, then whether INPUT was given (optional only for --list-methods).
        given = {name: value for name, value in values.items() if value is not None or name != "inputs"}
        options = ExplainOptions.read(
            {**given, "progress": progress, "notify": notifier(quiet)}, ON_COMMAND_LINE, where=None
        )
        if values["inputs"] is None:
            raise BadInput("missing INPUT: a JSONL or CSV file of texts (- for stdin); or --list-methods")
        options = options.with_methods_options(method_options)  # checked before api.run_explain loads torch
        if options.output == "-" and "output" in defaulted() and _terminal():  # -o - asked for it: no hint
            info("the records go to this terminal as JSON lines: -o FILE keeps them, "
                 "-o - | contrastcat render - shows them as text", quiet)
        run = api.run_explain(options)
    if run.speaks:  # under torchrun, rank 0 speaks for all
        # The records are all written by now (to the file, or to stdout as they finished): Ctrl-C
        # in the summary says so.
        what = f"part {run.shard.index}/{run.shard.count}" if run.shard else "every record"
        with printing_after((what, run.output)):
            _summary(run, quiet)


explain = reports_errors(command(
    ExplainOptions, _explain,
    "Attribute each input's predicted (or chosen) class to its tokens; writes one JSON record per input and method.",
))


SHOWN_PROBLEMS = 20  # bad lines listed one by one; the rest are counted


def _terminal() -> bool:
    """Whether standard output is a terminal (records there are thousands of JSON lines to read)."""
    import sys

    return sys.stdout.isatty()


def _summary(run, quiet: bool) -> None:
    """What explain says at the end: records written, texts cut, lines skipped."""
    if run.truncated:
        more = f"; --max-length takes up to {run.position_limit}" if run.limit < run.position_limit else ""
        warn(
            f"{run.truncated} of {run.inputs} input(s) had more than {run.limit} tokens and were cut to "
            f"{run.limit} (their records say truncated: true and how many tokens were dropped){more}"
        )
    if run.skipped:
        listed = "; ".join(run.skipped[:SHOWN_PROBLEMS])
        rest = f"; and {len(run.skipped) - SHOWN_PROBLEMS} more" if len(run.skipped) > SHOWN_PROBLEMS else ""
        warn(f"skipped {len(run.skipped)} bad input line(s) (--on-error skip): {listed}{rest}")
    if run.origin == "output":
        info(f"{run.output} already holds the {run.kept} record(s) of this run: nothing to do", quiet)
    elif run.output != "-":
        resumed = f" ({run.kept} kept from the checkpoint, {run.records} new)" if run.kept else ""
        part = run.shard
        what = f"part {part.index}/{part.count} ({run.records} record(s))" if part else f"{run.records + run.kept} record(s)"
        info(f"wrote {what} to {run.output}{resumed}", quiet)
