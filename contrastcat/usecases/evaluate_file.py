"""The evaluate use case on files: a records file -> a report, its gates, and the report file.

Everything that can be refused is refused before the model loads: the options, the baseline
(read whole, checked against the protocol asked for), every line of the records file (each
record explained, fingerprinted, of one model per weights and precision), and whether
anything is left to evaluate. Then the model loads and is checked against every record's
model, vocabulary, classes and gold label; only then does the deletion test run.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import json
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, ClassVar

from .. import arguments as check
from ..deletion.perturb import DELETE, PERTURBATIONS
from ..deletion.plan import PAPER, STEP_GRIDS
from ..errors import BadInput
from ..evaluation.curves import ORDERS, TARGETS, EvalSettings
from ..evaluation.gates import (
    Bound,
    check_baseline,
    check_baseline_computable,
    check_bounds,
    check_bounds_usable,
    check_same_protocol,
    parse_bounds,
    parse_pair,
    parse_tolerance,
)
from ..evaluation.report_schema import read_baseline
from ..evaluation.reports import EvaluationReport
from ..evaluation.scalars import ERASER_BINS
from ..evaluation.stats import BootstrapSettings
from ..io.files import atomic_text_output, check_output_path, interrupted_after, output_name
from ..library import RefLibrary
from ..models import Classifier
from ..models.precision import on_classifier
from ..models.resolve import classifier_for, model_location
from ..records.record import RecordFile, resolve_label
from ..records.variants import MethodLabels
from ..spec import CommandOptions, Names, option
from . import options
from .elsewhere import aligned_settings, made_elsewhere
from .evaluate_records import (
    MODELS_KEPT, check_against_model, check_explained, check_fingerprinted, check_records, Evaluating, evaluate_records,
)

Progress = Callable[[str, int, "int | None"], None]


def _tolerance(named: str, value: Any) -> float:
    """A string as the command line gives it (ASCII decimal only), or a number."""
    if isinstance(value, str):
        return parse_tolerance(named, value)
    return check.number(named, value, minimum=0)


def _bounds(named: str, value: Any) -> tuple[Bound, ...] | None:
    return None if value is None else parse_bounds(named, check.text(named, value))


@dataclass(frozen=True)
class EvaluateOptions(CommandOptions):
    """``contrastcat evaluate``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "evaluate"

    records: str = options.records()
    model: str | Classifier | None = options.model()
    orders: tuple[str, ...] = option(
        ORDERS, "Comma list of morf, lerf.", check.some_of(ORDERS), flags=("--order",), shown_default="morf,lerf"
    )
    steps: str = option(PAPER, "Step grid: paper (10..90 % of non-special tokens) or reference.", check.one_of(STEP_GRIDS))
    perturb: str = option(
        DELETE, "How a token goes, in every metric: delete, or replace by the mask, pad or unk token.",
        check.one_of(PERTURBATIONS),
    )
    target: str = option("pred", "Class whose probability drops: pred, gold or record.", check.one_of(TARGETS))
    min_tokens: int = option(10, "Skip inputs with fewer tokens (special included).", check.count, kind=int)
    limit: int | None = option(
        None, "Evaluate only the first N records (a quick look at a large file).",
        check.optional(functools.partial(check.count, maximum=sys.maxsize)),
        kind=int, metavar="N",
    )
    kendall: bool = option(
        False, "Also the Kendall-τ test against the alternative class (c+1) mod C.", check.flag, kind=bool
    )
    eraser: bool = option(
        False, "Also ERASER comprehensiveness and sufficiency (top 1, 5, 10, 20, 50 % removed / kept).", check.flag,
        kind=bool,
    )
    loo: bool = option(
        False, "Also the Kendall τ between each map and the drop of removing each token alone.", check.flag, kind=bool
    )
    library: str | None = options.refs("Reference library for --kendall with contrastcat records.")
    output: str | None = options.report_output()
    as_json: bool = options.as_json("Print the JSON report on stdout instead of tables.")
    markdown: bool = option(
        False, "Print the comparison as a GitHub Markdown table instead of tables.", check.flag, kind=bool,
        negatable=False, where="command",
    )
    curves: bool = option(
        False, "With several methods, also print each method's step table.", check.flag, kind=bool, negatable=False,
        where="command",
    )
    bootstrap: int = options.bootstrap("Bootstrap resamples of the inputs for each mean's interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    seed: int = options.seed("Seed of the bootstrap resampling.")
    compare: tuple[str, str] | None = option(
        None, "Paired difference A − B over their shared inputs, with its interval.", parse_pair, metavar="A,B",
        annotation="str | None",
    )
    per_input: bool = options.per_input("Keep every input's values in the JSON report (for --baseline).")
    fail_under: tuple[Bound, ...] | None = option(
        None, "Exit 3 when a metric is worse than its bound: 'morf.aopc=0.5,lerf.lodds=0.1' "
        "(METHOD:METRIC=VALUE for one method; metrics morf.aopc, morf.lodds, lerf.aopc, lerf.lodds, kendall.tau, "
        "eraser.comp, eraser.suff, loo.tau).", _bounds, metavar="BOUNDS",
    )
    baseline: str | None = option(
        None, "Exit 3 when a metric is worse than in this earlier report (-o).", options.path_or_none, metavar="REPORT"
    )
    tolerance: float = option(
        0.01, "How much worse than --baseline a metric may be (a finite number, 0 or more).", _tolerance, metavar="T",
        shown_default="0.01",
    )
    plot: str | None = options.plot(
        "Draw the MoRF/LeRF curves, intervals as bands (.png, .svg, .pdf; needs matplotlib: pip install 'contrastcat[plot]')."
    )
    batch_size: int = options.batch_size(64)
    device: str = options.device()
    dtype: str = options.dtype()
    forward_dtype: str = options.forward_dtype()
    quiet: bool = options.quiet()
    progress: Callable[[str, int, int | None], None] | None = options.progress()
    notify: Callable[[str], None] | None = options.notify()

    def check_together(self) -> None:
        if self.as_json and self.markdown:
            raise BadInput(
                f"{self.named('as_json')} and {self.bare('markdown')} both print on stdout: pick one "
                f"({self.bare('output')} writes the JSON report to a file)"
            )
        options.check_picture_apart(self)
        options.check_resamples_resolve(self)

    @property
    def settings(self) -> EvalSettings:
        return EvalSettings(
            orders=self.orders, steps=self.steps, perturb=self.perturb, min_tokens=self.min_tokens, target=self.target,
            forward_dtype=self.forward_dtype, eraser=self.eraser, loo=self.loo,
        )

    @property
    def intervals(self) -> BootstrapSettings:
        return BootstrapSettings(self.bootstrap, self.ci, self.seed)


@dataclass
class EvaluateRun:
    """The report, as an object and as the JSON document written, and the gates it failed."""

    evaluation: EvaluationReport
    document: dict
    text: str  # the JSON report
    problems: list[str]  # gates failed: bounds, then the baseline; empty: passed
    unchecked: list[str] = field(default_factory=list)  # baseline metrics without a value: not gated

    @property
    def passed(self) -> bool:
        return not self.problems

    def notes(self) -> list[tuple[str, str]]:
        """Records left out, or that explain a cut input: (``"warning"`` or ``"info"``, one line) each."""
        reports = self.evaluation.methods.values()
        special = sum(r.skipped_special for r in reports)
        duplicates = sum(r.skipped_duplicates for r in reports)
        truncated, total = self.document["truncated"], self.evaluation.records
        found = []
        if special:
            found.append(("warning", f"{special} record(s) hold only special tokens (nothing to perturb): not evaluated"))
        if duplicates:
            found.append((
                "warning",
                f"{duplicates} duplicate record(s) (same id, input, target, method and settings): not counted again",
            ))
        for name, report in self.evaluation.methods.items():
            if report.repeated:
                found.append((
                    "warning",
                    f"{name}: {report.repeated} of its {report.evaluated} inputs repeat the tokens of another under "
                    "another id; each counts as an input of its own in the means and intervals",
                ))
        elsewhere = self.document.get("made_elsewhere", 0)
        if elsewhere:
            found.append((
                "info",
                f"note: {elsewhere} record(s) made elsewhere (no token ids) were aligned to the model's tokens; "
                "that they explain these weights is taken on trust",
            ))
        found += [("warning", line) for line in self.unchecked]
        counts = {name: report.evaluated for name, report in self.evaluation.methods.items()}
        if self.evaluation.limit is not None and len(set(counts.values())) > 1:
            # The first N records of a file of several methods need not hold the same inputs for each.
            listed = ", ".join(f"{name} {count}" for name, count in counts.items())
            found.append((
                "warning",
                f"the first {self.evaluation.limit} record(s) hold different numbers of inputs per method ({listed}): "
                "their means are over different inputs, so their ranking is not like for like",
            ))
        if truncated:
            found.append((
                "info",
                f"note: {truncated} of {total} record(s) explain a truncated input (their records say truncated: true)",
            ))
        return found


def evaluate_file(options: EvaluateOptions) -> EvaluateRun:
    """``contrastcat evaluate``: the records file judged whole before the model loads, the report
    written whole (or not at all) to ``output``, its gates judged, its curves drawn to ``plot``."""
    notify = options.notify or (lambda line: None)
    before = _before_the_model(options)
    classifier = _classifier(options, before, notify)
    evaluation = evaluate_records(classifier, before.record_file.records(), options.settings, Evaluating(
        before.library, options.kendall, options.batch_size, options.intervals, before.scan.source,
        progress=lambda done: _progress(options)("evaluating", done, before.scan.total), named=options.names,
    ))
    before.record_file.close()
    evaluation = dataclasses.replace(evaluation, limit=before.limit)
    document = evaluation.to_dict(options.per_input or options.baseline is not None, options.compare, options.named)
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    if options.output is not None:
        with atomic_text_output(options.output, before.inputs) as stream:
            stream.write(text + "\n")
    written = None if options.output is None else f"the report ({output_name(options.output)})"
    with interrupted_after(written):
        if options.output is not None:
            notify(f"wrote report to {output_name(options.output)}")
        problems = check_bounds(evaluation.comparison(), options.fail_under, options.bare) if options.fail_under else []
        unchecked = []
        if before.baseline is not None:
            regressions, unchecked = check_baseline(
                evaluation, document, before.baseline, options.tolerance, options.intervals, options.baseline
            )
            problems += regressions
    if options.plot is not None:
        _draw(options, evaluation, written, notify)
    return EvaluateRun(evaluation, document, text, problems, unchecked)


def _progress(options: EvaluateOptions) -> Progress:
    return options.progress or (lambda phase, done, total: None)


@dataclass
class _Checked:
    """What evaluate found before the model loads."""

    record_file: RecordFile
    scan: _Scan
    baseline: dict | None
    library: RefLibrary | None
    model: str | Classifier
    inputs: list
    limit: int | None  # the records were cut short by --limit (not when it reached past their end)


def _before_the_model(options: EvaluateOptions) -> _Checked:
    """Everything refusable before the model loads: the baseline against the protocol, the
    outputs against the inputs, every record, ``compare`` and the gates against the records."""
    settings, named = options.settings, options.bare
    baseline = read_baseline(options.baseline) if options.baseline is not None else None
    if baseline is not None:
        check_same_protocol(baseline, options.baseline, {
            "steps": settings.steps, "perturb": settings.perturb, "target": settings.target,
            "min_tokens": settings.min_tokens, "orders": list(settings.orders), "eraser_bins": list(ERASER_BINS),
        })
        check_baseline_computable(baseline, options.baseline, settings, options.kendall, named)
    inputs = [options.records, options.library, options.baseline]
    for path in (options.output, options.plot):
        if path is not None:  # the baseline is an input: a report over it would pass the next run
            check_output_path(path, inputs)
    record_file = RecordFile(options.records, options.limit)
    scan = _scan(record_file, settings, options.compare, named)
    # A limit past the file's end read every record: the report is the whole file's.
    limit = options.limit if options.limit is not None and scan.total >= options.limit else None
    if limit is not None:
        scan.where = f"the first {limit} record(s) of {scan.source} ({named('limit')} {limit})"
    if baseline is not None and baseline.get("limit") != limit:
        raise BadInput(
            f"{options.baseline}: the baseline evaluated {_records_taken(baseline.get('limit'), named)}, this run "
            f"{_records_taken(limit, named)}: compare like with like"
        )
    _check_compare(options, scan)
    check_bounds_usable(options.fail_under or (), scan.methods, settings, options.kendall, named, where=scan.where)
    if options.kendall and scan.elsewhere:
        raise BadInput(
            f"{scan.source}:{scan.first_elsewhere}: {named('kendall')} explains each record again by its own method, "
            f"and {scan.elsewhere} record(s) were made elsewhere (no token ids): leave out {named('kendall')}"
        )
    first = next(record_file.records())
    model = options.model or first.model
    if not model:
        raise BadInput(f"{scan.source}:{first.line}: the record names no model (made elsewhere?): pass {named('model')}")
    library = RefLibrary(options.library) if options.library is not None else None
    return _Checked(record_file, scan, baseline, library, model, inputs, limit)


def _records_taken(limit: int | None, named: Names) -> str:
    return "every record" if limit is None else f"the first {limit} record(s) ({named('limit')} {limit})"


def _check_compare(options: EvaluateOptions, scan: _Scan) -> None:
    """Both methods of ``compare`` are in the records, with an input in common that will be evaluated."""
    pair = options.compare
    missing = [name for name in pair or () if name not in scan.methods]
    if missing:
        raise BadInput(
            f"{options.named('compare')}: no method {missing[0]!r} in {scan.where} "
            f"(it has: {', '.join(sorted(scan.methods))})"
        )
    # Records made elsewhere have tokens once the model loads: before it, their ids can be paired.
    known = None not in scan.inputs.values()
    if pair and (not set.intersection(*scan.ids.values()) or (known and not set.intersection(*scan.inputs.values()))):
        raise BadInput(
            f"{options.named('compare')}: {pair[0]} and {pair[1]} have no input in common that will be evaluated "
            f"(same id and tokens, at least {options.bare('min_tokens')} {options.min_tokens})"
        )


def _classifier(options: EvaluateOptions, before: _Checked, notify: Callable[[str], None]) -> Classifier:
    """The model, loaded and checked against every record (and the baseline's model and precision)."""
    for path in (options.output, options.plot):
        if path is not None:
            check_output_path(path, [model_location(before.model)])
    classifier = classifier_for(
        before.model, options.device, progress=_progress(options), notify=notify, dtype=options.dtype
    )
    before.scan.check_model(classifier)
    if before.baseline is not None:  # what the report will say it was evaluated with, before any work
        check_same_protocol(before.baseline, options.baseline, {
            "model_fingerprint": classifier.fingerprint,
            "forward_dtype": on_classifier(options.settings, classifier).forward_dtype,
        })
    return classifier


def _draw(options: EvaluateOptions, evaluation: EvaluationReport, written: str | None, notify) -> None:
    """The curves' picture, after the report: Ctrl-C while it is drawn names the report written."""
    from ..views.plots import plot_curves

    with interrupted_after(written, f"the picture ({options.plot})"):
        plot_curves(evaluation, options.plot, [options.records, options.library, options.baseline])
    both = f"{written} and the picture ({options.plot})" if written else f"the picture ({options.plot})"
    with interrupted_after(both, plural=written is not None):
        notify(f"wrote the curves to {options.plot}")


def _digest(value) -> bytes:
    """What the scan keeps of an input (its id, or its id and tokens): 16 bytes, whatever its length."""
    return hashlib.blake2b(repr(value).encode(), digest_size=16).digest()


class _Scan:
    """What one pass over the records finds before the model loads: the methods, the models, the
    records that reach furthest into the vocabulary and the classes, the gold labels, and how
    many records are left out (too short, only special tokens)."""

    def __init__(self, source: str, settings: EvalSettings, pair: tuple[str, str] | None, named: Names) -> None:
        self.source, self.settings, self.named = source, settings, named
        self.where = source  # what was read, in a message: the file, or its first records (--limit)
        # The inputs each method of --compare will be evaluated on (id and token ids, hashed): a pair
        # with none in common is refused before the model loads, not after the whole run.
        self.inputs: dict[str, set[bytes] | None] = {name: set() for name in pair or ()}
        # Their ids alone, records made elsewhere included (their tokens are known once the model loads).
        self.ids: dict[str, set[bytes]] = {name: set() for name in pair or ()}
        self.labels = MethodLabels(source)
        self.methods: set[str] = set()
        self.models: dict[tuple, object] = {}  # the first record of each (weights, precision)
        # Where the largest token id and the largest class rose, record by record: a model that
        # cannot take a record of the file cannot take one of these, and the first such is the
        # first record it cannot take. Whole numbers only (8 bytes each), not the records.
        self._tokens, self._token_lines = array("q"), array("q")
        self._targets, self._predicted, self._class_lines = array("q"), array("q"), array("q")
        # The first record past what those hold (a JSON integer may be longer): past any model too.
        self._token_beyond = self._class_beyond = None
        self.gold: dict = {}  # each --target gold label -> (label, line of its first record)
        self.short = self.special = self.total = self.elsewhere = 0
        self.first_elsewhere: int | None = None

    def add(self, record) -> None:
        if made_elsewhere(record):  # another tool's map: aligned to the model's tokens once it loads
            self.elsewhere += 1
            self.first_elsewhere = self.first_elsewhere or record.line
            # Labelled as evaluation will label it once aligned: one label per method from scan to report.
            label = self.labels.label(dataclasses.replace(record, settings=aligned_settings(record.settings)))
            self.methods.add(label)
            if label in self.inputs:  # its tokens are known once the model loads
                self.inputs[label] = None
                self.ids[label].add(_digest(record.id))
            return
        check_explained([record], self.source)
        check_fingerprinted([record], self.source)
        if len(self.models) < MODELS_KEPT:
            self.models.setdefault((record.model_fingerprint, record.model_dtype), record)
        label = self.labels.label(record)
        self.methods.add(label)
        self._reach(record)
        if len(record.token_ids) < self.settings.min_tokens:
            self.short += 1
            return
        if all(record.special):
            self.special += 1
            return
        if label in self.ids:
            self.ids[label].add(_digest(record.id))
        if self.inputs.get(label) is not None:
            self.inputs[label].add(_digest((record.id, [int(i) for i in record.token_ids])))
        if self.settings.target == "gold":
            if record.label is None:
                raise BadInput(f"{self.source}:{record.line}: {self.named('target')} gold needs a label in every record")
            # The first labels are resolved once the model loads, before any work; a file of more
            # distinct labels than a classifier has classes has its others resolved as it is evaluated.
            if len(self.gold) < GOLD_KEPT:
                self.gold.setdefault(_label_key(record.label), (record.label, record.line))

    def _reach(self, record) -> None:
        token, klass = max(record.token_ids), max(record.target, record.predicted)
        if self._token_beyond is None and (not self._tokens or token > self._tokens[-1]):
            if token < _WHOLE:
                self._tokens.append(token)
                self._token_lines.append(record.line)
            else:
                self._token_beyond = SimpleNamespace(id=None, line=record.line, token_ids=[token], target=0, predicted=0)
        if self._class_beyond is None and (not self._targets or klass > max(self._targets[-1], self._predicted[-1])):
            if klass < _WHOLE:
                self._targets.append(record.target)
                self._predicted.append(record.predicted)
                self._class_lines.append(record.line)
            else:
                self._class_beyond = SimpleNamespace(id=None, line=record.line, token_ids=[0], target=record.target,
                                                     predicted=record.predicted)

    def reach(self, vocabulary: int, classes: int) -> list:
        """The first record with a token id past ``vocabulary`` and the first with a class past
        ``classes`` (as much of each as the model check reads), in file order."""
        found = []
        first = bisect.bisect_left(self._tokens, vocabulary)
        if first < len(self._tokens):
            found.append(SimpleNamespace(id=None, line=self._token_lines[first], token_ids=[self._tokens[first]],
                                         target=0, predicted=0))
        elif self._token_beyond is not None:
            found.append(self._token_beyond)
        climbs = [max(t, p) for t, p in zip(self._targets, self._predicted)]
        first = bisect.bisect_left(climbs, classes)
        if first < len(climbs):
            found.append(SimpleNamespace(id=None, line=self._class_lines[first], token_ids=[0],
                                         target=self._targets[first], predicted=self._predicted[first]))
        elif self._class_beyond is not None:
            found.append(self._class_beyond)
        return sorted(found, key=lambda kept: kept.line)

    def check_model(self, classifier) -> None:
        """Every record's model, vocabulary, classes and gold label, before any work."""
        check_against_model(list(self.models.values()), classifier, self.source, self.named)
        vocabulary = classifier.model.get_input_embeddings().num_embeddings
        check_records(self.reach(vocabulary, classifier.num_classes), vocabulary, classifier.num_classes, self.source)
        for label, line in sorted(self.gold.values(), key=lambda found: found[1]):
            resolve_label(label, classifier.label_names, f"{self.source}:{line}")


# Gold labels resolved before any work (each distinct one kept until the model loads).
GOLD_KEPT = 10_000
_WHOLE = 1 << 63  # what array("q") holds


def _scan(record_file: RecordFile, settings: EvalSettings, pair: tuple[str, str] | None, named: Names) -> _Scan:
    scan = _Scan(record_file.name, settings, pair, named)
    scan.total = record_file.check(scan.add)
    if scan.short + scan.special == scan.total:  # before the model loads: nothing it could do
        raise BadInput(
            f"{scan.source}: none of its {scan.total} record(s) could be evaluated ({scan.short} shorter than "
            f"{named('min_tokens')} {settings.min_tokens}, {scan.special} only special tokens): nothing to report"
        )
    return scan


def _label_key(label) -> tuple:
    """One key per distinct label, each resolved once after the model loads (1 and "1" kept apart)."""
    return (type(label).__name__, label if isinstance(label, (str, int, float, bool)) else json.dumps(label))
