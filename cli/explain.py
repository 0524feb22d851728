"""contrastcat explain: token attributions for each input."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from contrastcat.api import explain_file, list_methods
from contrastcat.errors import BadInput

from .common import (
    BatchOption,
    DeviceOption,
    DtypeOption,
    ForwardDtypeOption,
    QuietOption,
    info,
    notifier,
    phased_progress,
    printing_after,
    reports_errors,
    warn,
)

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
    rows = [
        {
            "name": row["name"], "needs_refs": row["needs_library"],
            "options": ["--" + name.replace("_", "-") for name in row["options"]],
            "description": row["description"],
        }
        for row in list_methods()
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


# The API's names for the options whose flag says it differently (errors speak in flags here).
FLAGS = {"inputs": "INPUT", "library": "--refs", "output": "--output"}


Input = Annotated[str | None, typer.Argument(metavar="INPUT", help="JSONL or CSV with a text field; - for stdin.")]
Output = Annotated[str, typer.Option("--output", "-o", help="Records (JSONL); - for stdout.")]
Refs = Annotated[
    str | None,
    typer.Option(help="Reference library from build-refs (needed by contrastcat). With neither --refs nor "
                 "--model: ./refs.h5 if it exists, else the embedded minilm-rt's own (built and cached on first use)."),
]
Model = Annotated[str | None, typer.Option("--model", "-m", help="Default: the library's model (with no library: minilm-rt).")]
Method = Annotated[
    str, typer.Option(help="Attribution method, a comma list, or all: one record per input and method (see --list-methods).")
]
Target = Annotated[str, typer.Option(help="Class to explain: pred, gold (the input's label) or an index.")]
TextField = Annotated[str, typer.Option(help="Name of the text field/column.")]
IdField = Annotated[str, typer.Option(help="Name of the id field/column (default: line number).")]
LabelField = Annotated[str, typer.Option(help="Name of the label field/column.")]
PairField = Annotated[
    str | None,
    typer.Option(help="Sentence pairs (NLI, paraphrase, rerankers): the field/column of each input's second "
                 "text. Both texts are scored; the library must be built with --pair-field too."),
]
MaskSpecial = Annotated[bool, typer.Option(help="Reference-code quirk: zero special tokens in the attribution pass's mask.")]
MaxLength = Annotated[
    int | None,
    typer.Option(help="Tokens per input, special ones included, up to the model's position limit. "
                 "Default: the model's tokenizer limit. Longer texts are cut (records say so)."),
]
OnError = Annotated[
    str,
    typer.Option(help="A bad input line: stop (exit 2 before anything is written) or skip "
                 "(leave it out, list it at the end, exit 0)."),
]
Resume = Annotated[
    bool,
    typer.Option(help="Keep a checkpoint beside -o FILE, and continue one an interrupted run left "
                 "(the result is the same as an uninterrupted run's, byte for byte)."),
]
ShardOption = Annotated[
    str | None,
    typer.Option("--shard", help="I/N: explain only shard I (from 0) of N and write it as a part file; "
                 "contrastcat merge joins the N parts into the whole run's output, byte for byte "
                 "(for batch schedulers; under torchrun each process takes its shard by itself)."),
]
ListMethods = Annotated[bool, typer.Option("--list-methods", help="List methods and exit.")]
Json = Annotated[bool, typer.Option("--json", help="With --list-methods: the list as JSON.")]


@reports_errors
def explain(
    input_path: Input = None,
    output: Output = "-",
    refs: Refs = None,
    model: Model = None,
    method: Method = "contrastcat",
    target: Target = "pred",
    text_field: TextField = "text",
    id_field: IdField = "id",
    label_field: LabelField = "label",
    pair_field: PairField = None,
    mask_special: MaskSpecial = False,
    max_length: MaxLength = None,
    on_error: OnError = "stop",
    resume: Resume = False,
    shard: ShardOption = None,
    batch_size: BatchOption = 16,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    quiet: QuietOption = False,
    list_methods_: ListMethods = False,
    as_json: Json = False,
    method_options: dict | None = None,  # one flag per method option, added by cli.method_flags
) -> None:
    """Attribute each input's predicted (or chosen) class to its tokens; writes one JSON record per input and method."""
    if list_methods_:
        _list_methods(as_json)
        return
    if as_json:
        raise BadInput("--json goes with --list-methods (the records are JSON Lines already)")
    if input_path is None:
        raise BadInput("missing INPUT: a JSONL or CSV file of texts (- for stdin); or --list-methods")
    with phased_progress(quiet) as progress:
        run = explain_file(
            input_path, output, refs, model, method, resume=resume, shard=shard, on_error=on_error, target=target,
            batch_size=batch_size, max_length=max_length, mask_special=mask_special, device=device, dtype=dtype,
            forward_dtype=forward_dtype, text_field=text_field, id_field=id_field, label_field=label_field,
            pair_field=pair_field, progress=progress, notify=notifier(quiet, FLAGS), **(method_options or {}),
        )
    if run.speaks:  # under torchrun, rank 0 speaks for all
        # The records are all written by now (to the file, or to stdout as they finished): Ctrl-C
        # in the summary says so.
        what = f"part {run.shard.index}/{run.shard.count}" if run.shard else "every record"
        with printing_after((what, run.output)):
            _summary(run, quiet)


SHOWN_PROBLEMS = 20  # bad lines listed one by one; the rest are counted


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
