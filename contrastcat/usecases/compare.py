"""The compare use case: which explanation to trust for *this* model, measured on its inputs.

Each method explains the same inputs alone (so its time is its own), then every record is
evaluated twice, with deletion and with the tokenizer's [MASK], each time with the curves,
ERASER comprehensiveness and sufficiency and the leave-one-out τ. The methods are ranked and a
method recommended (:mod:`contrastcat.evaluation.recommend`) only on the protocols no compared
method's own selection was fitted to: Contrast-CAT chooses its maps by deletion MoRF, so that
column and the ones it partly fitted are shown, marked, and not judged by.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .. import arguments as check
from ..attribution.pairs import tokenize_rows
from ..attribution.pipeline import Chosen, ExplainSettings, Prepared, check_library, choose, explain_prepared, prepare
from ..attribution.targets import PREDICTED
from ..capture.passes import FORWARD_BATCHES
from ..errors import BadInput, Interrupted
from ..evaluation.compared import (
    COLUMNS,
    PERTURBATIONS,
    PERTURBED,
    PLAUSIBILITY_COLUMNS,
    Column,
    Compared,
    column_values,
    columns_of,
    report_document,
)
from ..evaluation.curves import EvalSettings
from ..evaluation.fitted import fitted_cells
from ..evaluation.metrics import PLAUSIBILITY_JUDGED, PLAUSIBILITY_KEYS
from ..evaluation.recommend import DEFAULT_MARGIN, Candidate, Protocol, recommend, same_maps
from ..evaluation.reports import EvaluationReport
from ..evaluation.scalars import LeaveOneOut
from ..evaluation.stats import BootstrapSettings
from ..io import jsonl
from ..io.files import check_output_path, interrupted_after
from ..io.publish import publish
from ..library import RefLibrary
from ..methods import build_method
from ..models.resolve import classifier_for, library_model, model_location
from ..output.method_store import InMemory, MethodStore, ResumableFolder, check_work_folder
from ..records.inputs import InputFile, InputRow
from ..records.record import AttributionRecord
from ..records.variants import MethodLabels
from ..spec import Caller, InCall, Names, Progress, backticked
from ..views.compare_page import Pictures, examples_html, html_report
from ..views.comparison import markdown_report, terminal_blocks
from ..views.plots import forest_svg, frontier_svg
from .evaluate_records import Evaluating, evaluate_records
from .options import input_fields
from .options.compare import DEFAULT_CHOICES, Choice, CompareOptions, said_of, typed, written
from .sanity_file import SanityOptions, sanity_check

__all__ = [  # what benchmarks and tests take from here, wherever it lives now
    "COLUMNS", "PLAUSIBILITY_COLUMNS", "Column", "Compared", "CompareRun", "ResumableFolder", "compare",
    "compare_file", "evaluation", "report_document", "sample_rows",
]



@dataclass(frozen=True)
class CompareSettings:
    """How a comparison runs: values checked once, where they were read (:class:`CompareOptions`,
    or a caller's own), and passed down as they are."""

    seed: int = 0  # the methods that draw, and the bootstrap
    batch_size: int = 16  # inputs explained together (their perturbed copies: FORWARD_BATCHES times as many)
    bootstrap: BootstrapSettings = BootstrapSettings()
    margin: float = DEFAULT_MARGIN
    sanity: int = 0  # inputs whose maps are checked under model randomisation
    progress: Progress | None = None
    notify: Callable[[str], None] | None = None
    caller: Caller = InCall("compare")  # how messages spell the options
    names: Names = backticked  # an option later in a message, as the caller spells it (the library's)

    def say(self, phase: str, done: int, total: int | None) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)

    def tell(self, line: str) -> None:
        if self.notify is not None:
            self.notify(line)

    @property
    def explaining(self) -> ExplainSettings:
        """How every method explains (the one place it is made: a resumed run's records are
        checked against it)."""
        return ExplainSettings(batch_size=self.batch_size)

    @property
    def named(self) -> str:
        """The methods' option, as the caller spells it at the start of a message."""
        return self.caller.named(CompareOptions.spec("method"))


