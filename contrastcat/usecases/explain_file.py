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
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..attribution.pairs import checked_pairs
from ..attribution.pipeline import (
    ExplainSettings,
    Prepared,
    Chosen,
    choose,
    explain_prepared,
    prepare,
    record_settings,
    resolve_targets,
)
from ..attribution.targets import GOLD, Target
from ..errors import BadInput, ContrastCatWarning, Interrupted
from ..io.files import check_output_path
from ..library import BuildSettings, RefLibrary
from ..library.defaults import DEFAULT_LIBRARY, cached_library, unnamed_sources
from ..methods import build_methods
from ..models import Classifier
from ..models.resolve import classifier_for, library_model, model_location
from ..output.checkpoint import check_checkpoint, check_not_resumed_elsewhere
from ..output.distributed import World, rank_device, sharded_output, torchrun_world
from ..output.identity import run_identity
from ..output.resume import Run, early_header, write_resumable
from ..output.shards import PartHeader, Shard, Tally, merge_parts, shard_rows
from ..output.shards import write_part as write_part_file
from ..records.inputs import InputFile, SkippedLines
from .options import input_fields
from ..records.record import write_records
from ..spec import Names, Progress
from .options.explain import ExplainOptions

@dataclass
class ExplainRun:
    """What a run did: records written now and kept from an earlier run, texts cut, lines skipped."""

    output: str
    per_input: int  # records per input and target: one per method
    limit: int  # tokens per input, special ones included
    position_limit: int  # the model's
    records: int = 0
    kept: int = 0  # records kept from an earlier run
    explained: int = 0  # inputs explained now
    kept_inputs: int = 0  # inputs whose records were kept
    truncated: int = 0
    # on_error="skip": the bad lines, located (the first few messages, and the count); else None
    skipped: SkippedLines | None = None
    origin: str = ""  # where kept records came from: "checkpoint", or "output" (it was complete)
    shard: Shard | None = None
    speaks: bool = True  # False in a torchrun process other than rank 0: rank 0 reports for all

    @property
    def inputs(self) -> int:
        return self.explained + self.kept_inputs

    def count(self, records: list) -> None:
        """One input's records (one per method, and with all-active per label)."""
        self.explained += 1
        self.truncated += bool(records[0].truncated)
        self.records += len(records)

    def resumed(self, kept, origin: str) -> None:
        self.kept, self.kept_inputs = kept.records, kept.inputs
        self.truncated += kept.truncated
        self.origin = origin


def explain_settings(chosen: ExplainOptions) -> ExplainSettings:
    """How the run explains, as the options read and checked it: made here alone (the file use
    case and the in-memory call), never checked again."""
    return ExplainSettings(batch_size=chosen.batch_size, mask_special=chosen.mask_special,
                           max_length=chosen.max_length, forward_dtype=chosen.forward_dtype, words=chosen.words)


def explain_file(chosen: ExplainOptions) -> ExplainRun:
    """Run the options read already. ``progress(phase, done, total)`` hears of model training,
    library building and explaining (``total`` None when not known up front); ``notify`` gets
    one-line notices."""
    world = _check_world(chosen)
    unnamed = chosen.library is None and chosen.model is None  # the card's `explain input.jsonl -o attr.jsonl`
    refs, model = unnamed_sources() if unnamed else (chosen.library, chosen.model)
    inputs = [chosen.inputs, refs]
    check_output_path(chosen.output, inputs)
    kept = check_checkpoint(chosen.output, inputs, early_header(chosen.batch_size)) if chosen.resume else None
    if not chosen.resume:
        check_not_resumed_elsewhere(chosen.output, inputs)
    follower = world is not None and not world.leader
    plan = _Plan(
        chosen, world, unnamed, refs, model, inputs,
        progress=chosen.progress or (lambda phase, done, total: None),
        # Under torchrun rank 0 speaks for all.
        notify=_say_nothing if follower or chosen.notify is None else chosen.notify,
    )
    with _saying_kept(kept, chosen.names):
        return _run(plan)


def _check_world(chosen: ExplainOptions) -> World | None:
    """torchrun's processes, or None; what cannot run under it is refused."""
    world = torchrun_world()
    if world is None:
        return None
    if isinstance(chosen.model, Classifier):
        raise BadInput(
            f"under torchrun every process loads the model: name it ({chosen.bare('model')} DIR), not a loaded classifier"
        )
    if chosen.shard is not None:
        raise BadInput(
            f"{chosen.named('shard')} under torchrun: each process takes its shard from torchrun "
            f"(drop {chosen.bare('shard')})"
        )
    if chosen.inputs == "-":
        raise BadInput("under torchrun every process reads the inputs: give a file, not - (standard input)")
    if chosen.resume:
        raise chosen.resume_with_shards()
    return world


