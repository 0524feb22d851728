"""The compare use case: which explanation to trust for *this* model, measured on its inputs.

Each method explains the same inputs alone (so its time is its own), then every record is
evaluated twice, with deletion and with the tokenizer's [MASK], each time with the curves,
ERASER comprehensiveness and sufficiency and the leave-one-out τ. The methods are ranked and a
method recommended (:mod:`contrastcat.evaluation.recommend`) only on the protocols no compared
method's own selection was fitted to: Contrast-CAT chooses its maps by deletion MoRF, so that
column and the ones it partly fitted are shown, marked, and not judged by.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import arguments as check
from ..attribution.pipeline import ExplainSettings, check_library, explain
from ..deletion.perturb import DELETE, LERF, MASK, MORF
from ..errors import BadInput
from ..evaluation.curves import EvalSettings
from ..evaluation.fitted import fitted_cells
from ..evaluation.recommend import DEFAULT_MARGIN, Candidate, Protocol, Recommendation, recommend
from ..evaluation.reports import EvaluationReport
from ..evaluation.scalars import ERASER_COMP, ERASER_SUFF, LOO_TAU, LeaveOneOut
from ..evaluation.stats import BootstrapSettings, paired_difference
from ..io import jsonl
from ..io.files import atomic_text_output, check_output_path
from ..evaluation.kendall import finite_or_none
from ..library import RefLibrary
from ..methods import build_method, build_methods, method_class
from ..models import Classifier
from ..models.precision import describe_hardware
from ..models.resolve import classifier_for, library_model, model_location
from ..records.inputs import InputFile, InputRow
from ..records.record import AttributionRecord, write_records
from ..records.variants import MethodLabels
from ..spec import CommandOptions, InCall, option
from ..evaluation.sanity import SanityReport
from ..views.comparison import html_report, markdown_report
from ..views.plots import frontier_svg
from . import options
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
        return f"{self.perturb}:{self.key}"


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


@dataclass(frozen=True)
class Choice:
    """A method and its own options (a variant of it is another choice)."""

    method: str
    options: Mapping[str, object] = field(default_factory=dict)


# The paper's method, the tool's LRP variant and its cheap setting (docs/methods.md), the
# strongest of the others on the embedded models, and chance.
DEFAULT_METHODS = (
    "contrastcat,contrastcat-lrp,contrastcat-lrp[refs_used=20,test_steps=5],attnlrp,full-lrp,attcat,tis,"
    "integrated-gradients,random"
)


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
) -> Compared:
    """Explain ``rows`` with each choice alone (timed), evaluate every record under both
    perturbations, check the maps of the first ``sanity`` inputs under model randomisation, and
    recommend from the columns no choice was fitted to."""
    say = progress or (lambda phase, done, total: None)
    choices = DEFAULT_CHOICES if choices is None else choices
    if len(choices) < 2:
        raise BadInput("compare needs at least two methods")
    if not rows:
        raise BadInput("compare: no inputs to explain")
    methods = [_method(choice, seed) for choice in choices]
    check_library(methods, library)
    made = [jsonl.dumps([method.name, method.settings()]) for method in methods]
    if len(set(made)) != len(made):  # before any work: the same records twice compare nothing
        raise BadInput("compare: a method is given twice with the same options")
    settings = ExplainSettings(batch_size=batch_size)
    # One input first, by the cheapest method: what a first pass costs once (allocations, lazy
    # set-up) is not the first method's.
    list(explain(classifier, rows[:1], build_methods(["random"]), None, options=settings))
    records: list[AttributionRecord] = []
    seconds: list[float] = []
    for number, method in enumerate(methods):
        say(f"explaining ({method.name})", number, len(methods))
        began = time.perf_counter()
        found = list(explain(classifier, rows, [method], library if method.uses_library else None, options=settings))
        seconds.append((time.perf_counter() - began) / len(rows))
        records += found
    labels_of = MethodLabels("compare")
    labels, start = [], 0
    for method in methods:  # labelled as the evaluation labels them: the same records, in the same order
        labels.append(labels_of.label(records[start]))
        start += len(rows)
    if len(set(labels)) != len(labels):
        raise BadInput("compare: a method is given twice with the same options")
    reports = {}
    for number, perturb in enumerate(PERTURBATIONS):
        say(f"evaluating ({perturb})", len(methods) + number, None)
        reports[perturb] = evaluate_records(
            classifier, records, EvalSettings(perturb=perturb, eraser=True, loo=True),
            Evaluating(library, bootstrap=bootstrap, batch_size=batch_size * 4, loo=LeaveOneOut(perturb, None),
                       source="compare"),
        )
    fitted = {label: _fitted(reports, label) for label in labels}
    judged = [column for column in COLUMNS if not any(column.name in cells for cells in fitted.values())]
    candidates = [
        Candidate(label, seconds[index], {column.name: _values(reports[column.perturb].methods[label], column)
                                          for column in judged})
        for index, label in enumerate(labels) if all(label in report.methods for report in reports.values())
    ]
    if len(candidates) < 2 or not judged:
        raise BadInput("compare: too few methods had inputs long enough to evaluate")
    checked = None
    if sanity:
        say("randomising the model", len(methods) + len(PERTURBATIONS), None)
        subset = [record for start in range(0, len(records), len(rows)) for record in records[start:start + sanity]]
        checked = sanity_check(classifier, subset, library, SanityOptions.read(
            {"seed": seed, "bootstrap": bootstrap.resamples, "ci": bootstrap.level, "batch_size": batch_size},
            InCall("compare"), only=("seed", "bootstrap", "ci", "batch_size"),
        ), source="compare")
    failing = [] if checked is None else [
        label for label, found in checked.methods.items() if found.passes(checked.steps[-1]) is False
    ]
    recommendation = recommend(candidates, [Protocol(c.name, c.higher_is_better) for c in judged], bootstrap, margin,
                               fails_sanity=failing)
    return Compared(labels, dict(zip(labels, seconds)), reports, judged, fitted, recommendation, records, len(rows),
                    bootstrap, checked)


def _method(choice: Choice, seed: int):
    """The choice's method, with the comparison's seed where the method takes one."""
    options = _typed(choice)
    method = build_method(choice.method, **options)  # an option it does not take is refused here
    if "seed" in method.settings() and "seed" not in options:
        method = build_method(choice.method, **{**options, "seed": seed})
    return method


def _typed(choice: Choice) -> dict[str, object]:
    """A variant's options as its method takes them: text written in brackets (``refs_used=20``)
    read as the option's type; values of other types, and names the method lacks, as given (the
    method's own check says what is wrong with them)."""
    specs = {spec.name: spec for spec in method_class(choice.method).Options.specs()}
    typed: dict[str, object] = {}
    for name, value in choice.options.items():
        spec = specs.get(name)
        if isinstance(value, str) and spec is not None and str not in spec.accepts:
            if spec.kind is bool and value.lower() in ("true", "false"):
                value = value.lower() == "true"
            elif spec.kind in (int, float):
                try:
                    value = spec.kind(value)
                except ValueError:
                    pass
        typed[name] = value
    return typed


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

