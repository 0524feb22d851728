"""The explain use case on files: inputs file -> records file, in one of four ways to write a run.

One plain run, a ``resume`` run (a checkpoint beside the output, continued after an
interrupt), one ``shard`` ``I/N`` (a part file that ``merge`` joins), or one process of a
torchrun launch (each takes its shard; rank 0 merges). Every check that can fail is made
before the model loads; what the run did comes back as an :class:`ExplainRun` for the
caller to report (the CLI prints it, a notebook reads it).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..attribution.pairs import checked_pairs
from ..attribution.pipeline import (
    GOLD,
    ExplainSettings,
    check_library,
    parse_target,
    record_settings,
    resolve_targets,
    usable_rows,
)
from ..attribution.pipeline import explain as explain_rows
from ..errors import BadInput, ContrastCatWarning, Interrupted
from ..io.files import check_output_path, is_standard_output
from ..library import BuildSettings, RefLibrary
from ..library.defaults import DEFAULT_LIBRARY, cached_library, unnamed_sources
from ..methods import build_methods, parse_method_list
from ..models import DTYPE_CHOICES, Classifier
from ..models.loading import check_max_length
from ..models.precision import on_classifier
from ..models.resolve import classifier_for, library_model, model_location
from ..records.inputs import InputFile, SkippedLines
from ..records.record import write_records
from .checkpoint import check_checkpoint, check_not_resumed_elsewhere
from .distributed import World, rank_device, sharded_output, torchrun_world
from .identity import run_identity
from .resume import Run, early_header, write_resumable
from .shards import Shard, Tally, merge_parts, shard_rows
from .shards import write_part as write_part_file

Progress = Callable[[str, int, "int | None"], None]
ON_ERROR = ("stop", "skip")


@dataclass(frozen=True)
class ExplainJob:
    """What to explain and how to write it; ``library`` and ``model`` both None: ``./refs.h5`` and its
    model if it exists, else the default model and its cached library."""

    inputs: str  # a JSONL or CSV file, or - (standard input)
    output: str = "-"
    library: str | None = None
    model: str | Classifier | None = None  # a name, or a classifier loaded already (contrastcat.load_model)
    methods: str | Sequence[str] = "contrastcat"
    method_options: Mapping[str, object] = field(default_factory=dict)
    target: str | int = "pred"
    text_field: str = "text"
    id_field: str = "id"
    label_field: str = "label"
    pair_field: str | None = None  # sentence pairs: the field of each input's second text
    mask_special: bool = False
    max_length: int | None = None
    on_error: str = "stop"  # or "skip": leave a bad line out, and count it in ExplainRun.skipped
    resume: bool = False
    shard: str | None = None  # "I/N"
    batch_size: int = 16
    device: str = "auto"
    dtype: str = "auto"
    forward_dtype: str = "same"


@dataclass
class ExplainRun:
    """What a run did: records written now and kept from an earlier run, texts cut, lines skipped."""

    output: str
    per_input: int  # records per input: one per method
    limit: int  # tokens per input, special ones included
    position_limit: int  # the model's
    records: int = 0
    kept: int = 0
    truncated: int = 0
    # on_error="skip": the bad lines, located (the first few messages, and the count); else None
    skipped: SkippedLines | None = None
    origin: str = ""  # where kept records came from: "checkpoint", or "output" (it was complete)
    shard: Shard | None = None
    speaks: bool = True  # False in a torchrun process other than rank 0: rank 0 reports for all

    @property
    def inputs(self) -> int:
        return (self.records + self.kept) // self.per_input

    def count(self, record) -> None:
        if self.records % self.per_input == 0 and record.truncated:
            self.truncated += 1
        self.records += 1

    def resumed(self, kept, origin: str) -> None:
        self.kept = kept.inputs * self.per_input
        self.truncated += kept.truncated
        self.origin = origin


def explain_file(job: ExplainJob, progress: Progress | None = None, notify: Callable[[str], None] | None = None) -> ExplainRun:
    """Run ``job``. ``progress(phase, done, total)`` hears of model training, library building and
    explaining (``total`` None when not known up front); ``notify`` gets one-line notices."""
    progress = progress or (lambda phase, done, total: None)
    notify = notify or (lambda line: None)
    world, part = _check_mode(job)
    unnamed = job.library is None and job.model is None  # the card's `explain input.jsonl -o attr.jsonl`
    refs, model = unnamed_sources() if unnamed else (job.library, job.model)
    inputs = [job.inputs, refs]
    check_output_path(job.output, inputs)
    kept = check_checkpoint(job.output, inputs, early_header(job.batch_size)) if job.resume else None
    if not job.resume and job.output is not None:
        check_not_resumed_elsewhere(job.output, inputs)
    with _saying_kept(kept):
        return _run(job, world, part, unnamed, refs, model, inputs, progress, notify)


def _check_mode(job: ExplainJob) -> tuple[World | None, Shard | None]:
    if job.inputs is None:
        raise BadInput("missing INPUT (a .jsonl or .csv file, or - for standard input)")
    if job.on_error not in ON_ERROR:
        raise BadInput(f"`on_error` must be stop or skip, got {job.on_error!r}")
    if job.max_length is not None and job.max_length < 2:
        raise BadInput(f"`max_length` {job.max_length}: an input needs at least 2 tokens")
    if job.pair_field is not None and job.pair_field in (job.text_field, job.id_field, job.label_field):
        raise BadInput(f"`pair_field` {job.pair_field!r} is also the text, id or label field")
    if job.dtype not in DTYPE_CHOICES:
        raise BadInput(f"`dtype` must be one of {', '.join(DTYPE_CHOICES)}, got {job.dtype!r}")
    world = torchrun_world()
    part = Shard.parse(job.shard) if job.shard is not None else None
    if world is not None and isinstance(job.model, Classifier):
        raise BadInput("under torchrun every process loads the model: name it (`model` DIR), not a loaded classifier")
    if part is not None and world is not None:
        raise BadInput("`shard` under torchrun: each process takes its shard from torchrun (drop `shard`)")
    if world is not None and job.inputs == "-":
        raise BadInput("under torchrun every process reads the inputs: give a file, not - (standard input)")
    if job.resume and (part is not None or world is not None):
        raise BadInput("`resume` cannot be combined with `shard` or torchrun: rerun the failed shard instead")
    if job.resume and is_standard_output(job.output):
        raise BadInput("`resume` needs `output`: standard output cannot be continued")
    return world, part


def _run(job, world, part, unnamed, refs, model, inputs, progress, notify) -> ExplainRun:
    names = parse_method_list(job.methods)  # unknown names fail before any loading
    # Bounded: millions of bad lines are counted, their first messages kept (all that is shown).
    skipped = SkippedLines() if job.on_error == "skip" else None
    input_file = InputFile(
        job.inputs, text_field=job.text_field, id_field=job.id_field, label_field=job.label_field,
        pair_field=job.pair_field,
    )
    follower = world is not None and not world.leader
    if follower:  # rank 0 speaks for all
        notify = _say_nothing
    # A bad line fails before anything is written. Under torchrun rank 0 checks for all.
    total = input_file.check() if skipped is None and not follower else None
    methods = build_methods(names, shared=True, **dict(job.method_options))
    library = _open_library(refs, unnamed) if refs is not None else None
    default_library = unnamed and library is None and any(m.uses_library for m in methods)
    if default_library:
        _check_default_pools(methods)  # before the model loads and the library is built
    else:
        check_library(methods, library)  # before the model loads: a wrong call fails fast
    if model is None:
        if library is None:
            raise BadInput("`model` is required when no `library` library is given")
        model = library_model(library)
    check_output_path(job.output, [model_location(model)])
    device = rank_device(job.device, world) if world else job.device
    classifier = classifier_for(model, device, progress=progress, notify=notify, dtype=job.dtype)
    if classifier.adapter.warning:
        warnings.warn(classifier.adapter.warning, ContrastCatWarning, stacklevel=2)
    built = False
    if default_library:
        # Shards and torchrun processes would each build a library of their own (fingerprints differ).
        alone = world is None and part is None
        library, built = cached_library(classifier, progress, build=alone, notify=notify)
        check_library(methods, library)
        inputs.append(library.path)
        check_output_path(job.output, [library.path])
    if unnamed:
        notify(_said_unnamed(model, library, built))
    target = parse_target(job.target, classifier.num_classes)
    settings = on_classifier(ExplainSettings(  # as records say it: forward_dtype "auto" resolved here
        batch_size=job.batch_size, mask_special=job.mask_special, max_length=job.max_length,
        forward_dtype=job.forward_dtype,
    ), classifier)
    run = ExplainRun(
        output=job.output, per_input=len(methods), limit=check_max_length(classifier, job.max_length),
        position_limit=classifier.position_limit, skipped=skipped, shard=part, speaks=not follower,
    )
    source = input_file.name
    if skipped is None and target == GOLD and not follower:
        resolve_targets(input_file.rows(), GOLD, classifier.label_names, source)  # every label, before any work
    # Only where the model reads segment ids can a pair's line be bad (models.segments): elsewhere
    # checking would read the whole input once more for nothing.
    walked = job.pair_field is not None and classifier.paired().pair_types is not None
    if skipped is None and walked and not follower:
        for _ in checked_pairs(classifier, input_file.rows(), run.limit, source):  # every pair, before any work
            pass
    rows = input_file.rows(skipped)
    if skipped is not None:
        rows = usable_rows(rows, target, classifier.label_names, source, skipped)
        if walked:
            rows = checked_pairs(classifier, rows, run.limit, source, skipped)
    used_library = library if any(m.uses_library for m in methods) else None
    shards = part or (Shard(world.rank, world.size) if world else None)
    expected = total if shards is None or total is None else None  # a shard's share is not known up front

    def records(remaining, done: int) -> Iterator:
        def advance(count: int) -> None:
            nonlocal done
            done += count
            progress("explaining", done, expected)

        for record in explain_rows(
            classifier, remaining, methods, used_library, target=target, options=settings, source=source,
            progress=advance,
        ):
            run.count(record)
            yield record

    def write_part(path: str) -> dict:
        tally = Tally()
        mine = shard_rows(rows, shards, settings.window_inputs, tally)
        identity = run_identity(
            methods, [record_settings(m, settings) for m in methods], classifier, used_library, target, settings
        )
        write_part_file(path, shards, identity, len(methods), settings.window_inputs, records(mine, 0), tally, inputs)
        return {"records": run.records, "truncated": run.truncated}

    if world is not None:
        outcomes = sharded_output(world, job.output, write_part, lambda paths: merge_parts(paths, job.output))
        run.records = sum(o["records"] for o in outcomes)
        run.truncated = sum(o["truncated"] for o in outcomes)
    elif part is not None:
        write_part(job.output)
    elif job.resume:
        rows = list(rows)  # a checkpoint is matched against the inputs it holds
        plan = Run(rows, methods, classifier, used_library, target, settings, source)
        write_resumable(job.output, plan, inputs, lambda start: records(rows[start:], start), run.resumed, note=notify)
    else:
        write_records(job.output, records(rows, 0), inputs)
    input_file.close()
    return run


def _say_nothing(line: str) -> None:
    pass


@contextlib.contextmanager
def _saying_kept(checkpoint):
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
            "run the same command with `resume` to continue"
        ) from None


def _open_library(path: str, unnamed: bool) -> RefLibrary:
    """The library at ``path``; one the user did not name (./refs.h5) says why it was read."""
    try:
        return RefLibrary(path)
    except BadInput as error:
        if not unnamed:
            raise
        raise BadInput(f"{error} (explain reads ./refs.h5 when neither `library` nor `model` is given)") from None


def _check_default_pools(methods) -> None:
    """The default library stores the contrasting references and the random pool (build-refs'
    defaults); a method that reads another pool needs a library built for it."""
    stored = {"contrast", *BuildSettings().pools}
    for method in methods:
        missing = [pool for pool in method.pools_needed if pool not in stored] if method.uses_library else []
        if missing:
            raise BadInput(
                f"method {method.name} reads the {missing[0]!r} reference pool, which the default library does not "
                f"store: build one with build-refs --pools {missing[0]},random and pass it with `library`"
            )


def _said_unnamed(model: str, library, built: bool) -> str:
    """The one line saying what explain used when the user named neither a model nor a library."""
    if library is not None and library.path == DEFAULT_LIBRARY:
        return f"no `library` or `model` given: using ./{DEFAULT_LIBRARY} and its model {model}"
    if library is None:
        return f"no `library`, `model` or ./{DEFAULT_LIBRARY}: using the default model {model}"
    how = "built now and cached" if built else "cached"
    return f"no `library`, `model` or ./{DEFAULT_LIBRARY}: using the default model {model} and its library {library.path} ({how})"
