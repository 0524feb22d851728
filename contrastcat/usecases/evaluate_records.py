"""The evaluate use case on attribution records: records + a model -> one report, for files,
for notebooks and for the benchmarks.

:func:`evaluate_records` checks the records against the model (weights, precision, vocabulary,
classes, tokens), aligns records made elsewhere to its tokens, groups them by method and
settings, turns each group into the columns the metrics take (:func:`columns`) and runs the
perturbation curves (and Kendall-τ, which explains each record again) on them, returning an
:class:`~contrastcat.evaluation.reports.EvaluationReport`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..deletion.perturb import replacement_id
from ..deletion.plan import Remembered
from ..errors import BadInput, ContrastCatWarning
from ..spec import Names, backticked
from ..evaluation.curves import CurveTally, EvalSettings, Inputs, MethodReport
from ..evaluation.kendall import Kendall, alternative_class, kendall_confidence
from ..evaluation.reports import EvaluationReport
from ..evaluation.scalars import LeaveOneOut
from ..evaluation.stats import BootstrapSettings
from ..models.tokens import ProbabilityFn
from ..records.labels import resolve_label
from ..records.record import AttributionRecord
from ..records.variants import MethodLabels
from .elsewhere import align, made_elsewhere

Explainer = Callable[[Sequence[AttributionRecord], Sequence[int]], list[list[float]]]


def input_key(record: AttributionRecord) -> str:
    """What pairs one input across methods and reports: its id, token ids and target."""
    return hashlib.blake2b(
        json.dumps([record.id, record.token_ids, record.target], sort_keys=True).encode(), digest_size=16
    ).hexdigest()


def columns(records: Sequence[AttributionRecord]) -> Inputs:
    """``records`` as the columns the metrics take."""
    return Inputs(
        [input_key(r) for r in records], [r.id for r in records], [r.token_ids for r in records],
        [r.scores for r in records], [r.special for r in records], [bool(r.truncated) for r in records],
        raw=[r.scores if r.raw_scores is None else r.raw_scores for r in records],
        evidence=[r.evidence_tokens() for r in records],
    )


def check_same_evidence(records: Iterable[AttributionRecord], seen: dict[bytes, bytes], source: str) -> None:
    """Every record of one input (its id and token ids) carries the same evidence, or none at all
    (``seen``: a digest per input, filled in place): methods scored against different evidence,
    or on different inputs, would be paired as if they were not."""
    for record in records:
        key = hashlib.blake2b(repr((record.id, record.token_ids)).encode(), digest_size=16).digest()
        evidence = hashlib.blake2b(repr(record.evidence).encode(), digest_size=16).digest()
        if seen.setdefault(key, evidence) != evidence:
            raise BadInput(f"{where(source, record)}: record id {record.id!r} ({record.method}) carries other evidence "
                           "than an earlier record of the same input: the methods would be scored against different "
                           "evidence (explain them from one inputs file)")


def where(source: str, record: AttributionRecord) -> str:
    return f"{source}:{record.line}" if record.line is not None else f"{source}: record id {record.id!r}"


def targets_of(records: Sequence[AttributionRecord], target: str, label_names: Sequence[str], source: str) -> list[int] | None:
    """The class each record is scored by: None for ``pred`` (the class the model predicts for
    it), the record's own ``target``, or its gold ``label``."""
    if target == "pred":
        return None
    if target == "record":
        return [int(r.target) for r in records]
    found = []
    for record in records:
        if record.label is None:
            raise BadInput(f"{where(source, record)}: the gold target needs a label in every record")
        found.append(resolve_label(record.label, label_names, where(source, record)))
    return found


def add_records(
    tally: CurveTally, records: Sequence[AttributionRecord], predict: ProbabilityFn, label_names: Sequence[str], source: str
) -> list[AttributionRecord]:
    """Score the records of one method that can be evaluated; returns those."""
    chosen = tally.evaluable(columns(records))
    used = [records[i] for i in chosen.positions]
    targets = targets_of(used, tally.settings.target, label_names, source)
    scored = [int(r.predicted) for r in used] if targets is None else targets
    tally.report.other_class += sum(int(r.target) != int(t) for r, t in zip(used, scored))
    tally.add(chosen, predict, targets)
    return used


