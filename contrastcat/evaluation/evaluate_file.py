"""The evaluate use case on files: a records file -> a report, its gates, and the report file.

Everything that can be refused is refused before the model loads: the options, the baseline
(read whole, checked against the protocol asked for), every line of the records file (each
record explained, fingerprinted, of one model per weights and precision), and whether
anything is left to evaluate. Then the model loads and is checked against every record's
model, vocabulary, classes and gold label; only then does the deletion test run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..errors import BadInput
from ..io.files import atomic_text_output, check_output_path, interrupted_after, output_name
from ..library import RefLibrary
from ..models import Classifier
from ..models.precision import on_classifier
from ..models.resolve import classifier_for, model_location
from ..records.record import RecordFile, resolve_label
from ..records.variants import MethodLabels
from .curves import EvalSettings, check_records
from .elsewhere import aligned_settings, made_elsewhere
from .gates import (
    check_baseline,
    check_baseline_computable,
    check_bounds,
    check_bounds_usable,
    check_same_protocol,
    parse_bounds,
    parse_pair,
    parse_tolerance,
)
from .report_schema import read_baseline
from .reports import EvaluationReport, check_against_model, check_explained, check_fingerprinted, evaluate_records
from .scalars import ERASER_BINS
from .stats import BootstrapSettings

Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True)
class EvaluateJob:
    records: str  # a JSONL file of records, or - (standard input)
    model: str | Classifier | None = None  # None: the model the records name; or one loaded already
    library: str | None = None  # for kendall with records of library methods
    settings: EvalSettings = EvalSettings()
    bootstrap: BootstrapSettings = BootstrapSettings()
    kendall: bool = False
    batch_size: int = 64
    device: str = "auto"
    dtype: str = "auto"
    output: str | None = None  # the JSON report
    compare: str | None = None  # "A,B": the paired difference A - B
    per_input: bool = False
    fail_under: str | None = None  # "morf.aopc=0.5,..."
    baseline: str | None = None  # an earlier report (an input, never replaced)
    tolerance: str = "0.01"
    other_outputs: Sequence[str] = field(default_factory=tuple)  # written by the caller after (a plot)


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
        elsewhere = self.document.get("made_elsewhere", 0)
        if elsewhere:
            found.append((
                "info",
                f"note: {elsewhere} record(s) made elsewhere (no token ids) were aligned to the model's tokens; "
                "that they explain these weights is taken on trust",
            ))
        found += [("warning", line) for line in self.unchecked]
        if truncated:
            found.append((
                "info",
                f"note: {truncated} of {total} record(s) explain a truncated input (their records say truncated: true)",
            ))
        return found


def evaluate_file(job: EvaluateJob, progress: Progress | None = None, notify: Callable[[str], None] | None = None) -> EvaluateRun:
    progress = progress or (lambda phase, done, total: None)
    notify = notify or (lambda line: None)
    settings = job.settings
    pair = parse_pair(job.compare, "evaluate_file: compare")
    bounds = parse_bounds(job.fail_under) if job.fail_under is not None else []
    allowed = parse_tolerance(job.tolerance)
    old_report = read_baseline(job.baseline) if job.baseline is not None else None
    if old_report is not None:
        check_same_protocol(old_report, job.baseline, {
            "steps": settings.steps, "perturb": settings.perturb, "target": settings.target,
            "min_tokens": settings.min_tokens, "orders": list(settings.orders), "eraser_bins": list(ERASER_BINS),
        })
        check_baseline_computable(old_report, job.baseline, settings, job.kendall)
    inputs = [job.records, job.library, job.baseline]
    for path in (job.output, *job.other_outputs):
        if path is not None:  # the baseline is an input: a report over it would pass the next run
            check_output_path(path, inputs)
    record_file = RecordFile(job.records)
    scan = _scan(record_file, settings, pair)
    missing = [name for name in pair or () if name not in scan.methods]
    if missing:
        raise BadInput(
            f"`compare`: no method {missing[0]!r} in {scan.source} (it has: {', '.join(sorted(scan.methods))})"
        )
    if pair and None not in scan.inputs.values() and not set.intersection(*scan.inputs.values()):
        raise BadInput(f"`compare`: {pair[0]} and {pair[1]} have no input in common that will be evaluated "
                       f"(same id and tokens, at least `min_tokens` {settings.min_tokens})")
    check_bounds_usable(bounds, scan.methods, settings.orders, job.kendall, settings.scalar_keys)
    if job.kendall and scan.elsewhere:
        raise BadInput(
            f"{scan.source}:{scan.first_elsewhere}: `kendall` explains each record again by its own method, and "
            f"{scan.elsewhere} record(s) were made elsewhere (no token ids): leave out `kendall`"
        )
    first = next(record_file.records())
    library = RefLibrary(job.library) if job.library is not None else None
    model = job.model or first.model
    if not model:
        raise BadInput(f"{scan.source}:{first.line}: the record names no model (made elsewhere?): pass `model`")
    for path in (job.output, *job.other_outputs):
        if path is not None:
            check_output_path(path, [model_location(model)])
    classifier = classifier_for(model, job.device, progress=progress, notify=notify, dtype=job.dtype)
    scan.check_model(classifier)
    if old_report is not None:  # what the report will say it was evaluated with, before any work
        check_same_protocol(old_report, job.baseline, {
            "model_fingerprint": classifier.fingerprint,
            "forward_dtype": on_classifier(settings, classifier).forward_dtype,
        })
    evaluation = evaluate_records(
        classifier, record_file.records(), settings, library, job.kendall, job.batch_size, scan.source,
        progress=lambda done: progress("evaluating", done, scan.total), bootstrap=job.bootstrap,
    )
    record_file.close()
    document = evaluation.to_dict(job.per_input or job.baseline is not None, pair)
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)
    if job.output is not None:
        with atomic_text_output(job.output, inputs) as stream:
            stream.write(text + "\n")
    with interrupted_after(None if job.output is None else f"the report ({output_name(job.output)})"):
        if job.output is not None:
            notify(f"wrote report to {output_name(job.output)}")
        problems = check_bounds(evaluation.comparison(), bounds) if bounds else []
        unchecked = []
        if old_report is not None:
            regressions, unchecked = check_baseline(
                evaluation, document, old_report, allowed, job.bootstrap, job.baseline
            )
            problems += regressions
    return EvaluateRun(evaluation, document, text, problems, unchecked)


class _Scan:
    """What one pass over the records finds before the model loads: the methods, the models, the
    records that reach furthest into the vocabulary and the classes, the gold labels, and how
    many records are left out (too short, only special tokens)."""

    def __init__(self, source: str, settings: EvalSettings, pair: tuple[str, str] | None = None) -> None:
        self.source, self.settings = source, settings
        # The inputs each method of --compare will be evaluated on (id and token ids, hashed): a pair
        # with none in common is refused before the model loads, not after the whole run.
        self.inputs: dict[str, set[bytes] | None] = {name: set() for name in pair or ()}
        self.labels = MethodLabels()
        self.methods: set[str] = set()
        self.models: dict[tuple, object] = {}  # the first record of each (weights, precision)
        self.reach: list[SimpleNamespace] = []
        self._token = self._class = -1
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
            return
        check_explained([record], self.source)
        check_fingerprinted([record], self.source)
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
        if self.inputs.get(label) is not None:
            self.inputs[label].add(hashlib.blake2b(repr((record.id, [int(i) for i in record.token_ids])).encode(), digest_size=16).digest())
        if self.settings.target == "gold":
            if record.label is None:
                raise BadInput(f"{self.source}:{record.line}: `target` gold needs a label in every record")
            self.gold.setdefault(_label_key(record.label), (record.label, record.line))

    def _reach(self, record) -> None:
        """Keep the records that raise the largest token id or class seen so far (as much of each as
        the model check reads): the first one the model cannot take is always among them, so the
        whole file is judged before any work without being held."""
        token, klass = max(record.token_ids), max(record.target, record.predicted)
        if token > self._token or klass > self._class:
            self._token, self._class = max(token, self._token), max(klass, self._class)
            self.reach.append(SimpleNamespace(
                id=record.id, line=record.line, token_ids=[token], target=record.target, predicted=record.predicted,
            ))

    def check_model(self, classifier) -> None:
        """Every record's model, vocabulary, classes and gold label, before any work."""
        check_against_model(list(self.models.values()), classifier, self.source)
        vocabulary = classifier.model.get_input_embeddings().num_embeddings
        check_records(self.reach, vocabulary, classifier.num_classes, self.source)
        for label, line in sorted(self.gold.values(), key=lambda found: found[1]):
            resolve_label(label, classifier.label_names, f"{self.source}:{line}")


def _scan(record_file: RecordFile, settings: EvalSettings, pair: tuple[str, str] | None = None) -> _Scan:
    scan = _Scan(record_file.name, settings, pair)
    scan.total = record_file.check(scan.add)
    if scan.short + scan.special == scan.total:  # before the model loads: nothing it could do
        raise BadInput(
            f"{scan.source}: none of its {scan.total} record(s) could be evaluated ({scan.short} shorter than "
            f"`min_tokens` {settings.min_tokens}, {scan.special} only special tokens): nothing to report"
        )
    return scan


def _label_key(label) -> tuple:
    """One key per distinct label, each resolved once after the model loads (1 and "1" kept apart)."""
    return (type(label).__name__, label if isinstance(label, (str, int, float, bool)) else json.dumps(label))
