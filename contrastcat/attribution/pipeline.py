"""The explain pipeline: tokens -> capture -> method -> refine -> records.

``explain`` is what the CLI runs and what a notebook calls. Inputs are
processed in windows sorted by length (less padding); records come back in
input order, and a batched result equals the one-at-a-time result.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..capture.core import capture
from ..capture.passes import FORWARD_BATCHES, ModelPasses
from ..deletion.refine import Refined, RefineItem, average, refine
from ..errors import BadInput, NonFiniteOutput, RunFailed
from ..io import jsonl
from ..spec import Names, backticked
from ..methods import AttributionMethod, Candidates, build_method
from ..models import Classifier
from ..models.loading import check_max_length
from ..models.precision import AUTO, SAME, check_forward_dtype, on_classifier, resolve_forward_dtype
from ..models.tokens import TokenizedText, length_batches
from ..records.evidence import written_spans
from ..records.inputs import InputRow
from ..records.record import AttributionRecord, raw_rounded, rounded
from .pairs import tokenize_rows
from .targets import PREDICTED, Target, check_all_active



def resolve_targets(rows: Sequence[InputRow], target: Target, label_names: Sequence[str], source: str
                    ) -> list[int | None]:
    """Per row: the class its first records explain, or None for its predicted class."""
    return [target.fixed(row, label_names, f"{source}:{row.line}") for row in rows]


@dataclass(frozen=True)
class ExplainSettings:
    """How explain runs. Its values are checked where they are read (the options of explain,
    compare, evaluate and sanity; a record's settings where it is explained again) and passed down
    as they are: nothing below checks them again."""

    batch_size: int = 16
    mask_special: bool = False  # reference-code quirk, docs/spec.md §1
    window: int = 8  # batches per length-sorted window
    max_length: int | None = None  # tokens per input; None: the model's own limit
    forward_dtype: str = SAME  # autocast of the forward-only passes (deletion test, TIS); SAME: the weights'
    words: bool = False  # each record also carries its words (AttributionRecord.word_scores)

    @property
    def window_inputs(self) -> int:
        """Inputs per window: a run resumed at a multiple of this batches exactly as an uninterrupted one."""
        return self.batch_size * self.window


PIPELINE_SETTINGS = ("mask_special", "forward_dtype")  # in a record's settings beside the method's own options


def record_settings(method: AttributionMethod, options: ExplainSettings) -> dict:
    """What a record's ``settings`` holds: the method's options and the pipeline's.
    ``forward_dtype`` appears only when it is not the weights' own precision."""
    extra = {} if options.forward_dtype == SAME else {"forward_dtype": options.forward_dtype}
    return {**method.settings(), "mask_special": options.mask_special, **extra}


def check_on_model(
    classifier: Classifier, methods: Sequence[AttributionMethod], mask_special: bool, named: Names = backticked
) -> None:
    """What the options ask of this model, before any pass: the layers a method reads, and
    special tokens masked where that leaves every attention row a key."""
    for each in methods:
        each.check_model(classifier.num_layers, named)
    check_mask_special(classifier, mask_special)


def check_mask_special(classifier: Classifier, mask_special: bool) -> None:
    """--mask-special only where masking special keys leaves every query row a key to see."""
    if mask_special and not classifier.adapter.family.mask_special:
        raise BadInput(
            f"special tokens cannot be masked in model type {classifier.adapter.model_type!r}: some of its "
            "attention rows would see no token at all, and the scores would depend on the batch's padding"
        )


def attribute_all(
    classifier: Classifier,
    texts: Sequence[TokenizedText],
    targets: Sequence[int | None],
    methods: Sequence[AttributionMethod],
    library=None,
    options: ExplainSettings = ExplainSettings(),
) -> tuple[list[list[Refined]], np.ndarray, list[int]]:
    """Final maps of one batch for several methods sharing one capture.

    Returns (per method, per input: refined map), probs [B, C], resolved targets.
    """
    captured = capture(
        classifier,
        [t.ids for t in texts],
        [t.special for t in texts],
        targets,
        needs=frozenset().union(*(method.needs for method in methods)),
        mask_special=options.mask_special,
    )
    passes = ModelPasses(
        classifier, options.batch_size * FORWARD_BATCHES, options.mask_special, options.batch_size,
        resolve_forward_dtype(options.forward_dtype),
    )
    resolved = [int(t) for t in captured.targets]
    results = []
    for method in methods:
        maps = [_candidates(m) for m in method.candidate_maps(captured, library if method.uses_library else None, passes)]
        candidates = [m.scaled.double().cpu().numpy() for m in maps]
        refined = [average(candidate) for candidate in candidates]
        several = [b for b, candidate in enumerate(candidates) if len(candidate) > 1]
        if method.refinement is not None and several:
            items = [RefineItem(texts[b].ids, texts[b].special, resolved[b], candidates[b]) for b in several]
            for b, result in zip(several, refine(items, passes.probabilities, method.refinement, classifier.multi_label)):
                refined[b] = result
        for b, found in enumerate(maps):
            if found.raw is not None:  # a method of one map: that map unscaled, in its own units
                refined[b] = dataclasses.replace(refined[b], raw=found.raw.detach().double().cpu().numpy())
        results.append(refined)
    return results, captured.probs.cpu().numpy(), resolved


def _candidates(maps: Candidates | torch.Tensor) -> Candidates:
    """A method's maps for one input; an extension's method may give its scaled maps alone."""
    return maps if isinstance(maps, Candidates) else Candidates(maps)


def attribute(
    classifier: Classifier,
    texts: Sequence[TokenizedText],
    targets: Sequence[int | None],
    method: AttributionMethod,
    library=None,
    options: ExplainSettings = ExplainSettings(),
) -> tuple[list[Refined], np.ndarray, list[int]]:
    """Final maps of one batch for one method: (refined maps, probs [B, C], resolved targets)."""
    (refined,), probs, resolved = attribute_all(classifier, texts, targets, [method], library, options)
    return refined, probs, resolved


def check_library(methods: Sequence[AttributionMethod], library, named: Names = backticked) -> None:
    """Every method that reads a library has one, holding the pool it reads (no model needed);
    ``named`` spells an option as the caller does."""
    for each in methods:
        if not each.uses_library:
            continue
        if library is None:
            raise BadInput(f"method {each.name} needs a reference library: pass {named('library')} (build one with build-refs)")
        for pool, count in each.pools_needed.items():
            library.require_pool(pool, at_least=count, asked=each.count_option(named))


def explain(
    classifier: Classifier,
    rows: Iterable[InputRow],
    method: AttributionMethod | Sequence[AttributionMethod],
    library=None,
    target: Target | str | int = PREDICTED,
    options: ExplainSettings = ExplainSettings(),
    source: str = "<input>",
    progress: Callable[[int], None] | None = None,
) -> Iterator[AttributionRecord]:
    """Attribution records for ``rows``, in input order.

    ``rows`` may be a stream: it is read one window of inputs at a time
    (``options.window_inputs``), so memory does not grow with its length and
    the first records come before the last row is read. With several methods,
    each input gets one record per method, in the order the methods are given
    (input-major); all methods share each batch's forward and backward pass.
    With ``target="all-active"`` (a multi-label model) each input gets that for
    each label :meth:`Target.labels` names, label by label. Prepared (:func:`prepare`) on the
    first row (its kind: a sentence pair's passes get segment ids); a caller that checked its
    options once prepares itself and calls :func:`explain_prepared`.
    """
    methods = [method] if isinstance(method, AttributionMethod) else list(method)
    target = Target.read("`target`", target)  # called below the options: its words are read here
    chosen = choose(methods, library)
    pending = iter(rows)
    first = next(pending, None)
    if first is None:
        if target.per_label:
            check_all_active(classifier.multi_label)
        return
    paired = classifier.paired() if first.pair is not None else classifier
    prepared = prepare(paired, chosen, target, options)
    for records in explain_prepared(prepared, itertools.chain([first], pending), source, progress):
        yield from records


@dataclass(frozen=True)
class Chosen:
    """Methods and the library they read, checked against each other before any model is
    loaded (:func:`choose`): each method that reads a library has one holding what it reads."""

    methods: tuple[AttributionMethod, ...]
    library: object | None  # None where no method reads one


def choose(methods: Sequence[AttributionMethod], library=None, named: Names = backticked) -> Chosen:
    """``methods`` with ``library``, checked (``named`` spells an option as the caller does)."""
    check_library(methods, library, named)
    return Chosen(tuple(methods), library if any(each.uses_library for each in methods) else None)


@dataclass(frozen=True)
class Prepared:
    """An explain run resolved and checked once (:func:`prepare`): the classifier (paired for
    sentence pairs), the methods checked against it, the library checked against the methods, the
    model and the inputs' kind (None where no method reads one), the target, the settings resolved
    on the classifier (forward_dtype ``auto`` named), and the tokens an input keeps.
    :func:`explain_prepared` takes it as it is, and checks nothing again."""

    classifier: Classifier
    methods: tuple[AttributionMethod, ...]
    library: object | None
    target: Target
    options: ExplainSettings
    max_length: int


def prepare(
    classifier: Classifier, chosen: Chosen, target: Target = PREDICTED, options: ExplainSettings = ExplainSettings(),
    named: Names = backticked,
) -> Prepared:
    """Every check an explain run makes on its model before its first pass, made once
    (``classifier``: paired already where the inputs are sentence pairs; ``chosen``: the methods
    and their library, checked together; ``named`` spells an option as the caller does)."""
    target = target.on_model(classifier.num_classes, classifier.multi_label, named("target"))
    methods, library = chosen.methods, chosen.library
    if library is not None:
        library.check_model(classifier)
        library.check_inputs(classifier.pairs)
    check_on_model(classifier, methods, options.mask_special, named)
    max_length = check_max_length(classifier, options.max_length, named("max_length"))
    return Prepared(classifier, methods, library, target, on_classifier(options, classifier, named), max_length)


def explain_prepared(
    prepared: Prepared, rows: Iterable[InputRow], source: str = "<input>", progress: Callable[[int], None] | None = None,
) -> Iterator[list[AttributionRecord]]:
    """The records of ``rows``, one list per input, window after window, by a prepared run."""
    run = _Run(prepared.classifier, prepared.methods, prepared.library, prepared.target, prepared.options, source,
               prepared.max_length)
    pending = iter(rows)
    while window := list(itertools.islice(pending, prepared.options.window_inputs)):
        yield from _explain_window(run, window, progress)


@dataclass(frozen=True)
class _Run:
    """What every window of one explain call shares."""

    classifier: Classifier
    methods: Sequence[AttributionMethod]
    library: object | None
    target: Target
    options: ExplainSettings
    source: str
    max_length: int


def _explain_window(run: _Run, rows, progress) -> Iterator[list[AttributionRecord]]:
    """The records of one window of rows, one list per row in input order (batches are formed
    within it, by length)."""
    targets = resolve_targets(rows, run.target, run.classifier.label_names, run.source)
    texts = tokenize_rows(run.classifier, rows, run.max_length, run.source)
    results: dict[int, list[AttributionRecord]] = {}
    written: dict[int, tuple[list[float], int]] = {}  # each row's probabilities as written, and predicted label
    for indices, records in _batches(run, rows, texts, [(i, targets[i]) for i in range(len(rows))], None):
        for index, found in zip(indices, records):
            results[index] = found
            written[index] = (found[0].probs, found[0].predicted)
        if progress is not None:
            progress(len(indices))
    if run.target.per_label:
        # The other labels each row's first pass (its predicted label's) shows above 0.5, batched
        # among themselves: the predicted label's records are a pred run's, byte for byte.
        others = [
            (index, label) for index in range(len(rows)) for label in run.target.labels(*written[index])
            if label != written[index][1]
        ]
        for tasks, records in _batches(run, rows, texts, others, written):
            for (index, _), found in zip(tasks, records):
                results[index] += found
        for index in results:
            results[index].sort(key=lambda record: record.target)  # stable: methods stay in their order
    for index in range(len(rows)):
        yield results[index]


def _batches(run: _Run, rows, texts, tasks: list[tuple[int, int | None]], written):
    """``tasks`` (row, target) explained in batches of like length: per batch, its rows (or
    tasks, where ``written`` gives the probabilities their records carry) and their records."""
    classifier = run.classifier
    for batch in length_batches([len(texts[index]) for index, _ in tasks], run.options.batch_size):
        chosen = [tasks[b] for b in batch]
        try:
            per_method, probs, resolved = attribute_all(
                classifier, [texts[index] for index, _ in chosen], [target for _, target in chosen], run.methods,
                run.library, run.options,
            )
        except NonFiniteOutput as error:
            row = rows[chosen[error.rows[0]][0]] if error.rows else rows[chosen[0][0]]
            raise NonFiniteOutput(f"{run.source}:{row.line}: {error}", error.rows) from None
        records = [
            [
                _record(run, rows[index], texts[index],
                        _Pass(probs[position], resolved[position], None if written is None else written[index]),
                        refined[position], each)
                for each, refined in zip(run.methods, per_method)
            ]
            for position, (index, _) in enumerate(chosen)
        ]
        yield ([index for index, _ in chosen] if written is None else chosen), records


@dataclass(frozen=True)
class _Pass:
    """An input's forward pass as its records carry it: its probabilities, the target explained,
    and ``written``: the probabilities and predicted label the input's first pass wrote, which
    every record of the input carries (a later pass, batched otherwise, differs in last digits)."""

    probs: object  # an array of the classes' probabilities
    target: int
    written: tuple | None = None


def _record(run: _Run, row, text, seen: _Pass, refined, method) -> AttributionRecord:
    """One method's record of one input."""
    probs, target, written = seen.probs, seen.target, seen.written
    # Raw scores whose magnitudes add up past the largest float are refused when read (their sums
    # would overflow): not written either.
    if not (np.all(np.isfinite(refined.scores)) and np.isfinite(np.abs(refined.raw).sum())):
        raise RunFailed(f"{run.source}:{row.line}: method {method.name} produced non-finite scores for this input")
    classifier, library = run.classifier, run.library
    record = AttributionRecord(
        id=row.id,
        text=row.text,
        pair=row.pair,
        segments=None if text.segments is None else list(text.segments),
        tokens=list(text.tokens),
        token_ids=list(text.ids),
        offsets=[list(span) for span in text.offsets],
        special=list(text.special),
        scores=rounded(refined.scores),
        raw_scores=raw_rounded(refined.raw),
        target=target,
        target_name=classifier.label_names[target],
        probs=[float(f"{p:.6g}") for p in probs] if written is None else list(written[0]),
        predicted=int(np.argmax(probs)) if written is None else written[1],
        label=row.label,
        evidence=None if row.evidence is None else written_spans(row.evidence),
        method=method.name,
        **classifier.identity(),
        library=library.fingerprint if library is not None and method.uses_library else None,
        refs_kept=int(refined.kept.sum()) if method.uses_library else None,
        refs_total=len(refined.kept) if method.uses_library else None,
        truncated=text.truncated,
        tokens_dropped=text.dropped,
        pad_token_id=classifier.pad_id,
        settings=record_settings(method, run.options),
        multi_label=classifier.multi_label,
    )
    if run.options.words:
        record.words = [word.to_dict() for word in record.word_scores()]
    return record


def reattribute(
    classifier: Classifier,
    records: Sequence[AttributionRecord],
    targets: Sequence[int],
    method: AttributionMethod,
    library=None,
    options: ExplainSettings = ExplainSettings(),
) -> list[list[float]]:
    """Scores for the tokens of existing records, for other target classes (Kendall-τ)."""
    texts = [
        TokenizedText(
            ids=tuple(r.token_ids),
            tokens=tuple(r.tokens),
            offsets=tuple(tuple(o) for o in r.offsets),
            special=tuple(r.special),
        )
        for r in records
    ]
    scores: list[list[float]] = [[] for _ in records]
    for batch in length_batches([len(t) for t in texts], options.batch_size):
        refined, _, _ = attribute(
            classifier, [texts[i] for i in batch], [targets[i] for i in batch], method, library, options
        )
        for position, index in enumerate(batch):
            scores[index] = rounded(refined[position].scores)
    return scores


@dataclass(frozen=True)
class Reattribution:
    """Records' methods rebuilt from their own settings, checked once against a model and library
    (:func:`prepare_reattribution`); :meth:`scores` explains records of those methods again, on that
    model or a copy of it (a randomised one: the same layers and precision), checking nothing."""

    runs: Mapping[str, tuple[AttributionMethod, ExplainSettings]]  # by the records' method and settings

    def covers(self, records: Iterable[AttributionRecord]) -> bool:
        """Whether every record's method and settings were prepared."""
        return all(_made_by(record) in self.runs for record in records)

    def scores(self, classifier: Classifier, records: Sequence[AttributionRecord], targets: Sequence[int],
               library=None) -> list[list[float]]:
        """Each record explained again for its target of ``targets`` (Kendall-τ, the sanity check)."""
        groups: dict[str, list[int]] = {}
        for index, record in enumerate(records):
            groups.setdefault(_made_by(record), []).append(index)
        scores: list[list[float]] = [[] for _ in records]
        for key, indices in groups.items():
            method, options = self.runs[key]
            again = reattribute(classifier, [records[i] for i in indices], [targets[i] for i in indices], method,
                                library if method.uses_library else None, options)
            for index, values in zip(indices, again):
                scores[index] = values
        return scores


def _made_by(record: AttributionRecord) -> str:
    return json.dumps([record.method, record.settings], sort_keys=True)


def prepare_reattribution(
    classifier: Classifier, records: Sequence[AttributionRecord], library=None, batch_size: int = 16,
    source: str = "<records>", named: Names = backticked,
) -> Reattribution:
    """The methods that made ``records``, by their own settings (read from a file: checked here),
    with the library they read checked against ``classifier`` and the records (``named`` spells
    the library's option as the caller does)."""
    runs: dict[str, tuple[AttributionMethod, ExplainSettings]] = {}
    for record in records:
        key = _made_by(record)
        if key in runs:
            continue
        name, settings = record.method, record.settings
        method_settings = {key: value for key, value in settings.items() if key not in PIPELINE_SETTINGS}
        try:
            method = build_method(name, **method_settings)
            method.check_model(classifier.num_layers, str)  # what its options ask of this model
            if settings.get("forward_dtype") == AUTO:  # a record says what ran; auto never does
                raise BadInput("forward_dtype auto names no precision")
            if not isinstance(settings.get("mask_special", False), bool):  # "false" is not false
                raise BadInput(f"mask_special must be true or false, got {jsonl.dumps(settings['mask_special'])}")
            check_forward_dtype(str(settings.get("forward_dtype", SAME)))  # read from a file: checked here
            options = on_classifier(ExplainSettings(  # explained again as it was, warned if emulated here
                batch_size=batch_size,
                mask_special=settings.get("mask_special", False),
                forward_dtype=str(settings.get("forward_dtype", SAME)),
            ), classifier)
            check_mask_special(classifier, options.mask_special)
        except (TypeError, ValueError, BadInput) as error:
            where = f"{source}:{record.line}" if record.line is not None else f"{source}: record id {record.id!r}"
            raise BadInput(f"{where}: its {name} settings cannot be used again ({error})") from None
        if method.uses_library:
            _check_records_library(classifier, [r for r in records if _made_by(r) == key], method, library, named)
        runs[key] = (method, options)
    return Reattribution(runs)


def _check_records_library(classifier: Classifier, records: Sequence[AttributionRecord], method: AttributionMethod,
                           library, named: Names) -> None:
    """The library the records were made with, holding as many references as they asked for."""
    if library is None:
        raise BadInput(f"records of method {method.name} need their reference library to be explained again: pass {named('library')}")
    library.check_model(classifier)
    used = {record.library for record in records} - {None, library.fingerprint}
    if used:
        raise BadInput(f"{library.path}: records were explained with another library ({used.pop()}); pass that one")
    # As many references as the records asked for, never fewer; the count is theirs, not an option's.
    check_library([method], library, lambda name: f"the records' {name}")