def perturbation_curves(
    records: Sequence[AttributionRecord],
    predict: ProbabilityFn,
    settings: EvalSettings,
    label_names: Sequence[str],
    mask_id: int | None = None,
    source: str = "<records>",
) -> MethodReport:
    """AOPC(k) = mean (p - p_k) and LOdds(k) = mean log(p_k / p) per step and order, of one
    method's records. Duplicates, inputs shorter than ``min_tokens`` and inputs of special tokens
    only are left out and counted (:meth:`CurveTally.evaluable`)."""
    tally = CurveTally(records[0].method if records else "", settings, mask_id)
    add_records(tally, records, predict, label_names, source)
    return tally.finish()


def kendall_for_records(records: Sequence[AttributionRecord], num_classes: int, explain_for: Explainer) -> Kendall:
    """Attribute every record again for ĉ = (c + 1) mod C and compare with its scores."""
    alternatives = [alternative_class(int(r.target), num_classes) for r in records]
    return kendall_confidence([r.scores for r in records], explain_for(records, alternatives))


def check_records(records: Sequence[AttributionRecord], vocab_size: int, num_classes: int, source: str) -> None:
    """Every record can be evaluated on this model: token ids in its vocabulary, targets among its classes."""
    for record in records:
        at = where(source, record)
        if not record.token_ids:
            raise BadInput(f"{at}: record id {record.id!r} has no token_ids; evaluate needs explain's records")
        outside = next((i for i in record.token_ids if i >= vocab_size), None)
        if outside is not None:
            raise BadInput(
                f"{at}: token id {outside} is not in the model's vocabulary (ids 0..{vocab_size - 1}); "
                "were these records made with another model?"
            )
        for name in ("target", "predicted"):
            value = getattr(record, name)
            if value >= num_classes:
                raise BadInput(f"{at}: {name} {value} is not a class of the model (it has {num_classes}: 0..{num_classes - 1})")




def mark_special_tokens(records: Iterable[AttributionRecord], special_ids: Iterable[int]) -> None:
    """Flag, in place, every token whose id is one of ``special_ids`` as special.

    Records written by other tools may not flag every special token; evaluation
    must never perturb them. Flags already set stay set.
    """
    special = set(special_ids)
    for record in records:
        record.special = [flag or token in special for flag, token in zip(record.special, record.token_ids)]


def check_explained(records: Sequence[AttributionRecord], source: str) -> None:
    """Evaluation re-runs the model on each record's token ids: records without them are refused."""
    if not records:
        raise BadInput(f"{source}: no attribution records")
    for record in records:
        if not record.token_ids:
            raise BadInput(f"{source}:{record.line}: record id {record.id!r} has no token_ids; evaluate needs explain's records")


