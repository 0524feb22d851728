"""The evaluate use case: records + a model -> one report, for the CLI and for notebooks.

:func:`evaluate_records` checks the records against the model (weights,
precision, vocabulary, classes), groups them by method and settings, runs the
perturbation curves (and Kendall-τ), and returns an :class:`EvaluationReport`
whose ``to_dict()`` is the JSON report ``contrastcat evaluate`` writes and
whose ``table()`` / ``_repr_html_`` show the comparison.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..deletion.perturb import replacement_id
from ..deletion.plan import step_labels
from ..errors import BadInput
from ..records.record import AttributionRecord
from ..records.variants import MethodLabels
from .comparison import BEST, SECOND, Comparison, compare_methods
from .curves import CurveTally, EvalSettings, MethodReport, check_records, mark_special_tokens
from .elsewhere import align, made_elsewhere
from .fitted import SIGNS
from .kendall import Kendall, kendall_for_records
from .report_schema import REPORT_SCHEMA, REPORT_SCHEMA_VERSION
from .scalars import ERASER_BINS, LeaveOneOut
from .stats import BootstrapSettings, Difference, Interval, paired_difference

TABLE_DECIMALS = 4  # the terminal tables and the JSON report's marks: values that print the same are tied
MARKDOWN_DECIMALS = 3


@dataclass
class EvaluationReport:
    """Faithfulness of a set of records, per method (and settings)."""

    source: str
    model: str
    model_fingerprint: str
    records: int
    settings: EvalSettings
    truncated: int  # records that explain a truncated input
    methods: dict[str, MethodReport]
    kendall: bool
    num_classes: int
    bootstrap: BootstrapSettings = BootstrapSettings()
    made_elsewhere: int = 0  # records of other tools, aligned to the model's tokens (evaluation.elsewhere)
    limit: int | None = None  # only the first records of the file were evaluated (evaluate --limit)

    def comparison(self, decimals: int = TABLE_DECIMALS) -> Comparison:
        return compare_methods(
            list(self.methods.values()), self.settings.orders, self.kendall, decimals, self.settings.scalar_keys,
            self.settings.perturb,
        )

    def difference(self, first: str, second: str) -> dict[str, Difference]:
        """``first`` − ``second`` per metric, paired over the inputs both evaluated, with intervals."""
        if not (isinstance(first, str) and isinstance(second, str)) or first == second:
            raise BadInput(f"`compare` takes two different method names, got {first!r} and {second!r}")
        for name in (first, second):
            if name not in self.methods:
                raise BadInput(f"`compare`: no method {name!r} in the report (it has: {', '.join(self.methods)})")
        a, b = self.methods[first], self.methods[second]
        found = {}
        for order in self.settings.orders:
            if order in a.per_input and order in b.per_input:
                for key in ("aopc", "lodds"):
                    paired = paired_difference(a.per_input[order].means(key), b.per_input[order].means(key), self.bootstrap)
                    if paired is not None:
                        found[f"{order}_{key}"] = paired
        for key in self.settings.scalar_keys:
            if key in a.scalars and key in b.scalars:
                paired = paired_difference(a.scalars[key].means(), b.scalars[key].means(), self.bootstrap)
                if paired is not None:
                    found[key] = paired
        if a.kendall is not None and b.kendall is not None and a.per_input and b.per_input:
            keys_a, keys_b = next(iter(a.per_input.values())).keys, next(iter(b.per_input.values())).keys
            paired = paired_difference(
                dict(zip(keys_a, a.kendall.index_taus)), dict(zip(keys_b, b.kendall.index_taus)), self.bootstrap
            )
            if paired is not None:
                found["kendall_tau_index"] = paired
        if not found:
            raise BadInput(f"`compare`: {first} and {second} have no evaluated input in common")
        return found

    def to_dict(self, per_input: bool = False, compare: tuple[str, str] | None = None) -> dict:
        """The JSON report (strict JSON: an undefined value is null); ``per_input`` adds every input's
        values (what a later run needs to pair its inputs with these), ``compare`` a paired difference."""
        from ..version import __version__

        document = {
            "schema": REPORT_SCHEMA,
            "schema_version": REPORT_SCHEMA_VERSION,
            "tool": {"name": "contrastcat", "version": __version__},
            "input": self.source,
            "model": self.model,
            "model_fingerprint": self.model_fingerprint,
            "records": self.records,
            # Only when set: a report of every record reads as it did before the option existed.
            **({"limit": self.limit} if self.limit is not None else {}),
            "steps": self.settings.steps,
            "step_labels": step_labels(self.settings.steps),
            "perturb": self.settings.perturb,
            "target": self.settings.target,
            "min_tokens": self.settings.min_tokens,
            "forward_dtype": self.settings.forward_dtype,
            "truncated": self.truncated,
            "made_elsewhere": self.made_elsewhere,
            "orders": list(self.settings.orders),
            "eraser": self.settings.eraser,
            "eraser_bins": list(ERASER_BINS),
            "loo": self.settings.loo,
            "bootstrap": self.bootstrap.as_dict(),
            "methods": {name: report.as_dict(per_input) for name, report in self.methods.items()},
            "comparison": self.comparison().as_dict(),
        }
        if compare is not None:
            if isinstance(compare, str) or not isinstance(compare, (tuple, list)) or len(compare) != 2:
                raise BadInput(f"`compare` takes a pair of method names (A, B), got {compare!r}"[:200])
            differences = self.difference(*compare)
            document["compare"] = {
                "first": compare[0], "second": compare[1],
                "differences": {key: d.as_dict() for key, d in differences.items()},
                # evaluated, but no input has a value for both (a τ of a constant map): said, not dropped
                "undefined": [c["key"] for c in document["comparison"]["columns"] if c["key"] not in differences],
            }
        return document

    def table(self, decimals: int = MARKDOWN_DECIMALS) -> str:
        """The comparison as a GitHub Markdown table: best **bold**, second <ins>underlined</ins>."""
        return markdown_table(self.comparison(decimals))

    def _repr_html_(self) -> str:
        comparison = self.comparison(MARKDOWN_DECIMALS)
        head = "".join(f"<th>{html.escape(header(c.metric))}</th>" for c in comparison.columns)
        rows = []
        for row in comparison.rows:
            cells = []
            for column in comparison.columns:
                text = number(row.values[column.key], MARKDOWN_DECIMALS, row.intervals.get(column.key))
                text += SIGNS.get(row.fitted.get(column.key), "")
                mark = row.marks[column.key]
                cells.append(f"<td><b>{text}</b></td>" if mark == BEST else f"<td><u>{text}</u></td>"
                             if mark == SECOND else f"<td>{text}</td>")
            rows.append(f"<tr><td>{html.escape(row.method)}</td>{''.join(cells)}<td>{row.evaluated}</td></tr>")
        caption = f"Mean over the {len(step_labels(self.settings.steps))} steps (bold best, underlined second)"
        return (f"<table><caption>{caption}</caption><tr><th>method</th>{head}<th>inputs</th></tr>"
                f"{''.join(rows)}</table>")


def number(value: float | None, decimals: int, interval: Interval | None = None) -> str:
    """``0.556``, or ``0.556 ± 0.031`` with an interval (± its half-width; the report has both ends)."""
    if value is None:
        return "n/a"
    text = f"{round(value, decimals) + 0.0:.{decimals}f}"  # + 0.0: no "-0.000"
    if interval is not None:
        text += f" ± {round(interval.half_width, decimals) + 0.0:.{decimals}f}"
    return text


def header(metric) -> str:
    return f"{metric.name} {'↑' if metric.higher_is_better else '↓'}"


def markdown_table(comparison: Comparison) -> str:
    """The comparison as a GitHub Markdown table: best **bold**, second <ins>underlined</ins>."""
    headers = ["method", *(header(c.metric) for c in comparison.columns), "inputs"]
    lines = ["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
    decimals = comparison.decimals if comparison.decimals is not None else MARKDOWN_DECIMALS
    for row in comparison.rows:
        cells = [row.method.replace("|", "\\|")]
        for column in comparison.columns:
            text = number(row.values[column.key], decimals, row.intervals.get(column.key))
            mark = row.marks[column.key]
            text = f"**{text}**" if mark == BEST else f"<ins>{text}</ins>" if mark == SECOND else text
            cells.append(text + SIGNS.get(row.fitted.get(column.key), ""))
        cells.append(str(row.evaluated))
        lines.append("| " + " | ".join(cells) + " |")
    legend = comparison.legend()
    lines += ["", *legend] if legend else []
    return "\n".join(lines)


def check_explained(records: Sequence[AttributionRecord], source: str) -> None:
    """Evaluation re-runs the model on each record's token ids: records without them are refused."""
    if not records:
        raise BadInput(f"{source}: no attribution records")
    for record in records:
        if not record.token_ids:
            raise BadInput(f"{source}:{record.line}: record id {record.id!r} has no token_ids; evaluate needs explain's records")