def compare(
    classifier, rows: Sequence[InputRow], library=None, choices: Sequence[Choice] | None = None,
    settings: CompareSettings = CompareSettings(), store: MethodStore | None = None,
) -> Compared:
    """Explain ``rows`` with each choice alone (timed), evaluate every record under both
    perturbations, check the maps of the first ``settings.sanity`` inputs under model
    randomisation, and recommend from the columns no choice was fitted to. ``settings.notify``
    hears the estimate of the run's time first; ``store`` keeps each method's records
    (:class:`ResumableFolder`: on disk, so an interrupted comparison continues)."""
    chosen = choose_methods(DEFAULT_CHOICES if choices is None else choices, library, settings)
    return compare_prepared(contenders(classifier, rows, chosen, settings), rows, settings, store)


@dataclass(frozen=True)
class Contender:
    """One compared method: its choice as written, and its explain run, prepared on the model."""

    choice: Choice
    run: Prepared

    @property
    def method(self):
        return self.run.methods[0]


def choose_methods(choices: Sequence[Choice], library, settings: CompareSettings) -> list[tuple[Choice, Chosen]]:
    """Each choice's method (the comparison's seed where it takes one) with the library it reads,
    checked before any model loads, said of the choice as written; two choices that make the
    same method are refused (the same records twice compare nothing)."""
    if len(choices) < 2:
        raise BadInput("compare needs at least two methods")
    methods = [_method(choice, settings.seed, settings.named) for choice in choices]
    if library is None:  # said once, of the library's option, whichever method reads one
        check_library(methods, None, settings.names)
    chosen = []
    for choice, method in zip(choices, methods):
        with said_of(choice, settings.named):
            chosen.append((choice, choose([method], library, choice.names)))
    made: dict[str, Choice] = {}
    for choice, method in zip(choices, methods):
        first = made.setdefault(jsonl.dumps([method.name, method.settings()]), choice)
        if first is not choice:
            raise BadInput(f"{settings.named} {check.cut(written(first), 60)} and {check.cut(written(choice), 60)}: the "
                           "same method with the same options, given twice (their records would be the same)")
    return chosen


def contenders(classifier, rows: Sequence[InputRow], chosen: Sequence[tuple[Choice, Chosen]],
               settings: CompareSettings) -> list[Contender]:
    """Each chosen method's run prepared on ``classifier`` (paired where ``rows`` are sentence
    pairs): what its options ask of this model (its layers), before any pass, said of the choice."""
    paired = classifier.paired() if any(row.pair is not None for row in rows) else classifier
    found = []
    for choice, methods in chosen:
        with said_of(choice, settings.named):
            found.append(Contender(choice, prepare(paired, methods, PREDICTED, settings.explaining, choice.names)))
    return found


def compare_prepared(runs: Sequence[Contender], rows: Sequence[InputRow], settings: CompareSettings,
                     store: MethodStore | None = None) -> Compared:
    """:func:`compare` of prepared runs: nothing is checked again."""
    if not rows:
        raise BadInput("compare: no inputs to explain")
    classifier, methods = runs[0].run.classifier, [each.method for each in runs]
    store = store or InMemory()
    # One input first, through every method and both evaluations: it warms each method up (what a
    # first pass costs once is not its time) and times the whole run before it starts.
    store.check(methods, rows)
    settings.tell(_estimate(runs, rows, settings))
    records, seconds, timed = _explained(runs, rows, settings, store)
    # Each choice is named as it was written (a variant by its own options, not by how it differs
    # from another variant given before it): the report is read without the command that made it.
    labels = [written(each.choice) for each in runs]
    library = _library(runs)
    shown = _labels_shown(records, labels)  # the evaluation's label of each method -> its label as written
    reports = _evaluated(classifier, records, shown, library, settings)
    fitted = {label: _fitted(reports, label) for label in labels}
    columns = columns_of(reports)
    judged = [column for column in columns if not any(column.name in cells for cells in fitted.values())
              and (column.key not in PLAUSIBILITY_KEYS or column.key in PLAUSIBILITY_JUDGED)]
    candidates = [
        Candidate(label, seconds[index], {column.name: column_values(reports[column.perturb].methods[label], column)
                                          for column in judged})
        for index, label in enumerate(labels) if all(label in report.methods for report in reports.values())
    ]
    if len(candidates) < 2 or not judged:
        raise BadInput("compare: too few methods had inputs long enough to evaluate")
    checked = _randomised(classifier, records, shown, library, settings)
    failing = [] if checked is None else [
        label for label, found in checked.methods.items() if found.passes(checked.steps[-1]) is False
    ]
    recommendation = recommend(candidates, [Protocol(c.name, c.higher_is_better) for c in judged], settings.bootstrap,
                               settings.margin, fails_sanity=failing, same_maps=_same_maps(records, labels, candidates))
    return Compared(labels, dict(zip(labels, seconds)), reports, judged, fitted, recommendation, records, len(rows),
                    settings.bootstrap, checked, dict(zip(labels, timed)), columns,
                    truncated=sum(record.truncated for record in records[:len(rows)]))