def check_against_model(
    records: Sequence[AttributionRecord], classifier, source: str, named: Names = backticked
) -> None:
    """Records made with other weights or another precision, or whose token ids or classes do
    not fit the model, are refused with the line of the first one (``named`` spells an option
    as the caller does)."""
    loaded = str(classifier.dtype).removeprefix("torch.")
    check_fingerprinted(records, source)
    mismatched = next((r for r in records if r.model_fingerprint != classifier.fingerprint), None)
    if mismatched is not None and mismatched.model_dtype not in (None, loaded):
        raise BadInput(
            f"{source}:{mismatched.line}: record id {mismatched.id!r} was explained with the weights in "
            f"{mismatched.model_dtype}, but the model is loaded in {loaded} here: pass {named('dtype')} {mismatched.model_dtype}"
        )
    if mismatched is not None and mismatched.multi_label != classifier.multi_label:
        said = ("multi-label (a sigmoid per label)", "single-label (a softmax over the classes)")
        then, now = (said[0], said[1]) if mismatched.multi_label else (said[1], said[0])
        raise BadInput(
            f"{source}:{mismatched.line}: record id {mismatched.id!r} was explained reading model "
            f"{mismatched.model!r} as {then}, and {classifier.name!r} is {now} here (its config's problem_type): "
            "its fingerprint names that reading of the weights; set the problem_type the records were made with, "
            "or explain them again"
        )
    if mismatched is not None:
        raise BadInput(
            f"{source}:{mismatched.line}: record id {mismatched.id!r} was explained with model "
            f"{mismatched.model!r} whose weights are {mismatched.model_fingerprint}, but {classifier.name!r} "
            f"loads weights {classifier.fingerprint} here; pass the model the records were made with ({named('model')}), "
            "or explain them again"
        )
    # A record says what its probabilities are; the fingerprint already tells a multi-label reading
    # of the weights from a single-label one, so only an edited record (or another tool's, which
    # may not say) can disagree: its claim would be false, and is refused.
    claimed = next((r for r in records if r.multi_label != classifier.multi_label
                    and (r.multi_label or r.settings.get("made_elsewhere") is not True)), None)
    if claimed is not None:
        kind = "a multi-label classifier (a sigmoid per label)" if classifier.multi_label else \
            "a single-label classifier (a softmax over the classes)"
        # A single-label record says so by leaving multi_label out (explain writes it only when
        # true): a record without it is not said to have written "false".
        said = "says multi_label true" if claimed.multi_label else "is a single-label record (no multi_label true)"
        raise BadInput(f"{where(source, claimed)}: record id {claimed.id!r} {said}, but {classifier.name!r} is "
                       f"{kind} by its config")
    check_records(records, classifier.model.get_input_embeddings().num_embeddings, classifier.num_classes, source)
    check_tokens_are_the_models(records, classifier, source)


def check_tokens_are_the_models(records: Iterable[AttributionRecord], classifier, source: str) -> None:
    """The fingerprint names the weights, not the tokenizer: records made by the same weights with
    another vocabulary (a tokenizer passed in memory that is not the model's own) have ids that mean
    other tokens here. Each record's tokens must be what this tokenizer calls its ids."""
    tokenizer = classifier.tokenizer
    for record in records:
        if not record.token_ids:
            continue
        here = tokenizer.convert_ids_to_tokens([int(i) for i in record.token_ids])
        if here == list(record.tokens):
            continue
        index = next(i for i, (a, b) in enumerate(zip(here, record.tokens)) if a != b)
        raise BadInput(
            f"{source}:{record.line}: record id {record.id!r}: its token {index} is {record.tokens[index]!r}, but id "
            f"{record.token_ids[index]} is {here[index]!r} to the tokenizer of {classifier.name!r}: the records were "
            "made with another vocabulary; explain them again with this model's own tokenizer"
        )


def check_fingerprinted(records: Iterable[AttributionRecord], source: str) -> None:
    """Every record names the weights it explains: without that, records of another model would be
    evaluated on this one as if they were its own."""
    for record in records:
        if not record.model_fingerprint:
            raise BadInput(
                f"{source}:{record.line}: record id {record.id!r} has no model_fingerprint, so nothing says which "
                "weights it explains: explain the inputs again (a record written by hand takes the model's "
                "contrastcat.load_model(NAME).fingerprint)"
            )


def first_of_each_model(records: Iterable[AttributionRecord]) -> list[AttributionRecord]:
    """The first record of each (fingerprint, precision): what :func:`check_against_model` needs to see
    to judge a whole file before any work, whatever its length."""
    seen: dict[tuple, AttributionRecord] = {}
    for record in records:
        if len(seen) < MODELS_KEPT:
            seen.setdefault((record.model_fingerprint, record.model_dtype), record)
    return list(seen.values())