DEFAULT_LIMIT = 100  # inputs sampled: minutes on a 2-core CPU for a MiniLM-size model
DEFAULT_SANITY = 10  # inputs whose maps are explained again on each randomised copy of the model


def parse_choices(named: str, value: Any) -> tuple[Choice, ...]:
    """``name`` or ``name[option=value,...]``, comma-separated (commas inside brackets belong to
    the variant): ``contrastcat,contrastcat-lrp[refs_used=20,test_steps=5],attnlrp``."""
    if isinstance(value, (tuple, list)) and all(isinstance(v, Choice) for v in value):
        return tuple(value)
    texts = [value] if isinstance(value, str) else list(value) if isinstance(value, (tuple, list)) else None
    if texts is None or not all(isinstance(t, str) for t in texts):
        raise BadInput(f"{named} must be method names, got {check.shown(value)}")
    found: list[Choice] = []
    for text in texts:
        depth, start = 0, 0
        for index, char in enumerate(text + ","):
            depth += (char == "[") - (char == "]")
            if depth < 0:
                raise BadInput(f"{named} {text!r}: a ']' closes no '['")
            if char == "," and depth == 0:
                if text[start:index].strip():
                    found.append(_choice(named, text[start:index].strip()))
                start = index + 1
        if depth:
            raise BadInput(f"{named} {text!r}: a '[' is never closed")
    if len(found) < 2:
        raise BadInput(f"{named}: compare needs at least two methods, got {len(found)}")
    return tuple(found)