def _library(runs: Sequence[Contender]):
    """The library the compared methods read (one for all of them), or None where none reads one."""
    return next((each.run.library for each in runs if each.run.library is not None), None)


def _explained(runs: Sequence[Contender], rows: Sequence[InputRow], settings: CompareSettings,
               store: MethodStore) -> tuple[list[AttributionRecord], list[float], list[int]]:
    """Every method's records of ``rows``, method after method (each alone: its time is its own),
    with its seconds per input and the inputs those were measured on."""
    records: list[AttributionRecord] = []
    seconds: list[float] = []
    timed: list[int] = []
    for number, each in enumerate(runs):
        phase = f"explaining with {each.method.name} ({number + 1}/{len(runs)})"
        settings.say(phase, 0, len(rows))

        def explained(start: int, run=each.run, phase=phase) -> Iterator[AttributionRecord]:
            done = [start]

            def advance(inputs: int) -> None:
                done[0] += inputs
                settings.say(phase, done[0], len(rows))

            return (record for found in explain_prepared(run, rows[start:], progress=advance) for record in found)

        found, per_input, count = store.explained(number, each.method, rows, explained)
        records += found
        seconds.append(per_input)
        timed.append(count)
    return records, seconds, timed


def _labels_shown(records: Sequence[AttributionRecord], labels: Sequence[str]) -> dict[str, str]:
    """Each method's label as the evaluation gives it (the same records, in the same order) -> its
    label as written."""
    count = len(records) // len(labels)
    labels_of = MethodLabels("compare")
    return {labels_of.label(records[number * count]): label for number, label in enumerate(labels)}


def _evaluated(classifier, records: Sequence[AttributionRecord], shown: Mapping[str, str], library,
               settings: CompareSettings) -> dict[str, EvaluationReport]:
    """Every record evaluated under each perturbation, each method under its label as written
    (``shown``: the evaluation's label of each method, in turn -> its label as written)."""
    count = len(records) // len(shown)
    # Evaluated input by input, every method's record of a batch of inputs together: the progress
    # moves per batch, and the perturbed sequences the methods share are predicted once.
    by_input = [records[start + index] for index in range(count) for start in range(0, len(records), count)]
    reports = {}
    for number, perturb in enumerate(PERTURBATIONS):
        phase = f"evaluating with {PERTURBED[perturb]} ({number + 1}/{len(PERTURBATIONS)})"
        settings.say(phase, 0, len(records))
        found = evaluation(classifier, by_input, perturb, Evaluating(
            library, bootstrap=settings.bootstrap, batch_size=settings.batch_size * FORWARD_BATCHES, source="compare",
            chunk=settings.batch_size * len(shown), progress=functools.partial(settings.say, phase, total=len(records))))
        reports[perturb] = _renamed(found, shown)
    return reports


def _randomised(classifier, records: Sequence[AttributionRecord], shown: Mapping[str, str], library,
                settings: CompareSettings):
    """The model-randomisation check of every method's maps of the first ``settings.sanity``
    inputs with two tokens to rank (a map of one token has no order to correlate); None without."""
    if not settings.sanity:
        return None
    count = len(records) // len(shown)
    usable = [index for index, record in enumerate(records[:count]) if sum(not flag for flag in record.special) >= 2]
    if not usable:
        settings.tell("compare: no sampled input has two tokens to rank: the model-randomisation check is left out")
        return None
    settings.say("randomising the model", 0, None)
    subset = [records[start + index] for start in range(0, len(records), count) for index in usable[:settings.sanity]]
    # The options compare's own reading checked already: passed as they are, named as its caller names them.
    chosen = SanityOptions(seed=settings.seed, bootstrap=settings.bootstrap.resamples, ci=settings.bootstrap.level,
                           batch_size=settings.batch_size, caller=settings.caller)
    found = sanity_check(classifier, subset, library, chosen, source="compare", last_only=True)
    return _renamed(found, shown)


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