# One model explains the records evaluate accepts, in at most 4 precisions (float32, bfloat16,
# float16, or unsaid): of a file naming more, the first 5 (weights, precision) show a record made
# with other weights, and no more is held, however many it names.
MODELS_KEPT = 5


CHUNK = 1024  # records evaluated together: memory stays that of one chunk, however many records stream in


def shared_loo(loo: LeaveOneOut, perturb: str, mask_id: int | None, fingerprint: str, dtype: str = "float32") -> None:
    """Refuse drops of another perturbation, model or forward precision; adopt this call's on first use."""
    if loo.mode != perturb:
        raise BadInput(f"the leave-one-out drops given were made with {loo.mode!r}, this evaluation uses {perturb!r}")
    if loo.empty:
        loo.replacement, loo.model_fingerprint, loo.dtype = mask_id, fingerprint, dtype
    elif (loo.replacement, loo.model_fingerprint, loo.dtype) != (mask_id, fingerprint, dtype):
        raise BadInput("the leave-one-out drops given were made on another model, with another replacement token "
                       "or in another precision")


def check_one_kind(records: Sequence[AttributionRecord], pairs: bool, source: str) -> None:
    """Sentence-pair records and single-text records are not evaluated together: the model is
    run on pairs with their segment ids, on single texts without."""
    other = next((r for r in records if (r.pair is not None) != pairs), None)
    if other is not None:
        where = f"{source}:{other.line}" if other.line is not None else f"{source}: record id {other.id!r}"
        kinds = ("a single text", "sentence pairs") if pairs else ("a sentence pair", "single texts")
        raise BadInput(f"{where}: the record of {kinds[0]} among records of {kinds[1]}: evaluate them apart")


@dataclass(frozen=True)
class Evaluating:
    """What an evaluation of records takes besides the model, the records and the protocol."""

    library: object | None = None  # the RefLibrary that Kendall-τ's explaining again reads
    kendall: bool = False  # also Kendall-τ: each record explained again for another class
    batch_size: int = 64
    bootstrap: BootstrapSettings = BootstrapSettings()  # intervals of the means (0 resamples: none)
    source: str = "<records>"  # the records' file, as messages name it
    named: Names = backticked  # how the caller spells an option in a message
    progress: Callable[[int], None] | None = None  # records read so far, after each chunk
    chunk: int = CHUNK  # records evaluated together: fewer, for progress that moves more often
    # Leave-one-out drops kept from an earlier call (same classifier and perturbation), so
    # evaluating methods one call at a time predicts each input's single-token perturbations once;
    # filled in place (made with ``LeaveOneOut(settings.perturb, None)``, it takes the replacement
    # token and the model from the first call).
    loo: LeaveOneOut | None = None


def evaluate_records(
    classifier, records: Iterable[AttributionRecord], settings: EvalSettings = EvalSettings(),
    how: Evaluating = Evaluating(),
) -> EvaluationReport:
    """Perturbation curves (and Kendall-τ with ``how.kendall``) of ``records``, per method and
    settings, each mean with its bootstrap interval over inputs.

    ``records`` may be a stream: it is read and evaluated ``how.chunk`` records at a time. A
    sequence is judged whole before any work.
    """
    from ..models.precision import on_classifier

    settings = on_classifier(settings, classifier)
    if isinstance(records, Sequence):  # all at hand: judged whole before any work (a file's caller does it)
        records = _judged_whole(classifier, records, how)
    pending = iter(records)
    first = next(pending, None)
    pending = itertools.chain([first] if first is not None else [], pending)
    run = _Evaluation(classifier, settings, how, pairs=first is not None and first.pair is not None)
    while chunk := list(itertools.islice(pending, how.chunk)):
        run.add(chunk)
    return run.report()


