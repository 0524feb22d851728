"""The compare use case: which explanation to trust for *this* model, measured on its inputs.

Each method explains the same inputs alone (so its time is its own), then every record is
evaluated twice, with deletion and with the tokenizer's [MASK], each time with the curves,
ERASER comprehensiveness and sufficiency and the leave-one-out τ. The methods are ranked and a
method recommended (:mod:`contrastcat.evaluation.recommend`) only on the protocols no compared
method's own selection was fitted to: Contrast-CAT chooses its maps by deletion MoRF, so that
column and the ones it partly fitted are shown, marked, and not judged by.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import arguments as check
from ..attribution.pairs import tokenize_rows
from ..attribution.pipeline import PRED, ExplainSettings, check_library, explain
from ..deletion.names import DELETE, LERF, MASK, MORF
from ..errors import BadInput, Interrupted
from ..evaluation.curves import EvalSettings
from ..evaluation.fitted import fitted_cells
from ..evaluation.recommend import DEFAULT_MARGIN, Candidate, Protocol, Recommendation, recommend, same_maps
from ..evaluation.reports import EvaluationReport
from ..evaluation.metrics import ERASER_COMP, ERASER_SUFF, LOO_TAU, PLAUSIBILITY_JUDGED, PLAUSIBILITY_KEYS, SCALAR_METRICS
from ..evaluation.scalars import LeaveOneOut
from ..evaluation.stats import BootstrapSettings, paired_difference
from ..io import jsonl
from ..io.files import TEMP_SUFFIX, PendingFile, check_output_path, folder_file_target, interrupted_after
from ..evaluation.kendall import finite_or_none
from ..library import RefLibrary
from ..methods import build_method
from ..models import Classifier
from ..models.loading import check_max_length
from ..models.precision import describe_hardware
from ..models.resolve import classifier_for, library_model, model_location
from ..records.inputs import InputFile, InputRow
from .options import input_fields
from ..output.checkpoint import digests_path, partial_path
from ..output.resume import Resumed, Run, finished_output, write_resumable
from ..records.record import AttributionRecord, RecordFile, write_records
from ..records.variants import MethodLabels
from ..spec import InCall, Names, backticked
from ..evaluation.sanity import SanityReport
from ..views.compare_page import Pictures, examples_html, html_report
from ..views.comparison import markdown_report, terminal_blocks
from ..views.plots import forest_svg, frontier_svg
from .options.compare import DEFAULT_CHOICES, Choice, CompareOptions, said_of, typed, written
from .evaluate_records import Evaluating, evaluate_records
from .sanity_file import SanityOptions, sanity_check

Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True)
class Column:
    """One protocol of the table: a measure under one perturbation, and which way is better."""

    perturb: str
    key: str  # the report's column key
    heading: str
    higher_is_better: bool

    @property
    def name(self) -> str:
        """``delete:morf_aopc``; a plausibility column by its key alone (it perturbs nothing)."""
        return self.key if self.key in PLAUSIBILITY_KEYS else f"{self.perturb}:{self.key}"


COLUMNS = (
    Column(DELETE, f"{MORF}_aopc", "MoRF AOPC, deletion", True),
    Column(MASK, f"{MORF}_aopc", "MoRF AOPC, [MASK]", True),
    Column(DELETE, f"{LERF}_aopc", "LeRF AOPC, deletion", False),
    Column(MASK, f"{LERF}_aopc", "LeRF AOPC, [MASK]", False),
    Column(DELETE, ERASER_COMP, "comprehensiveness", True),
    Column(DELETE, ERASER_SUFF, "sufficiency", False),
    Column(MASK, ERASER_COMP, "comprehensiveness, [MASK]", True),
    Column(MASK, ERASER_SUFF, "sufficiency, [MASK]", False),
    Column(DELETE, LOO_TAU, "LOO τ", True),
    Column(MASK, LOO_TAU, "LOO τ, [MASK]", True),
)
PERTURBATIONS = (DELETE, MASK)
PERTURBED = {DELETE: "deletion", MASK: "[MASK]"}  # as the progress names them
# Against the inputs' evidence, where they carry some: the same under either perturbation (no
# input is perturbed), so taken once. No method can be fitted to them; judged by the measures
# free of a rationale threshold, token and IOU F1 shown beside.
PLAUSIBILITY_COLUMNS = tuple(
    Column(DELETE, key, SCALAR_METRICS[key].name, True) for key in PLAUSIBILITY_KEYS
)


def columns_of(reports: Mapping[str, EvaluationReport]) -> tuple[Column, ...]:
    """The table's columns: plausibility's too where the records carry evidence."""
    return COLUMNS + PLAUSIBILITY_COLUMNS * reports[DELETE].settings.plausibility


@dataclass
class Compared:
    """What one comparison measured and what it supports."""

    labels: list[str]  # each choice as the reports name it, in the order given
    seconds: dict[str, float]  # label -> seconds per input, explaining alone
    reports: dict[str, EvaluationReport]  # perturbation -> every method's evaluation
    judged: list[Column]  # the columns no compared method was fitted to: the ranking's
    fitted: dict[str, dict[str, str]]  # label -> column name -> FITTED or PARTLY
    recommendation: Recommendation
    records: list[AttributionRecord]
    inputs: int
    bootstrap: BootstrapSettings
    sanity: SanityReport | None = None  # model randomisation on the first inputs' maps
    timed: dict[str, int] = field(default_factory=dict)  # label -> inputs its seconds were measured on
    columns: tuple[Column, ...] = COLUMNS  # the table's (plausibility's too where the inputs carry evidence)

    def values(self, label: str, column: Column) -> dict[str, float]:
        """Input key -> the method's value on ``column``."""
        found = self.reports[column.perturb].methods.get(label)
        return {} if found is None else _values(found, column)


