"""contrastcat explain: token attributions for each input."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer
from rich.table import Table

from contrastcat.errors import BadInput, Interrupted
from contrastcat.io.files import check_output_path
from contrastcat.records.record import write_records

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
    warn,
)

EPILOG = """\
Examples:

\b
  contrastcat explain reviews.jsonl -o attr.jsonl          # ./refs.h5 and its model, else minilm-rt
  contrastcat explain reviews.jsonl --refs refs.h5 -o attr.jsonl
  contrastcat explain reviews.csv --text-field review --refs refs.h5 -o - | contrastcat render -
  contrastcat explain reviews.jsonl --method attcat --model bert-sst2 -o attcat.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --method contrastcat,attcat,rollout -o all.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --refs-used 5 --layers 3 --no-refine -o ablation.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --forward-dtype bfloat16 -o attr.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --shard 0/4 -o part0.jsonl   # then: contrastcat merge
  torchrun --nproc-per-node 2 -m contrastcat_cli explain reviews.jsonl --refs refs.h5 -o attr.jsonl
  contrastcat explain --list-methods
"""


def _list_methods(as_json: bool) -> None:
    import json

    from rich.console import Console

    from contrastcat.methods import list_methods, method_options

    rows = [
        {
            "name": method.name, "needs_refs": bool(method.uses_library),
            "options": ["--" + name.replace("_", "-") for name in method_options(method.name)],
            "description": method.summary,
        }
        for method in list_methods()
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


@reports_errors
def explain(
    input_path: Annotated[
        str | None, typer.Argument(metavar="INPUT", help="JSONL or CSV with a text field; - for stdin.")
    ] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="Records (JSONL); - for stdout.")] = "-",
    refs: Annotated[
        str | None,
        typer.Option(help="Reference library from build-refs (needed by contrastcat). With neither --refs nor "
                     "--model: ./refs.h5 if it exists, else the embedded minilm-rt's own (built and cached on first use)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Default: the library's model (with no library: minilm-rt).")
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            help="Attribution method, a comma list, or all: one record per input and method (see --list-methods)."
        ),
    ] = "contrastcat",
    target: Annotated[str, typer.Option(help="Class to explain: pred, gold (the input's label) or an index.")] = "pred",
    text_field: Annotated[str, typer.Option(help="Name of the text field/column.")] = "text",
    id_field: Annotated[str, typer.Option(help="Name of the id field/column (default: line number).")] = "id",
    label_field: Annotated[str, typer.Option(help="Name of the label field/column.")] = "label",
    mask_special: Annotated[
        bool, typer.Option(help="Reference-code quirk: zero special tokens in the attribution pass's mask.")
    ] = False,
    max_length: Annotated[
        int | None,
        typer.Option(help="Tokens per input, special ones included, up to the model's position limit. "
                     "Default: the model's tokenizer limit. Longer texts are cut (records say so)."),
    ] = None,
    on_error: Annotated[
        str,
        typer.Option(help="A bad input line: stop (exit 2 before anything is written) or skip "
                     "(leave it out, list it at the end, exit 0)."),
    ] = "stop",
    resume: Annotated[
        bool,
        typer.Option(help="Keep a checkpoint beside -o FILE, and continue one an interrupted run left "
                     "(the result is the same as an uninterrupted run's, byte for byte)."),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(help="I/N: explain only shard I (from 0) of N and write it as a part file; "
                     "contrastcat merge joins the N parts into the whole run's output, byte for byte "
                     "(for batch schedulers; under torchrun each process takes its shard by itself)."),
    ] = None,
    batch_size: BatchOption = 16,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    quiet: QuietOption = False,
    list_methods_: Annotated[
        bool,
        typer.Option("--list-methods", help="List methods and exit."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --list-methods: the list as JSON.")] = False,
    method_options: dict | None = None,  # one flag per method option, added by cli.method_flags
) -> None:
    """Attribute each input's predicted (or chosen) class to its tokens; writes one JSON record per input and method."""
    if list_methods_:
        _list_methods(as_json)
        return
    if as_json:
        raise BadInput("--json goes with --list-methods (the records are JSON Lines already)")
    # Imported here, not at the top: the model libraries would make every --help slow.
    from contrastcat.api import cached_library
    from contrastcat.attribution.pipeline import (
        GOLD,
        ExplainOptions,
        check_library,
        check_max_length,
        parse_target,
        record_settings,
        resolve_targets,
        usable_rows,
    )
    from contrastcat.attribution.pipeline import explain as run_explain
    from contrastcat.library.defaults import unnamed_sources
    from contrastcat.methods import build_methods, parse_method_list
    from contrastcat.models.precision import on_classifier
    from contrastcat.models.resolve import library_model, model_location
    from contrastcat.output.distributed import rank_device, sharded_output, torchrun_world
    from contrastcat.output.resume import Run, write_resumable
    from contrastcat.output.shards import Shard, Tally, merge_parts, run_identity, shard_rows
    from contrastcat.output.shards import write_part as write_part_file
    from contrastcat.records.inputs import InputFile

    if input_path is None:
        raise BadInput("missing INPUT (a .jsonl or .csv file, or - for standard input)")
    if on_error not in ON_ERROR:
        raise BadInput(f"--on-error must be stop or skip, got {on_error!r}")
    if max_length is not None and max_length < 2:
        raise BadInput(f"--max-length {max_length}: an input needs at least 2 tokens")
    world = torchrun_world()
    part = Shard.parse(shard) if shard is not None else None
    if part is not None and world is not None:
        raise BadInput("--shard under torchrun: each process takes its shard from torchrun (drop --shard)")
    if world is not None and input_path == "-":
        raise BadInput("under torchrun every process reads the inputs: give a file, not - (standard input)")
    if resume and (part is not None or world is not None):
        raise BadInput("--resume cannot be combined with --shard or torchrun: rerun the failed shard instead")
    unnamed = refs is None and model is None  # the card's `explain input.jsonl -o attr.jsonl`
    if unnamed:
        refs, model = unnamed_sources()
    inputs = [input_path, refs]
    check_output_path(output, inputs)
    if resume and output == "-":
        raise BadInput("--resume needs -o FILE: standard output cannot be continued")
    kept_checkpoint = None  # (path, records) of a checkpoint there before this run: an interrupt says it is kept
    if resume:
        from contrastcat.output.checkpoint import check_checkpoint
        from contrastcat.output.resume import early_header

        kept_checkpoint = check_checkpoint(output, inputs, early_header(batch_size))  # before the model loads
    with saying_kept(kept_checkpoint):
        names = parse_method_list(method)  # unknown names fail before any loading
        skipped: list[str] | None = [] if on_error == "skip" else None
        input_file = InputFile(input_path, text_field=text_field, id_field=id_field, label_field=label_field)
        follower = world is not None and not world.leader
        # A bad line fails before anything is written. Under torchrun rank 0 checks for all, and says so once.
        total = input_file.check() if skipped is None and not follower else None
        methods = build_methods(names, shared=True, **(method_options or {}))
        library = open_library(refs, unnamed) if refs is not None else None
        default_library = unnamed and library is None and any(m.uses_library for m in methods)
        if default_library:
            check_default_pools(methods)  # before the model loads and the library is built
        else:
            check_library(methods, library)  # before the model loads: a wrong call fails fast
        if model is None:
            if library is None:
                raise BadInput("--model is required when no --refs library is given")
            model = library_model(library)
        check_output_path(output, [model_location(model)])
        quiet = quiet or follower
        classifier = load_model(model, rank_device(device, world) if world else device, quiet, dtype)
        built = False
        if default_library:
            # Shards and torchrun processes would each build a library of their own (fingerprints differ).
            alone = world is None and part is None
            with phased_progress(quiet) as report:
                library, built = cached_library(classifier, report, build=alone, notify=lambda line: info(line, quiet))
            check_library(methods, library)
            inputs.append(library.path)
            check_output_path(output, [library.path])
        if unnamed:
            info(said_unnamed(model, library, built), quiet)
        chosen_target = parse_target(target, classifier.num_classes)
        settings = on_classifier(ExplainOptions(  # as records say it: --forward-dtype auto resolved here
            batch_size=batch_size, mask_special=mask_special, max_length=max_length, forward_dtype=forward_dtype
        ), classifier)
        limit = check_max_length(classifier, max_length)
        source = input_file.name
        if skipped is None and chosen_target == GOLD and not follower:
            resolve_targets(input_file.rows(), GOLD, classifier.label_names, source)  # every label, before any work
        rows = input_file.rows(skipped)
        if skipped is not None:
            rows = usable_rows(rows, chosen_target, classifier.label_names, source, skipped)
        used_library = library if any(m.uses_library for m in methods) else None
        summary = Summary(limit=limit, position_limit=classifier.position_limit, per_input=len(methods))
        shards = part or (Shard(world.rank, world.size) if world else None)
        expected = total if shards is None or total is None else None  # a shard's share is not known up front

        def run(remaining, report, done: int):
            def advance(count: int) -> None:
                nonlocal done
                done += count
                report("explaining", done, expected)

            for record in run_explain(
                classifier, remaining, methods, used_library, target=chosen_target, options=settings,
                source=source, progress=advance,
            ):
                summary.count(record)
                yield record

        def write_part(path: str) -> dict:
            tally = Tally()
            mine = shard_rows(rows, shards, settings.window_inputs, tally)
            identity = run_identity(
                methods, [record_settings(m, settings) for m in methods], classifier, used_library, chosen_target, settings
            )
            with phased_progress(quiet) as report:
                write_part_file(path, shards, identity, len(methods), settings.window_inputs, run(mine, report, 0), tally,
                                inputs)
            return {"records": summary.records, "truncated": summary.truncated}

        if world is not None:
            outcomes = sharded_output(world, output, write_part, lambda paths: merge_parts(paths, output))
            summary.records = sum(o["records"] for o in outcomes)
            summary.truncated = sum(o["truncated"] for o in outcomes)
        elif part is not None:
            write_part(output)
        else:
            with phased_progress(quiet) as report:
                if resume:
                    rows = list(rows)  # a checkpoint is matched against the inputs it holds
                    plan = Run(rows, methods, classifier, used_library, chosen_target, settings, source)
                    write_resumable(output, plan, inputs, lambda start: run(rows[start:], report, start),
                                    summary.resumed, note=lambda line: info(line, quiet))
                else:
                    write_records(output, run(rows, report, 0), inputs)
        input_file.close()
        if not follower:  # under torchrun, rank 0 speaks for all
            summary.finish(output, skipped, quiet, part)


