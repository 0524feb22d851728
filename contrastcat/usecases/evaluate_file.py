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
import hashlib
import json
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..errors import BadInput
from ..evaluation.curves import EvalSettings
from ..evaluation.metrics import ERASER_BINS
from ..evaluation.gates import (
    check_baseline,
    check_baseline_computable,
    check_bounds,
    check_bounds_usable,
    check_same_protocol,
)
from ..evaluation.report_schema import read_baseline
from ..evaluation.reports import EvaluationReport
from ..io.files import atomic_text_output, check_output_path, interrupted_after, output_name
from ..library import RefLibrary
from ..models import Classifier
from ..models.precision import on_classifier
from ..models.resolve import classifier_for, model_location
from ..records.labels import resolve_label
from ..records.record import RecordFile
from ..records.variants import MethodLabels
from ..spec import Names, Progress
from .options.evaluate import EvaluateOptions
from .elsewhere import aligned_settings, made_elsewhere
from .evaluate_records import (
    MODELS_KEPT, check_against_model, check_explained, check_fingerprinted, check_records, Evaluating, evaluate_records,
)



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
    evaluation = evaluate_records(classifier, before.record_file.records(), before.settings, Evaluating(
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
    settings: EvalSettings  # the options' protocol, with plausibility where a record carries evidence


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
    inputs = [options.records, options.library, options.baseline]
    for path in (options.output, options.plot):
        if path is not None:  # the baseline is an input: a report over it would pass the next run
            check_output_path(path, inputs)
    record_file = RecordFile(options.records, options.limit)
    scan = _scan(record_file, settings, options.compare, named)
    settings = dataclasses.replace(settings, plausibility=scan.evidence > 0)  # records with evidence are scored by it
    if baseline is not None:
        check_baseline_computable(baseline, options.baseline, settings, options.kendall, named)
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
    return _Checked(record_file, scan, baseline, library, model, inputs, limit, settings)


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
        self.short = self.special = self.total = self.elsewhere = self.evidence = 0
        self.first_elsewhere: int | None = None

    def add(self, record) -> None:
        self.evidence += record.evidence is not None
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