def compare(
    classifier,
    rows: Sequence[InputRow],
    library=None,
    choices: Sequence[Choice] | None = None,
    *,
    seed: int = 0,
    batch_size: int = 16,
    bootstrap: BootstrapSettings = BootstrapSettings(),
    margin: float = DEFAULT_MARGIN,
    sanity: int = 0,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
    store: "MethodStore | None" = None,
    named: str = "`method`",
) -> Compared:
    """Explain ``rows`` with each choice alone (timed), evaluate every record under both
    perturbations, check the maps of the first ``sanity`` inputs under model randomisation, and
    recommend from the columns no choice was fitted to. ``notify`` hears the estimate of the
    run's time first; ``store`` keeps each method's records (:class:`ResumableFolder`: on disk,
    so an interrupted comparison continues). ``named``: how the caller spells the choices' option."""
    say = progress or (lambda phase, done, total: None)
    notify = notify or (lambda line: None)
    choices = DEFAULT_CHOICES if choices is None else choices
    if len(choices) < 2:
        raise BadInput("compare needs at least two methods")
    if not rows:
        raise BadInput("compare: no inputs to explain")
    methods = [_method(choice, seed, named) for choice in choices]
    for choice, method in zip(choices, methods):  # what the options ask of this model (its layers), before any pass
        with said_of(choice, named):
            method.check_model(classifier.num_layers, choice.names)
    _check_libraries(choices, methods, library, named)
    made = [jsonl.dumps([method.name, method.settings()]) for method in methods]
    if len(set(made)) != len(made):  # before any work: the same records twice compare nothing
        raise BadInput("compare: a method is given twice with the same options")
    settings = ExplainSettings(batch_size=batch_size)
    store = store or InMemory()
    # One input first, through every method and both evaluations: it warms each method up (what a
    # first pass costs once is not its time) and times the whole run before it starts.
    store.check(methods, rows)
    notify(_estimate(classifier, rows, methods, library, settings, sanity, batch_size))
    records: list[AttributionRecord] = []
    seconds: list[float] = []
    timed: list[int] = []
    for number, method in enumerate(methods):
        phase = f"explaining with {method.name} ({number + 1}/{len(methods)})"
        say(phase, 0, len(rows))

        def explained(start: int, method=method, phase=phase) -> Iterator[AttributionRecord]:
            done = [start]

            def advance(inputs: int) -> None:
                done[0] += inputs
                say(phase, done[0], len(rows))

            return explain(classifier, rows[start:], [method], library if method.uses_library else None,
                           options=settings, progress=advance)

        found, per_input, count = store.explained(number, method, rows, explained)
        records += found
        seconds.append(per_input)
        timed.append(count)
    labels_of = MethodLabels("compare")
    keys, start = [], 0
    for method in methods:  # labelled as the evaluation labels them: the same records, in the same order
        keys.append(labels_of.label(records[start]))
        start += len(rows)
    # Each choice is named as it was written (a variant by its own options, not by how it differs
    # from another variant given before it): the report is read without the command that made it.
    labels = [written(choice) for choice in choices]
    if len(set(labels)) != len(labels):
        raise BadInput("compare: a method is given twice with the same options")
    shown = dict(zip(keys, labels))
    reports = {}
    # Evaluated input by input, every method's record of a batch of inputs together: the progress
    # moves per batch, and the perturbed sequences the methods share are predicted once.
    by_input = [records[start + index] for index in range(len(rows)) for start in range(0, len(records), len(rows))]
    for number, perturb in enumerate(PERTURBATIONS):
        phase = f"evaluating with {PERTURBED[perturb]} ({number + 1}/{len(PERTURBATIONS)})"
        say(phase, 0, len(records))
        found = evaluation(classifier, by_input, perturb, Evaluating(
            library, bootstrap=bootstrap, batch_size=batch_size * 4, source="compare", chunk=batch_size * len(methods),
            progress=functools.partial(say, phase, total=len(records))))
        reports[perturb] = _renamed(found, shown)
    fitted = {label: _fitted(reports, label) for label in labels}
    columns = columns_of(reports)
    judged = [column for column in columns if not any(column.name in cells for cells in fitted.values())
              and (column.key not in PLAUSIBILITY_KEYS or column.key in PLAUSIBILITY_JUDGED)]
    candidates = [
        Candidate(label, seconds[index], {column.name: _values(reports[column.perturb].methods[label], column)
                                          for column in judged})
        for index, label in enumerate(labels) if all(label in report.methods for report in reports.values())
    ]
    if len(candidates) < 2 or not judged:
        raise BadInput("compare: too few methods had inputs long enough to evaluate")
    checked = None
    # The first inputs with two tokens to rank (a map of one token has no order to correlate).
    usable = [index for index, record in enumerate(records[:len(rows)]) if sum(not flag for flag in record.special) >= 2]
    if sanity and not usable:
        notify("compare: no sampled input has two tokens to rank: the model-randomisation check is left out")
    elif sanity:
        say("randomising the model", 0, None)
        subset = [records[start + index] for start in range(0, len(records), len(rows)) for index in usable[:sanity]]
        found = sanity_check(classifier, subset, library, SanityOptions.read(
            {"seed": seed, "bootstrap": bootstrap.resamples, "ci": bootstrap.level, "batch_size": batch_size},
            InCall("compare"), only=("seed", "bootstrap", "ci", "batch_size"),
        ), source="compare", last_only=True)
        checked = _renamed(found, shown)
    failing = [] if checked is None else [
        label for label, found in checked.methods.items() if found.passes(checked.steps[-1]) is False
    ]
    recommendation = recommend(candidates, [Protocol(c.name, c.higher_is_better) for c in judged], bootstrap, margin,
                               fails_sanity=failing, same_maps=_same_maps(records, labels, candidates))
    return Compared(labels, dict(zip(labels, seconds)), reports, judged, fitted, recommendation, records, len(rows),
                    bootstrap, checked, dict(zip(labels, timed)), columns)