@contextlib.contextmanager
def saying_kept(checkpoint):
    """An interrupt before the checkpoint ``(path, records)`` is opened (while the model loads,
    say) leaves it as it was: the message says so, not that nothing was written."""
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        if checkpoint is None or checkpoint[1] is None:
            raise
        path, records = checkpoint
        raise Interrupted(
            f"interrupted; the checkpoint {path} is kept as it was ({records} record(s)): "
            "run the same command with --resume to continue"
        ) from None


def open_library(path: str, unnamed: bool):
    """The library at ``path``; one the user did not name (./refs.h5) says why it was read."""
    from contrastcat.library import RefLibrary

    try:
        return RefLibrary(path)
    except BadInput as error:
        if not unnamed:
            raise
        raise BadInput(f"{error} (explain reads ./refs.h5 when neither --refs nor --model is given)") from None


def check_default_pools(methods) -> None:
    """The default library stores the contrasting references and the random pool (build-refs'
    defaults); a method that reads another pool needs a library built for it."""
    from contrastcat.library.build import BuildOptions

    stored = {"contrast", *BuildOptions().pools}
    for method in methods:
        missing = [pool for pool in method.pools_needed if pool not in stored] if method.uses_library else []
        if missing:
            raise BadInput(
                f"method {method.name} reads the {missing[0]!r} reference pool, which the default library does not "
                f"store: build one with build-refs --pools {missing[0]},random and pass it with --refs"
            )