def _judged_whole(classifier, records: Sequence[AttributionRecord], how: Evaluating) -> list[AttributionRecord]:
    foreign = next((r for r in records if made_elsewhere(r)), None)
    if how.kendall and foreign is not None:
        raise BadInput(f"{how.source}: record id {foreign.id!r} was made elsewhere (no token ids): {how.named('kendall')} "
                       "explains each record again by its own method, which it does not name")
    records = _aligned(classifier, list(records), how)
    check_explained(records, how.source)
    check_against_model(first_of_each_model(records), classifier, how.source, how.named)
    check_records(records, classifier.model.get_input_embeddings().num_embeddings, classifier.num_classes, how.source)
    return records


def _aligned(classifier, chunk: list[AttributionRecord], how: Evaluating) -> list[AttributionRecord]:
    """Other tools' maps (no token ids) on this model's tokens (usecases.elsewhere)."""
    return [align(r, classifier, f"{how.source}:{r.line}", how.named) if made_elsewhere(r) else r for r in chunk]


class _Evaluation:
    """One evaluation under way: a tally of curves per method label, fed chunk by chunk."""

    def __init__(self, classifier, settings: EvalSettings, how: Evaluating, pairs: bool) -> None:
        import torch

        from ..models import predictor, resolve_forward_dtype

        if pairs:
            classifier = classifier.paired()  # perturbed pairs keep their segment ids (models.segments)
        self.classifier, self.settings, self.how, self.pairs = classifier, settings, how, pairs
        forward_dtype = resolve_forward_dtype(settings.forward_dtype)
        self.predict = predictor(classifier, how.batch_size, forward_dtype)
        if (forward_dtype or classifier.dtype) in (torch.float32, torch.float64):
            # Remembered: every method's tally of a chunk perturbs the same inputs. Not in a lower
            # precision, where a sequence's probabilities depend on what shares its batch (0.79
            # and 0.82 measured): there a method's numbers would depend on the methods before it.
            self.predict = Remembered(self.predict)
        self.mask_id = replacement_id(settings.perturb, classifier.tokenizer, classifier.pad_id)
        self.loo = self._drops(str(forward_dtype or classifier.dtype))
        self.labels = MethodLabels(how.source)
        self.tallies: dict[str, CurveTally] = {}
        self.taus: dict[str, tuple[list[float], list[float]]] = {}
        self.again: dict = {}  # per method label: its records' methods, rebuilt and checked once (Kendall-τ)
        self.inputs_seen: dict[str, set[bytes]] = {}  # per method, digests of its inputs' tokens and target
        self.evidence_of: dict[bytes, bytes] = {}  # per input, a digest of its records' evidence
        self.count = self.truncated = self.elsewhere = self.other_class = self.evidence = 0

    def _drops(self, precision: str) -> LeaveOneOut | None:
        """The leave-one-out drops the methods share (None: no leave-one-out)."""
        settings, classifier, loo = self.settings, self.classifier, self.how.loo
        if not settings.loo:
            return None
        if loo is None:
            return LeaveOneOut(settings.perturb, self.mask_id, classifier.fingerprint, precision)
        shared_loo(loo, settings.perturb, self.mask_id, classifier.fingerprint, precision)
        return loo

    def add(self, chunk: list[AttributionRecord]) -> None:
        classifier, source = self.classifier, self.how.source
        check_one_kind(chunk, self.pairs, source)
        chunk = _aligned(classifier, chunk, self.how)
        self.elsewhere += sum(r.settings.get("made_elsewhere") is True for r in chunk)
        check_explained(chunk, source)
        check_against_model(chunk, classifier, source, self.how.named)
        mark_special_tokens(chunk, classifier.tokenizer.all_special_ids)
        self.count += len(chunk)
        self.truncated += sum(r.truncated for r in chunk)
        self.evidence += sum(r.evidence is not None for r in chunk)
        check_same_evidence(chunk, self.evidence_of, source)
        if self.settings.target == "pred":  # scored by another class than their maps explain: said after
            self.other_class += sum(r.target != r.predicted for r in chunk)
        for name, group in self.labels.group(chunk).items():
            tally = self._tally(name, group[0])
            used = add_records(tally, group, self.predict, classifier.label_names, source)
            self._count_repeats(name, tally, used)
            if self.how.kendall and used:
                self._add_kendall(name, used)
        if self.how.progress is not None:
            self.how.progress(self.count)

    def _count_repeats(self, name: str, tally: CurveTally, used: list[AttributionRecord]) -> None:
        """Inputs of one method with the tokens and target of another under another id: each is
        evaluated, but the inputs are fewer than the count says (the intervals too narrow)."""
        seen = self.inputs_seen.setdefault(name, set())
        for record in used:
            digest = hashlib.blake2b(repr((record.token_ids, record.target)).encode(), digest_size=16).digest()
            tally.report.repeated += digest in seen
            seen.add(digest)

    def _tally(self, name: str, first: AttributionRecord) -> CurveTally:
        if name not in self.tallies:
            self.tallies[name] = CurveTally(name, self.settings, self.mask_id, self.loo)
            self.tallies[name].report.provenance = {
                "method_name": first.method, "settings": first.settings, "library": first.library,
                "model_fingerprint": first.model_fingerprint,
            }
        return self.tallies[name]

    def _add_kendall(self, name: str, used: list[AttributionRecord]) -> None:
        from ..attribution.pipeline import prepare_reattribution

        how, classifier = self.how, self.classifier
        needing = next((r for r in used if r.library), None)
        if how.library is None and needing is not None:  # said here, in the caller's terms
            raise BadInput(f"records of method {needing.method} need their reference library to be explained "
                           f"again: pass {how.named('library')}")
        again = self.again.get(name)
        if again is None or not again.covers(used):  # a label's records share their method and settings: checked once
            again = self.again[name] = prepare_reattribution(classifier, used, how.library, max(1, how.batch_size // 4),
                                                             how.source, how.named)
        found = kendall_for_records(
            used, classifier.num_classes, lambda recs, targets: again.scores(classifier, recs, targets, how.library),
        )
        index_taus, score_taus = self.taus.setdefault(name, ([], []))
        index_taus.extend(found.index_taus)
        score_taus.extend(found.score_taus)

    def report(self) -> EvaluationReport:
        source, tallies = self.how.source, self.tallies
        if not self.count:
            raise BadInput(f"{source}: no attribution records")
        if not any(tally.report.evaluated for tally in tallies.values()):
            short = sum(t.report.skipped_short for t in tallies.values())
            special = sum(t.report.skipped_special for t in tallies.values())
            raise BadInput(
                f"{source}: none of its {self.count} record(s) could be evaluated ({short} shorter than {self.how.named('min_tokens')} "
                f"{self.settings.min_tokens}, {special} only special tokens): nothing to report"
            )
        if self.other_class:
            # Normal for a multi-label classifier explained label by label (--target N).
            warnings.warn(
                f"{self.other_class} record(s) explain another class than the one the model predicts: "
                f"{self.how.named('target')} pred scores each by the predicted class's probability, not by the "
                f"class its map explains ({self.how.named('target')} record scores that one)",
                ContrastCatWarning, stacklevel=2,
            )
        if self.evidence and not self.settings.plausibility:  # the records carry evidence: scored against it
            self.settings = dataclasses.replace(self.settings, plausibility=True)
        reports: dict[str, MethodReport] = {}
        for name, tally in tallies.items():
            tally.settings = self.settings
            report = tally.finish()  # variants of one method are told apart by their label
            if self.how.kendall:
                report.kendall = Kendall.of(*self.taus.get(name, ([], [])))
            report.add_intervals(self.how.bootstrap)
            reports[name] = report
        classifier = self.classifier
        return EvaluationReport(
            source=source, model=classifier.name, model_fingerprint=classifier.fingerprint, records=self.count,
            settings=self.settings, truncated=self.truncated, made_elsewhere=self.elsewhere, methods=reports,
            kendall=self.how.kendall, num_classes=classifier.num_classes, bootstrap=self.how.bootstrap,
        )