@dataclass
class _Plan:
    """One run as it is being prepared: what was chosen, and what it resolved to so far."""

    chosen: ExplainOptions
    world: World | None
    unnamed: bool  # neither a library nor a model named: ./refs.h5, else the default model's
    refs: str | None
    model: str | Classifier | None
    inputs: list[str]  # the files the output must not replace
    progress: Progress
    notify: Callable[[str], None]

    @property
    def follower(self) -> bool:
        return self.world is not None and not self.world.leader

    @property
    def shards(self) -> Shard | None:
        return self.chosen.shard or (Shard(self.world.rank, self.world.size) if self.world else None)


def _run(plan: _Plan) -> ExplainRun:
    chosen = plan.chosen
    names = list(chosen.method)  # known names, read with the options
    # Bounded: millions of bad lines are counted, their first messages kept (all that is shown).
    skipped = SkippedLines() if chosen.on_error == "skip" else None
    input_file = InputFile(chosen.inputs, input_fields(chosen), named=chosen.names)
    # A bad line fails before anything is written. Under torchrun rank 0 checks for all.
    total = input_file.check() if skipped is None and not plan.follower else None
    methods = build_methods(names, shared=True, named=chosen.names, **dict(chosen.method_options))
    classifier, chosen_methods = _model_and_library(plan, methods)
    # Every check before the first pass, once; forward_dtype "auto" resolved as records say it. A
    # pair field makes every row a pair (a row without one is refused): the passes get segment ids.
    prepared = prepare(classifier.paired() if chosen.pair_field is not None else classifier, chosen_methods,
                       chosen.target, explain_settings(chosen), chosen.names)
    run = ExplainRun(
        output=chosen.output, per_input=len(methods), limit=prepared.max_length,
        position_limit=classifier.position_limit, skipped=skipped, shard=chosen.shard, speaks=not plan.follower,
    )
    rows = _checked_rows(plan, input_file, classifier, prepared.target, run)
    job = _Job(
        plan, prepared, input_file.name, run,
        total if plan.shards is None or total is None else None,  # a shard's share is not known
    )
    job.write(rows)
    input_file.close()
    return run


@dataclass
class _Job:
    """What explaining the rows needs once the run is prepared (model, methods, library, target
    and settings, each checked once)."""

    plan: _Plan
    prepared: Prepared
    source: str  # the input file, as records and messages name it
    run: ExplainRun
    expected: int | None  # rows to explain, for the progress bar (None: not known up front)

    def inputs(self, remaining, done: int) -> Iterator[list]:
        """Each input's records, counted."""
        def advance(count: int) -> None:
            nonlocal done
            done += count
            self.plan.progress("explaining", done, self.expected)

        for records in explain_prepared(self.prepared, remaining, self.source, advance):
            self.run.count(records)
            yield records

    def records(self, remaining, done: int) -> Iterator:
        for records in self.inputs(remaining, done):
            yield from records

    def write_part(self, path: str, rows) -> dict:
        plan, prepared = self.plan, self.prepared
        settings, methods = prepared.options, list(prepared.methods)
        tally = Tally()
        mine = shard_rows(rows, plan.shards, settings.window_inputs, tally)
        identity = run_identity(
            methods, [record_settings(m, settings) for m in methods], prepared.classifier, prepared.library,
            prepared.target.written,
            settings,
        )
        part = PartHeader(plan.shards, identity, len(methods), settings.window_inputs)
        write_part_file(path, part, self.inputs(mine, 0), tally, plan.inputs)
        return {"records": self.run.records, "truncated": self.run.truncated, "inputs": self.run.explained}

    def write(self, rows) -> None:
        """The records to the output: as a shard's part, merged under torchrun, resumable, or whole."""
        plan, run = self.plan, self.run
        output = plan.chosen.output
        if plan.world is not None:
            outcomes = sharded_output(
                plan.world, output, lambda path: self.write_part(path, rows), lambda paths: merge_parts(paths, output)
            )
            run.records = sum(o["records"] for o in outcomes)
            run.truncated = sum(o["truncated"] for o in outcomes)
            run.explained = sum(o["inputs"] for o in outcomes)
        elif plan.chosen.shard is not None:
            self.write_part(output, rows)
        elif plan.chosen.resume:
            rows = list(rows)  # a checkpoint is matched against the inputs it holds
            resumed = Run(
                rows, list(self.prepared.methods), self.prepared.classifier, self.prepared.library,
                self.prepared.target, self.prepared.options, self.source,
                plan.chosen.names,
            )
            write_resumable(output, resumed, plan.inputs, lambda start: self.records(rows[start:], start), run.resumed,
                            note=plan.notify)
        else:
            write_records(output, self.records(rows, 0), plan.inputs)