def check_against_model(records: Sequence[AttributionRecord], classifier, source: str) -> None:
    """Records made with other weights or another precision, or whose token ids or classes do
    not fit the model, are refused with the line of the first one."""
    loaded = str(classifier.dtype).removeprefix("torch.")
    check_fingerprinted(records, source)
    mismatched = next((r for r in records if r.model_fingerprint != classifier.fingerprint), None)
    if mismatched is not None and mismatched.model_dtype not in (None, loaded):
        raise BadInput(
            f"{source}:{mismatched.line}: record id {mismatched.id!r} was explained with the weights in "
            f"{mismatched.model_dtype}, but the model is loaded in {loaded} here: pass `dtype` {mismatched.model_dtype}"
        )
    if mismatched is not None:
        raise BadInput(
            f"{source}:{mismatched.line}: record id {mismatched.id!r} was explained with model "
            f"{mismatched.model!r} whose weights are {mismatched.model_fingerprint}, but {classifier.name!r} "
            f"loads weights {classifier.fingerprint} here; pass the model the records were made with (`model`), "
            "or explain them again"
        )
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
        seen.setdefault((record.model_fingerprint, record.model_dtype), record)
    return list(seen.values())


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


def evaluate_records(
    classifier,
    records: Iterable[AttributionRecord],
    settings: EvalSettings = EvalSettings(),
    library=None,
    kendall: bool = False,
    batch_size: int = 64,
    source: str = "<records>",
    progress: Callable[[int], None] | None = None,
    bootstrap: BootstrapSettings = BootstrapSettings(),
    loo: LeaveOneOut | None = None,
) -> EvaluationReport:
    """Perturbation curves (and Kendall-τ with ``kendall``) of ``records``, per method and settings,
    each mean with its bootstrap interval over inputs (``bootstrap``; 0 resamples: none).

    ``records`` may be a stream: it is read and evaluated :data:`CHUNK` records at a time.
    ``loo``: leave-one-out drops kept from an earlier call (same classifier and perturbation), so
    evaluating methods one call at a time predicts each input's single-token perturbations once;
    it is filled in place (made with ``LeaveOneOut(settings.perturb, None)``, it takes the
    replacement token and the model from the first call).
    """
    from ..attribution.pipeline import reattribute_records  # the use case sits above explain
    from ..models import predictor, resolve_forward_dtype
    from ..models.precision import on_classifier

    settings = on_classifier(settings, classifier)

    def aligned(chunk: list[AttributionRecord]) -> list[AttributionRecord]:
        """Other tools' maps (no token ids) on this model's tokens (evaluation.elsewhere)."""
        return [align(r, classifier, f"{source}:{r.line}") if made_elsewhere(r) else r for r in chunk]

    if isinstance(records, Sequence):  # all at hand: judged whole before any work (a file's caller does it)
        foreign = next((r for r in records if made_elsewhere(r)), None)
        if kendall and foreign is not None:
            raise BadInput(f"{source}: record id {foreign.id!r} was made elsewhere (no token ids): `kendall` explains "
                           "each record again by its own method, which it does not name")
        records = aligned(list(records))
        check_explained(records, source)
        check_against_model(first_of_each_model(records), classifier, source)
        check_records(records, classifier.model.get_input_embeddings().num_embeddings, classifier.num_classes, source)
    pending = iter(records)
    first = next(pending, None)
    pending = itertools.chain([first] if first is not None else [], pending)
    pairs = first is not None and first.pair is not None
    if pairs:
        classifier = classifier.paired()  # perturbed pairs keep their segment ids (models.segments)
    forward_dtype = resolve_forward_dtype(settings.forward_dtype)
    predict = predictor(classifier, batch_size, forward_dtype)
    mask_id = replacement_id(settings.perturb, classifier.tokenizer, classifier.pad_id)
    labels = MethodLabels()
    precision = str(forward_dtype or classifier.dtype)
    if not settings.loo:
        loo = None
    elif loo is None:
        loo = LeaveOneOut(settings.perturb, mask_id, classifier.fingerprint, precision)  # drops shared by the methods
    else:
        shared_loo(loo, settings.perturb, mask_id, classifier.fingerprint, precision)
    tallies: dict[str, CurveTally] = {}
    taus: dict[str, tuple[list[float], list[float]]] = {}
    count = truncated = 0
    elsewhere = 0
    while chunk := list(itertools.islice(pending, CHUNK)):
        check_one_kind(chunk, pairs, source)
        chunk = aligned(chunk)
        elsewhere += sum(r.settings.get("made_elsewhere") is True for r in chunk)
        check_explained(chunk, source)
        check_against_model(chunk, classifier, source)
        mark_special_tokens(chunk, classifier.tokenizer.all_special_ids)
        count += len(chunk)
        truncated += sum(r.truncated for r in chunk)
        for name, group in labels.group(chunk).items():
            if name not in tallies:
                tallies[name] = CurveTally(name, settings, classifier.label_names, mask_id, source, loo)
                first = group[0]
                tallies[name].report.provenance = {
                    "method_name": first.method, "settings": first.settings, "library": first.library,
                    "model_fingerprint": first.model_fingerprint,
                }
            tally = tallies[name]
            used = tally.add(group, predict)
            if kendall and used:
                found = kendall_for_records(
                    used,
                    classifier.num_classes,
                    lambda recs, targets: reattribute_records(
                        classifier, recs, targets, library, max(1, batch_size // 4), source
                    ),
                )
                index_taus, score_taus = taus.setdefault(name, ([], []))
                index_taus.extend(found.index_taus)
                score_taus.extend(found.score_taus)
        if progress is not None:
            progress(count)
    if not count:
        raise BadInput(f"{source}: no attribution records")
    if not any(tally.report.evaluated for tally in tallies.values()):
        short = sum(t.report.skipped_short for t in tallies.values())
        special = sum(t.report.skipped_special for t in tallies.values())
        raise BadInput(
            f"{source}: none of its {count} record(s) could be evaluated ({short} shorter than `min_tokens` "
            f"{settings.min_tokens}, {special} only special tokens): nothing to report"
        )
    reports: dict[str, MethodReport] = {}
    for name, tally in tallies.items():
        report = tally.finish()  # variants of one method are told apart by their label
        if kendall:
            report.kendall = Kendall.of(*taus.get(name, ([], [])))
        report.add_intervals(bootstrap)
        reports[name] = report
    return EvaluationReport(
        source=source,
        model=classifier.name,
        model_fingerprint=classifier.fingerprint,
        records=count,
        settings=settings,
        truncated=truncated,
        made_elsewhere=elsewhere,
        methods=reports,
        kendall=kendall,
        num_classes=classifier.num_classes,
        bootstrap=bootstrap,
    )