def _same_maps(records: Sequence[AttributionRecord], labels: Sequence[str], candidates: Sequence[Candidate]
               ) -> tuple[tuple[str, ...], ...]:
    """The compared methods that made the same maps of every input (records: each method's in
    turn, in ``labels``' order): one method under several names, whatever their options say
    (``attcat[layers=2]`` on a model of two layers is ``attcat``)."""
    count = len(records) // len(labels)
    ranked = {c.method for c in candidates}
    maps = {label: [record.scores for record in records[index * count:(index + 1) * count]]
            for index, label in enumerate(labels) if label in ranked}
    return same_maps(maps)


def _renamed(report, shown: Mapping[str, str]):
    """An evaluation's or a sanity check's report with each method under the name compare shows."""
    return dataclasses.replace(report, methods={
        shown.get(key, key): dataclasses.replace(entry, method=shown.get(key, key))
        for key, entry in report.methods.items()
    })


def evaluation(classifier, records: Iterable[AttributionRecord], perturb: str, how: Evaluating = Evaluating()
               ) -> EvaluationReport:
    """``records`` evaluated under ``perturb`` as compare evaluates them: the MoRF and LeRF curves,
    ERASER comprehensiveness and sufficiency, and the leave-one-out τ (``how.loo``: drops kept
    from an earlier evaluation of the same inputs, and added to; none: a fresh one)."""
    if how.loo is None:
        how = dataclasses.replace(how, loo=LeaveOneOut(perturb, None))
    return evaluate_records(classifier, records, EvalSettings(perturb=perturb, eraser=True, loo=True), how)