def _choice(named: str, text: str) -> Choice:
    name, bracket, rest = text.partition("[")
    if not bracket:
        return Choice(name)
    if not rest.endswith("]"):
        raise BadInput(f"{named} {text!r}: a variant is name[option=value,...]")
    chosen: dict[str, object] = {}
    for pair in filter(None, (p.strip() for p in rest[:-1].split(","))):
        key, equals, raw = pair.partition("=")
        if not equals or not key.strip():
            raise BadInput(f"{named} {text!r}: {pair!r} is not option=value")
        chosen[key.strip().replace("-", "_")] = raw.strip()  # typed as the method's option once it is known
    return Choice(name.strip(), chosen)


DEFAULT_CHOICES = parse_choices("`method`", DEFAULT_METHODS)


@dataclass(frozen=True)
class CompareOptions(CommandOptions):
    """``contrastcat compare``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "compare"

    inputs: str = options.inputs()
    library: str | None = options.refs("Reference library from build-refs (the library methods read it).")
    model: str | Classifier | None = options.model(help="Default: the library's model.")
    method: tuple[Choice, ...] = option(
        DEFAULT_CHOICES, "Methods to compare, a comma list; a variant as name[option=value,...]: the default is "
        "the paper's method, contrastcat-lrp and its cheap setting, the strongest others and chance.",
        parse_choices, flags=("--method",), shown_default=DEFAULT_METHODS, annotation="str",
    )
    limit: int = option(
        DEFAULT_LIMIT, "Inputs to compare on: a sample of the file's (all of them if it has fewer), drawn with "
        "--seed, in file order.", lambda named, value: check.count(named, value, minimum=2), kind=int,
    )
    text_field: str = options.text_field()
    id_field: str = options.id_field()
    label_field: str = options.label_field()
    pair_field: str | None = options.pair_field(
        "Sentence pairs: the field/column of each input's second text (as explain).",
    )
    sanity: int = option(
        DEFAULT_SANITY, "Model randomisation on the maps of this many of the sampled inputs (0: none): a method "
        "whose maps barely change when the model is destroyed is named.",
        lambda named, value: check.count(named, value, minimum=0), kind=int,
    )
    margin: float = option(
        DEFAULT_MARGIN, "How far below the most faithful method (a fraction of its value, at the worse end of "
        "the paired interval) a cheaper one may be on every protocol to be recommended instead.",
        functools.partial(check.number, minimum=0.0, maximum=0.5), kind=float,
    )
    output: str | None = option(
        None, "A folder to write records.jsonl, report.json, report.md and report.html into.", options.path_or_none,
        flags=("--output", "-o"), metavar="DIR",
    )
    as_json: bool = options.as_json("Print the JSON report on stdout instead of the table.")
    seed: int = options.seed("Seed of the sample, of the methods that draw (random, tis, contrastcat) and of the bootstrap.")
    bootstrap: int = options.bootstrap("Bootstrap resamples for each paired interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    batch_size: int = options.batch_size(16)
    device: str = options.device()
    dtype: str = options.dtype()
    quiet: bool = options.quiet()
    progress: Callable[[str, int, int | None], None] | None = options.progress()
    notify: Callable[[str], None] | None = options.notify()

    def check_together(self) -> None:
        options.check_pair_field_apart(self)
        options.check_resamples_resolve(self)

    @property
    def intervals(self) -> BootstrapSettings:
        return BootstrapSettings(self.bootstrap, self.ci, self.seed)


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


def compare_file(chosen: CompareOptions) -> CompareRun:
    """``contrastcat compare``: a sample of an inputs file, every method on it, the report."""
    notify = chosen.notify or (lambda line: None)
    folder = chosen.output
    files = {name: os.path.join(folder, name) for name in OUTPUTS} if folder is not None else {}
    _check_folder(folder, chosen)
    for path in files.values() if folder is not None and os.path.isdir(folder) else ():
        check_output_path(path, [chosen.inputs, chosen.library])
    input_file = InputFile(
        chosen.inputs, text_field=chosen.text_field, id_field=chosen.id_field, label_field=chosen.label_field,
        pair_field=chosen.pair_field, named=chosen.names,
    )
    input_file.check()
    rows = sample_rows(input_file.rows(), chosen.limit, chosen.seed)
    input_file.close()
    library = RefLibrary(chosen.library) if chosen.library is not None else None
    # Every method built and its library checked before the model loads: a wrong call fails fast.
    check_library([_method(choice, chosen.seed) for choice in chosen.method], library, chosen.names)
    model = chosen.model
    if model is None:
        if library is None:
            raise BadInput(f"{chosen.named('model')} is required when no {chosen.bare('library')} library is given")
        model = library_model(library, chosen.names)
    for path in files.values() if folder is not None and os.path.isdir(folder) else ():
        check_output_path(path, [model_location(model)])
    classifier = classifier_for(model, chosen.device, progress=chosen.progress, notify=notify, dtype=chosen.dtype)
    compared = compare(
        classifier, rows, library, chosen.method, seed=chosen.seed, batch_size=chosen.batch_size,
        bootstrap=chosen.intervals, margin=chosen.margin, sanity=chosen.sanity, progress=chosen.progress,
    )
    document = report_document(compared, classifier, chosen)
    written = []
    if folder is not None:
        os.makedirs(folder, exist_ok=True)
        inputs = [chosen.inputs, chosen.library]
        write_records(files["records.jsonl"], compared.records, inputs)
        written.append(files["records.jsonl"])
        with atomic_text_output(files["report.json"], inputs) as stream:
            stream.write(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        written.append(files["report.json"])
        with atomic_text_output(files["report.md"], inputs) as stream:
            stream.write(markdown_report(document) + "\n")
        written.append(files["report.md"])
        with atomic_text_output(files["report.html"], inputs) as stream:
            stream.write(html_report(document, frontier_svg(document)))
        written.append(files["report.html"])
        notify(f"wrote {', '.join(OUTPUTS)} to {folder}")
    return CompareRun(compared, document, written)


OUTPUTS = ("records.jsonl", "report.json", "report.md", "report.html")


def _check_folder(folder: str | None, chosen: CompareOptions) -> None:
    """The output folder: one that exists, or one its parent can hold (made once the work is done)."""
    if folder is None:
        return
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
        for column in COLUMNS:
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
        entry = {"method": label, "seconds_per_input": compared.seconds[label], "columns": cells}
        if compared.sanity is not None and label in compared.sanity.methods:
            mine, last = compared.sanity.methods[label], compared.sanity.steps[-1]
            entry["sanity"] = {"rho_randomised": finite_or_none(mine.mean(last)), "passes": mine.passes(last)}
        methods.append(entry)
    return {
        "inputs": compared.inputs,
        "hardware": describe_hardware(classifier.device),
        "model": classifier.identity(),
        "columns": [{"name": c.name, "heading": c.heading, "higher_is_better": c.higher_is_better,
                     "judged": c in compared.judged} for c in COLUMNS],
        "leader": leader,
        "recommendation": {
            "best": found.best, "leaders": list(found.leaders), "cheap": found.cheap, "cheap_of": found.cheap_of,
            "margin": found.margin, "ranking": list(found.ranking), "not_above_random": list(found.not_above_random),
            "wins": {k: list(v) for k, v in found.wins.items()}, "paragraph": found.paragraph,
        },
        "bootstrap": compared.bootstrap.as_dict(),
        "sanity_inputs": None if compared.sanity is None else compared.sanity.inputs,
        "methods": methods,
    }