def _model_and_library(plan: _Plan, methods) -> tuple[Classifier, Chosen]:
    """The classifier, loaded, and the methods with the library they read, checked together
    before the model loads where the library is named (a wrong call fails fast)."""
    chosen = plan.chosen
    library = _open_library(plan.refs, plan.unnamed, chosen) if plan.refs is not None else None
    default_library = plan.unnamed and library is None and any(m.uses_library for m in methods)
    if default_library:
        _check_default_pools(methods, chosen)  # before the model loads and the library is built
    else:
        checked = choose(methods, library, chosen.names)
    model = plan.model
    if model is None:
        if library is None:
            raise BadInput(f"{chosen.named('model')} is required when no {chosen.bare('library')} library is given")
        model = library_model(library, chosen.names)
    check_output_path(chosen.output, [model_location(model)])
    device = rank_device(chosen.device, plan.world) if plan.world else chosen.device
    classifier = classifier_for(model, device, progress=plan.progress, notify=plan.notify, dtype=chosen.dtype)
    if classifier.adapter.warning:
        warnings.warn(classifier.adapter.warning, ContrastCatWarning, stacklevel=2)
    built = False
    if default_library:
        # Shards and torchrun processes would each build a library of their own (fingerprints differ).
        alone = plan.world is None and chosen.shard is None
        library, built = cached_library(classifier, plan.progress, build=alone, notify=plan.notify, named=chosen.names)
        checked = choose(methods, library, chosen.names)
        plan.inputs.append(library.path)
        check_output_path(chosen.output, [library.path])
    if plan.unnamed:
        plan.notify(_said_unnamed(model, library, built, chosen))
    return classifier, checked


def _checked_rows(plan: _Plan, input_file: InputFile, classifier: Classifier, target: Target, run: ExplainRun):
    """The inputs to explain: with ``on_error="stop"`` every gold label and pair is checked before
    any work; with ``skip`` a bad one is left out (and counted) as the rows are read."""
    source, skipped = input_file.name, run.skipped
    if skipped is None and target.rule == GOLD and not plan.follower:
        resolve_targets(input_file.rows(), target, classifier.label_names, source)  # every label, before any work
    # Only where the model reads segment ids can a pair's line be bad (models.segments): elsewhere
    # checking would read the whole input once more for nothing.
    walked = plan.chosen.pair_field is not None and classifier.paired().pair_types is not None
    if skipped is None and walked and not plan.follower:
        for _ in checked_pairs(classifier, input_file.rows(), run.limit, source):  # every pair, before any work
            pass
    rows = input_file.rows(skipped)
    if skipped is not None:
        rows = target.usable(rows, classifier.label_names, source, skipped)
        if walked:
            rows = checked_pairs(classifier, rows, run.limit, source, skipped)
    return rows


def _say_nothing(line: str) -> None:
    pass


@contextlib.contextmanager
def _saying_kept(checkpoint, named: Names):
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
            f"run the same command with {named('resume')} to continue"
        ) from None


def _open_library(path: str, unnamed: bool, chosen: ExplainOptions) -> RefLibrary:
    """The library at ``path``; one the user did not name (./refs.h5) says why it was read."""
    try:
        return RefLibrary(path)
    except BadInput as error:
        if not unnamed:
            raise
        neither = f"neither {chosen.bare('library')} nor {chosen.bare('model')}"
        raise BadInput(f"{error} (explain reads ./refs.h5 when {neither} is given)") from None


def _check_default_pools(methods, chosen: ExplainOptions) -> None:
    """The default library stores the contrasting references and the random pool (build-refs'
    defaults); a method that reads another pool needs a library built for it."""
    stored = {"contrast", *BuildSettings().pools}
    for method in methods:
        missing = [pool for pool in method.pools_needed if pool not in stored] if method.uses_library else []
        if missing:
            raise BadInput(
                f"method {method.name} reads the {missing[0]!r} reference pool, which the default library does not "
                f"store: build one with build-refs --pools {missing[0]},random and pass it with {chosen.bare('library')}"
            )


def _said_unnamed(model: str, library, built: bool, chosen: ExplainOptions) -> str:
    """The one line saying what explain used when the user named neither a model nor a library."""
    named, given = f"{chosen.bare('library')}, {chosen.bare('model')}", f"{chosen.bare('library')} or {chosen.bare('model')}"
    if library is not None and library.path == DEFAULT_LIBRARY:
        return f"no {given} given: using ./{DEFAULT_LIBRARY} and its model {model}"
    if library is None:
        return f"no {named} or ./{DEFAULT_LIBRARY}: using the default model {model}"
    how = "built now and cached" if built else "cached"
    return f"no {named} or ./{DEFAULT_LIBRARY}: using the default model {model} and its library {library.path} ({how})"