def said_unnamed(model: str, library, built: bool) -> str:
    """The one line saying what explain used when the user named neither a model nor a library."""
    from contrastcat.library.defaults import DEFAULT_LIBRARY

    if library is not None and library.path == DEFAULT_LIBRARY:
        return f"no --refs or --model given: using ./{DEFAULT_LIBRARY} and its model {model}"
    if library is None:
        return f"no --refs, --model or ./{DEFAULT_LIBRARY}: using the default model {model}"
    how = "built now and cached" if built else "cached"
    return f"no --refs, --model or ./{DEFAULT_LIBRARY}: using the default model {model} and its library {library.path} ({how})"


ON_ERROR = ("stop", "skip")
SHOWN_PROBLEMS = 20  # bad lines listed one by one; the rest are counted


class Summary:
    """What explain says at the end: records written, texts cut, lines skipped."""

    def __init__(self, limit: int, position_limit: int, per_input: int) -> None:
        self.limit = limit
        self.position_limit = position_limit
        self.per_input = per_input
        self.records = 0
        self.truncated = 0
        self.kept = 0
        self.origin = ""

    def count(self, record) -> None:
        if self.records % self.per_input == 0 and record.truncated:
            self.truncated += 1
        self.records += 1

    def resumed(self, kept, origin: str) -> None:
        self.kept = kept.inputs * self.per_input
        self.truncated += kept.truncated
        self.origin = origin  # "checkpoint", or "output" (already complete)

    def finish(self, output: str, skipped: list[str] | None, quiet: bool, part=None) -> None:
        inputs = (self.records + self.kept) // self.per_input
        if self.truncated:
            more = f"; --max-length takes up to {self.position_limit}" if self.limit < self.position_limit else ""
            warn(
                f"{self.truncated} of {inputs} input(s) had more than {self.limit} tokens and were cut to their "
                f"first {self.limit} (their records say truncated: true and how many tokens were dropped){more}"
            )
        if skipped:
            listed = "; ".join(skipped[:SHOWN_PROBLEMS])
            rest = f"; and {len(skipped) - SHOWN_PROBLEMS} more" if len(skipped) > SHOWN_PROBLEMS else ""
            warn(f"skipped {len(skipped)} bad input line(s) (--on-error skip): {listed}{rest}")
        if self.origin == "output":
            info(f"{output} already holds the {self.kept} record(s) of this run: nothing to do", quiet)
        elif output != "-":
            resumed = f" ({self.kept} kept from the checkpoint, {self.records} new)" if self.kept else ""
            what = f"part {part.index}/{part.count} ({self.records} record(s))" if part else f"{self.records + self.kept} record(s)"
            info(f"wrote {what} to {output}{resumed}", quiet)