def _estimate(runs: Sequence[Contender], rows, settings: CompareSettings) -> str:
    """The run's time, told before it starts: one input of median length through every method
    and both evaluations, times the inputs (the run batches them, so it is mostly quicker). An
    input too short to evaluate gives way to the longest; where even that one is, no input can
    be evaluated, and the run is refused before its work."""
    # By tokens, as the evaluation counts them (a long run of spaces is no token; a URL is many).
    first = runs[0].run
    tokens = tokenize_rows(first.classifier, rows, first.max_length, "compare")
    count = {id(row): sum(not flag for flag in text.special) for row, text in zip(rows, tokens)}
    ordered = sorted(rows, key=lambda row: count[id(row)])
    library = _library(runs)
    for which, pilot in (("one input of median length", ordered[len(rows) // 2]), ("the longest input", ordered[-1])):
        found, spent = [], 0.0
        for each in runs:
            began = time.perf_counter()
            found += [record for records in explain_prepared(each.run, [pilot]) for record in records]
            spent += time.perf_counter() - began
        began = time.perf_counter()
        try:
            for perturb in PERTURBATIONS:
                evaluation(first.classifier, found, perturb, Evaluating(
                    library, bootstrap=BootstrapSettings(0), batch_size=settings.batch_size * FORWARD_BATCHES,
                    source="compare"))
        except BadInput:  # too few tokens to evaluate
            continue
        evaluating = time.perf_counter() - began
        total = len(rows) * (spent + evaluating) + min(settings.sanity, len(rows)) * spent  # sanity: the last copy
        return (f"estimate: at most about {_duration(total)} for {len(rows)} inputs and {len(runs)} methods on "
                f"this machine ({which} took {spent + evaluating:.1f} s through every method "
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


def _method(choice: Choice, seed: int, named: str = "`method`"):
    """The choice's method, with the comparison's seed where the method takes one."""
    options = typed(choice)
    with said_of(choice, named):
        method = build_method(choice.method, choice.names, **options)  # an option it does not take is refused here
        if "seed" in method.settings() and "seed" not in options:
            method = build_method(choice.method, choice.names, **{**options, "seed": seed})
    return method


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
    settings = CompareSettings(chosen.seed, chosen.batch_size, chosen.intervals, chosen.margin, chosen.sanity,
                               chosen.progress, notify, chosen.caller, chosen.names)
    # Every method built and its library checked before the model loads: a wrong call fails fast.
    methods = choose_methods(chosen.method, library, settings)
    classifier = _classifier(chosen, library, files.values() if folder is not None and os.path.isdir(folder) else ())
    runs = contenders(classifier, rows, methods, settings)
    store = None
    if chosen.resume:
        store = ResumableFolder(folder, classifier, library, settings.explaining, [chosen.inputs, chosen.library],
                                chosen.inputs, chosen.names, notify)
    try:  # till the files are in place, an interrupt leaves the records in DIR/work, whatever phase it hits
        compared = compare_prepared(runs, rows, settings, store)
        if store is not None and store.kept:
            notify("resumed: " + "; ".join(store.kept))
        document = report_document(compared, classifier)
        written = []
        if folder is not None:
            _publish(files, compared, document, [chosen.inputs, chosen.library])
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


OUTPUTS = ("records.jsonl", "report.json", "report.md", "report.html")


def _publish(files: Mapping[str, str], compared: Compared, document: dict, inputs: Sequence[str | None]) -> None:
    """The folder's four files, every one made before any is written: published together."""
    os.makedirs(os.path.dirname(files["report.json"]) or ".", exist_ok=True)
    contents = {
        "records.jsonl": (record.to_json() + "\n" for record in compared.records),
        "report.json": [json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"],
        "report.md": [markdown_report(document) + "\n"],
        "report.html": [report_page(compared, document)],
    }
    publish(files, contents, inputs, _check_own_file)


def _classifier(chosen: CompareOptions, library, existing: Iterable[str]):
    """The model compared (the library's, where none is named), loaded once no file it would
    be written over (``existing``: the folder's files) is it."""
    model = chosen.model
    if model is None:
        if library is None:
            raise BadInput(f"{chosen.named('model')} is required when no {chosen.bare('library')} library is given")
        model = library_model(library, chosen.names)
    for path in existing:
        check_output_path(path, [model_location(model)])
    return classifier_for(model, chosen.device, progress=chosen.progress, notify=chosen.notify or (lambda line: None),
                          dtype=chosen.dtype)


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