def _estimate(classifier, rows, methods, library, settings: ExplainSettings, sanity: int, batch_size: int) -> str:
    """The run's time, told before it starts: one input of median length through every method
    and both evaluations, times the inputs (the run batches them, so it is mostly quicker). An
    input too short to evaluate gives way to the longest; where even that one is, no input can
    be evaluated, and the run is refused before its work."""
    # By tokens, as the evaluation counts them (a long run of spaces is no token; a URL is many).
    pairs = any(row.pair is not None for row in rows)  # tokenized as explain tokenizes them
    tokens = tokenize_rows(classifier.paired() if pairs else classifier, rows,
                           check_max_length(classifier, settings.max_length), "compare")
    count = {id(row): sum(not flag for flag in text.special) for row, text in zip(rows, tokens)}
    ordered = sorted(rows, key=lambda row: count[id(row)])
    for which, pilot in (("one input of median length", ordered[len(rows) // 2]), ("the longest input", ordered[-1])):
        found, explaining = [], 0.0
        for method in methods:
            began = time.perf_counter()
            found += explain(classifier, [pilot], [method], library if method.uses_library else None, options=settings)
            explaining += time.perf_counter() - began
        began = time.perf_counter()
        try:
            for perturb in PERTURBATIONS:
                evaluation(classifier, found, perturb, Evaluating(library, bootstrap=BootstrapSettings(0),
                                                                  batch_size=batch_size * 4, source="compare"))
        except BadInput:  # too few tokens to evaluate
            continue
        evaluating = time.perf_counter() - began
        total = len(rows) * (explaining + evaluating) + min(sanity, len(rows)) * explaining  # sanity: the last copy
        return (f"estimate: at most about {_duration(total)} for {len(rows)} inputs and {len(methods)} methods on "
                f"this machine ({which} took {explaining + evaluating:.1f} s through every method "
                "and both evaluations; the run batches inputs, and is mostly quicker)")
    raise BadInput(
        f"compare: no sampled input is long enough to evaluate (the longest, {pilot.id!r}, has fewer than "
        f"{EvalSettings().min_tokens} tokens): nothing to compare"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class MethodStore:
    """Where :func:`compare` keeps each method's records, and how long they took."""

    def explained(self, number: int, method, rows: Sequence[InputRow],
                  records_from: Callable[[int], Iterable[AttributionRecord]]) -> tuple[list[AttributionRecord], float, int]:
        """The ``number``-th method's records of ``rows`` (``records_from(n)``: those of rows n
        on, as explain makes them), its seconds per input and how many inputs that was measured on."""
        raise NotImplementedError

    def check(self, methods: Sequence, rows: Sequence[InputRow]) -> None:
        """Before any work: what is kept from an earlier run is this run's (else :class:`BadInput`)."""


class InMemory(MethodStore):
    def explained(self, number, method, rows, records_from):
        began = time.perf_counter()
        found = list(records_from(0))
        return found, (time.perf_counter() - began) / len(rows), len(rows)


WORK = "work"  # the folder, inside the output folder, of a resumable comparison's records


@dataclass
class ResumableFolder(MethodStore):
    """Each method's records in ``<folder>/work/NN.jsonl``, written through explain's checkpoint
    (the records an interrupted run kept are checked as explain --resume checks them, and the
    finished file is the same, byte for byte), and its time in ``NN.seconds.json``. The time of
    a method an interrupted run began is measured on the inputs this run explains."""

    folder: str
    classifier: Classifier
    library: object | None
    settings: ExplainSettings
    inputs: Sequence[str | None]
    source: str = "<input>"
    named: Names = backticked
    notify: Callable[[str], None] | None = None
    kept: list[str] = field(default_factory=list)  # what each method kept, for the message

    @property
    def work(self) -> str:
        return os.path.join(self.folder, WORK)

    def paths(self, number: int) -> tuple[str, str]:
        stem = os.path.join(self.work, f"{number + 1:02d}")
        return f"{stem}.jsonl", f"{stem}.seconds.json"

    def run(self, method, rows: Sequence[InputRow]) -> Run:
        return Run(rows, [method], self.classifier, self.library if method.uses_library else None, PRED,
                   self.settings, self.source, self.named)

    def check(self, methods, rows):
        for number, method in enumerate(methods):
            self._finished(number, self.run(method, rows))

    def _finished(self, number: int, run: Run) -> Resumed | None:
        """What the method's finished file holds, None where it has none; another run's is refused."""
        path = self.paths(number)[0]
        finished = finished_output(path, run)
        if finished is None and os.path.lexists(path):
            raise BadInput(
                f"{path}: holds records another comparison made (other inputs, methods, options or model), or "
                f"was changed: continue that one with its own options, or remove {self.work} to start again"
            )
        return finished

    def explained(self, number, method, rows, records_from):
        path, timing = self.paths(number)
        os.makedirs(self.work, exist_ok=True)
        run = self.run(method, rows)
        finished = self._finished(number, run)
        seconds = _seconds(timing) if finished is not None else None
        if seconds is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(timing)  # a time is kept only beside the records it measured
            kept: list[int] = []
            began = time.perf_counter()
            write_resumable(path, run, self.inputs, records_from, lambda found, origin: kept.append(found.inputs),
                            self.notify)
            elapsed, count = time.perf_counter() - began, len(rows) - kept[0]
            if count == 0:  # every record was kept, but not how long they took: made again, timed
                began = time.perf_counter()
                write_records(path, records_from(0), self.inputs)
                elapsed, count = time.perf_counter() - began, len(rows)
            seconds = (elapsed / count, count)
            _write_in_folder(timing, json.dumps({"seconds_per_input": seconds[0], "inputs": seconds[1]}) + "\n",
                             self.inputs)
            if kept[0]:
                self.kept.append(f"{method.name}: {kept[0]} of {len(rows)} inputs kept")
        else:
            self.kept.append(f"{method.name}: all {len(rows)} inputs kept")
        return list(RecordFile(path).records()), seconds[0], seconds[1]

    def keeps_records(self, methods: int) -> bool:
        """Whether the work folder holds a record of some method: a finished file, or a checkpoint
        with a record written (one holding only its header keeps nothing to continue from)."""
        for number in range(methods):
            finished = Path(self.paths(number)[0])
            partial = partial_path(finished)
            if finished.exists() or (partial.exists() and partial.stat().st_size > 0):
                return True
        return False

    def clear(self, methods: int) -> None:
        """The finished run's work files, once records.jsonl holds them all; the folder too
        when nothing else is in it."""
        for number in range(methods):
            for path in self.paths(number):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(self.work)


def _write_in_folder(path: str, text: str, inputs: Sequence[str | None]) -> None:
    """``text`` as the file ``path`` of a folder compare fills: whole or not at all, and onto the
    name itself (a link made there meanwhile is replaced, never written through)."""
    pending = PendingFile(folder_file_target(path, inputs))
    try:
        with open(pending.temp, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        pending.commit()
    finally:
        pending.discard()


def _seconds(path: str) -> tuple[float, int] | None:
    """A finished method's time, as its run wrote it; None where it is missing or not its form."""
    try:
        with open(path, encoding="utf-8") as stream:
            found = json.load(stream)
        seconds, inputs = found["seconds_per_input"], found["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        return None
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        return None
    return float(seconds), inputs


def check_work_folder(folder: str, methods: int, named: Names = backticked) -> None:
    """Before any work: ``<folder>/work`` holds only what a resumable comparison writes there
    (it is cleared when the run is done; another file there is the user's, never touched)."""
    work = os.path.join(folder, WORK)
    if not os.path.lexists(work):
        return
    if os.path.islink(work) or not os.path.isdir(work):
        raise BadInput(f"{work}: not a folder (compare keeps an unfinished run's records there)")
    ours = set()
    for number in range(max(methods, 99)):
        stem = f"{number + 1:02d}"
        records = Path(work) / f"{stem}.jsonl"
        partial = partial_path(records)
        ours |= {records.name, f"{stem}.seconds.json", partial.name, digests_path(partial).name}
    names = sorted(os.listdir(work))
    foreign = [name for name in names if name not in ours and not name.endswith(TEMP_SUFFIX)]
    if foreign:
        raise BadInput(f"{work}: holds {foreign[0]!r}, which compare did not write: move it, or write the "
                       f"comparison elsewhere with {named('output')}")
    linked = next((name for name in names if os.path.islink(os.path.join(work, name))), None)
    if linked is not None:  # compare never makes one: following it would write a method's records elsewhere
        raise BadInput(f"{os.path.join(work, linked)}: a symbolic link, which compare did not make: remove it, "
                       f"or write the comparison elsewhere with {named('output')}")


def _check_libraries(choices: Sequence[Choice], methods: Sequence, library, named: str,
                     names: Names = backticked) -> None:
    """Each method that reads a library has one (``names``: the caller's spelling of the
    library's option), holding the references its options ask for (said of the choice as written)."""
    if library is None:
        check_library(methods, None, names)
        return
    for choice, method in zip(choices, methods):
        with said_of(choice, named):
            check_library([method], library, choice.names)


def _method(choice: Choice, seed: int, named: str = "`method`"):
    """The choice's method, with the comparison's seed where the method takes one."""
    options = typed(choice)
    with said_of(choice, named):
        method = build_method(choice.method, choice.names, **options)  # an option it does not take is refused here
        if "seed" in method.settings() and "seed" not in options:
            method = build_method(choice.method, choice.names, **{**options, "seed": seed})
    return method


def _values(found, column: Column) -> dict[str, float]:
    if column.key in found.scalars:
        return found.scalars[column.key].means()
    order, _, key = column.key.partition("_")
    per_input = found.per_input.get(order)
    return {} if per_input is None else per_input.means(key)


def _fitted(reports: dict[str, EvaluationReport], label: str) -> dict[str, str]:
    cells = {}
    for perturb, report in reports.items():
        found = report.methods.get(label)
        if found is None:
            continue
        provenance = found.provenance
        for key, kind in fitted_cells(provenance.get("method_name", ""), provenance.get("settings"), perturb,
                                      report.settings.orders).items():
            cells[f"{perturb}:{key}"] = kind
    return cells


# --- the command: options, a sample of an inputs file, the folder it writes -------------------

def sample_rows(rows: Iterable[InputRow], limit: int, seed: int) -> list[InputRow]:
    """``limit`` rows drawn evenly from all of ``rows`` (one pass, ``limit`` held), in their
    order: a file sorted by label gives a sample of every label, and the same seed the same one."""
    rng = random.Random(seed)
    kept: list[tuple[int, InputRow]] = []
    for index, row in enumerate(rows):
        if index < limit:
            kept.append((index, row))
        else:
            slot = rng.randrange(index + 1)
            if slot < limit:
                kept[slot] = (index, row)
    return [row for _, row in sorted(kept, key=lambda pair: pair[0])]


@dataclass
class CompareRun:
    compared: Compared
    document: dict
    written: list[str]  # the files written into the output folder

    def markdown(self) -> str:
        """The table and the recommendation, as report.md holds them."""
        return markdown_report(self.document)

    def blocks(self, every: bool = False, plain: bool = False, named: str = "every=True") -> list:
        """What compare prints in a terminal, as Rich renderables: the judged columns (``every``:
        all of them), each interval as ± its half-width, the legend and the recommendation
        (``plain``: a ``*`` where bold cannot show; ``named``: how to ask for every column). No
        column is narrower than its numbers: a console narrower than a table's narrowest layout
        (``console.measure(table).minimum``) cuts it on the right, where the command widens it."""
        return terminal_blocks(self.document, every, plain, named)


def report_page(compared: Compared, document: dict) -> str:
    """report.html: the page, its pictures and a few inputs as the leading methods explain them."""
    count = compared.inputs
    lists = [compared.records[start:start + count] for start in range(0, len(compared.records), count)]
    names = {id(record): label for label, found in zip(compared.labels, lists) for record in found}
    return html_report(document, Pictures(forest_svg(document), frontier_svg(document)),
                       examples_html(lists, lambda record: names[id(record)], document))


def compare_file(chosen: CompareOptions) -> CompareRun:
    """``contrastcat compare``: a sample of an inputs file, every method on it, the report."""
    chosen = chosen.resolved()
    notify = chosen.notify or (lambda line: None)
    folder = chosen.output
    files = {name: os.path.join(folder, name) for name in OUTPUTS} if folder is not None else {}
    _check_folder(folder, chosen)
    if chosen.resume:
        check_work_folder(folder, len(chosen.method), chosen.names)
    for path in files.values() if folder is not None and os.path.isdir(folder) else ():
        check_output_path(path, [chosen.inputs, chosen.library])
        _check_own_file(path)
    input_file = InputFile(chosen.inputs, input_fields(chosen), named=chosen.names)
    input_file.check()
    rows = sample_rows(input_file.rows(), chosen.limit, chosen.seed)
    if chosen.evidence_field is not None and all(row.evidence is None for row in rows):
        notify(f"compare: none of the {len(rows)} sampled inputs carries evidence ({chosen.named('evidence_field')} "
               f"{chosen.evidence_field}): no plausibility columns")
    input_file.close()
    library = RefLibrary(chosen.library) if chosen.library is not None else None
    # Every method built and its library checked before the model loads: a wrong call fails fast.
    _check_libraries(chosen.method, [_method(choice, chosen.seed, chosen.named("method")) for choice in chosen.method],
                     library, chosen.named("method"), chosen.names)
    model = chosen.model
    if model is None:
        if library is None:
            raise BadInput(f"{chosen.named('model')} is required when no {chosen.bare('library')} library is given")
        model = library_model(library, chosen.names)
    for path in files.values() if folder is not None and os.path.isdir(folder) else ():
        check_output_path(path, [model_location(model)])
    classifier = classifier_for(model, chosen.device, progress=chosen.progress, notify=notify, dtype=chosen.dtype)
    store = None
    if chosen.resume:
        store = ResumableFolder(folder, classifier, library, ExplainSettings(batch_size=chosen.batch_size),
                                [chosen.inputs, chosen.library], chosen.inputs, chosen.names, notify)
    try:  # till the files are in place, an interrupt leaves the records in DIR/work, whatever phase it hits
        compared = compare(
            classifier, rows, library, chosen.method, seed=chosen.seed, batch_size=chosen.batch_size,
            bootstrap=chosen.intervals, margin=chosen.margin, sanity=chosen.sanity, progress=chosen.progress,
            notify=notify, store=store, named=chosen.named("method"),
        )
        if store is not None and store.kept:
            notify("resumed: " + "; ".join(store.kept))
        document = report_document(compared, classifier, chosen)
        written = []
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
            contents = {  # every file made before any is written: they are published together
                "records.jsonl": (record.to_json() + "\n" for record in compared.records),
                "report.json": [json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"],
                "report.md": [markdown_report(document) + "\n"],
                "report.html": [report_page(compared, document)],
            }
            publish(files, contents, [chosen.inputs, chosen.library])
    except KeyboardInterrupt:
        if store is None:
            raise
        if not store.keeps_records(len(chosen.method)):
            raise Interrupted(f"interrupted before the first records were made: nothing is kept in {store.work}, "
                              "and no output was written") from None
        raise Interrupted(  # said of the whole run, not of the one method's checkpoint it was in
            f"interrupted; the methods' records made so far are kept in {store.work}: run the same command "
            f"with {chosen.bare('resume')} to continue"
        ) from None
    if folder is not None:
        written = [files[name] for name in OUTPUTS]
        with interrupted_after(check.listed(written), plural=True):
            if store is not None:
                store.clear(len(chosen.method))
            notify(f"wrote {', '.join(OUTPUTS)} to {folder}")
    return CompareRun(compared, document, written)


@contextlib.contextmanager
def _held_back() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM noted, not acted on, while the block runs (Python handles signals in
    its main thread; elsewhere there is no handler to replace, and nothing is held back)."""
    caught: list[int] = []
    previous = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, lambda signum, frame: caught.append(signum))
    except ValueError:  # not the main thread
        pass
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def publish(files: Mapping[str, str], contents: Mapping[str, Iterable[str]], inputs: Sequence[str | None]) -> None:
    """Each file written to a temporary one first, then all of them put in place with Ctrl-C held
    back (a few renames): a folder holds one comparison's files, never two runs' mixed; an
    interrupt while the temporaries are written leaves the old files as they were."""
    pending: dict[str, PendingFile] = {}
    for path in files.values():  # again: a link may have been made while the methods ran
        _check_own_file(path)
    try:
        for name, lines in contents.items():
            # Put in place by a rename onto the name in the folder: a link made from here on is
            # replaced, never written through.
            pending[name] = PendingFile(folder_file_target(files[name], inputs))
            with open(pending[name].temp, "w", encoding="utf-8", newline="\n") as stream:
                for line in lines:
                    stream.write(line)
        with _held_back() as caught:
            for name in list(pending):
                pending.pop(name).commit()
        if caught:  # the Ctrl-C held back while the files were put in place
            raise Interrupted(f"interrupted; {check.listed(list(files.values()))} were written")
    except OSError as error:
        raise BadInput(f"{error.filename or files[next(iter(contents))]}: cannot write there ({error.strerror})") from None
    finally:
        for left in pending.values():
            left.discard()


OUTPUTS = ("records.jsonl", "report.json", "report.md", "report.html")


def _check_own_file(path: str) -> None:
    """One of the folder's four files: absent, or a regular file compare replaces. A symbolic
    link is refused, not followed: the user named a folder, and a link in it would have the
    report written over whatever file it points to, outside the folder. A FIFO or a device
    would block the publishing."""
    if os.path.islink(path):
        raise BadInput(f"{path}: a symbolic link (compare writes its files into the folder, never through a "
                       "link to a file elsewhere): remove the link, or write the comparison elsewhere")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise BadInput(f"{path}: not a regular file (compare replaces its four files whole, together)")


def _check_folder(folder: str | None, chosen: CompareOptions) -> None:
    """The output folder: one that exists, or one its parent can hold (made once the work is done)."""
    if folder is None:
        return
    if folder == "-":  # a folder named "-" would be made silently
        raise BadInput(f"{chosen.named('output')} -: compare writes a folder of {len(OUTPUTS)} files, not standard "
                       f"output ({chosen.bare('as_json')} prints the JSON report there)")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise BadInput(f"{chosen.named('output')} {folder}: not a folder (compare writes {', '.join(OUTPUTS)} into one)")
    if not os.path.exists(folder):
        check_output_path(folder, [chosen.inputs, chosen.library])


def report_document(compared: Compared, classifier, chosen: CompareOptions | None = None) -> dict:
    """Everything the table, the paragraph and a later reader need, as strict JSON."""
    found = compared.recommendation
    leader = found.best or found.leaders[0]
    methods = []
    for label in found.ranking + tuple(label for label in compared.labels if label not in found.ranking):
        cells = {}
        for column in compared.columns:
            report = compared.reports[column.perturb]
            mine = report.methods.get(label)
            if mine is None:
                continue
            values = compared.values(label, column)
            finite = [v for v in values.values() if math.isfinite(v)]
            cell = {"mean": finite_or_none(sum(finite) / len(finite)) if finite else None, "inputs": len(finite),
                    "fitted": compared.fitted.get(label, {}).get(column.name)}
            if label != leader and leader in report.methods:
                against = paired_difference(values, compared.values(leader, column), compared.bootstrap)
                if against is not None:
                    cell["against_leader"] = against.as_dict()
            cells[column.name] = cell
        entry = {"method": label, "seconds_per_input": compared.seconds[label],
                 "inputs_timed": compared.timed.get(label, compared.inputs), "columns": cells}
        if compared.sanity is not None and label in compared.sanity.methods:
            mine, last = compared.sanity.methods[label], compared.sanity.steps[-1]
            entry["sanity"] = {"rho_randomised": finite_or_none(mine.mean(last)), "passes": mine.passes(last)}
        methods.append(entry)
    evaluated = compared.reports[DELETE].methods.get(leader)
    return {
        "inputs": compared.inputs,
        # The leader's (the same inputs are too short for every method): what the means are over.
        "evaluated": compared.inputs if evaluated is None else evaluated.evaluated,
        "left_out": {} if evaluated is None else {
            "too_short": evaluated.skipped_short, "special_tokens_only": evaluated.skipped_special,
            "duplicates": evaluated.skipped_duplicates},
        "truncated": sum(record.truncated for record in compared.records[:compared.inputs]),
        "hardware": describe_hardware(classifier.device),
        "model": classifier.identity(),
        "columns": [{"name": c.name, "heading": c.heading, "higher_is_better": c.higher_is_better,
                     "judged": c in compared.judged} for c in compared.columns],
        "leader": leader,
        "recommendation": {
            "best": found.best, "leaders": list(found.leaders), "cheap": found.cheap, "cheap_of": found.cheap_of,
            "margin": found.margin, "ranking": list(found.ranking), "not_above_random": list(found.not_above_random),
            "wins": {k: list(v) for k, v in found.wins.items()}, "same_maps": [list(g) for g in found.same_maps],
            "no_intervals": found.no_intervals, "paragraph": found.paragraph,
        },
        "bootstrap": compared.bootstrap.as_dict(),
        "sanity_inputs": None if compared.sanity is None else compared.sanity.inputs,
        "methods": methods,
    }
