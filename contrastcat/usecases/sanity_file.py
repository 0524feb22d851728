"""The sanity use case: records (from a file or in memory) -> the model-randomisation report,
written whole (or not at all) to ``output``, its cascade drawn to ``plot``; and the command's
options (``options.sanity``). The measure and the report are :mod:`contrastcat.evaluation.sanity`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..errors import BadInput
from ..evaluation.sanity import MethodSanity, SanityReport, spearman
from ..io.files import atomic_text_output, check_output_path, interrupted_after, output_name
from ..models.resolve import load_classifier, model_location
from ..records.record import AttributionRecord, RecordFile
from ..records.variants import MethodLabels
from .options.sanity import SanityOptions
from .checks import library_arg
from .elsewhere import made_elsewhere
from .evaluate_records import check_against_model, check_explained, check_one_kind


def sanity_file(chosen: SanityOptions) -> tuple[SanityReport, dict]:
    """``contrastcat sanity``: every record read and the outputs checked before the model loads."""
    notify = chosen.notify or (lambda line: None)
    path, library, outputs = chosen.records, chosen.library, (chosen.output, chosen.plot)
    for target in outputs:
        if target is not None:
            check_output_path(target, [path, library])
    # Every line checked as it streams before any is held: a bad line late in a large file is
    # refused at the memory of one record. The records are then held: each is explained again at
    # every step of the randomisation.
    source = RecordFile(path)
    try:
        source.check()
        found = list(source.records())
    finally:
        source.close()
    name = chosen.model or found[0].model
    if not name:
        raise BadInput(f"{path}:{found[0].line}: the record names no model: pass {chosen.bare('model')}")
    for target in outputs:
        if target is not None:
            check_output_path(target, [model_location(name)])
    classifier = load_classifier(name, chosen.device, progress=chosen.progress, notify=notify, dtype=chosen.dtype)
    report = sanity_check(classifier, found, library_arg("sanity_file", library), chosen, source=path)
    document = report.to_dict(chosen.per_input)
    written = _write(chosen, document, notify)
    if chosen.plot is not None:
        _draw(chosen, report, written, notify)
    return report, document


def _write(chosen: SanityOptions, document: dict, notify: Callable[[str], None]) -> str | None:
    """The JSON report, written whole or not at all; what it says it wrote, for Ctrl-C after."""
    if chosen.output is None:
        return None
    with atomic_text_output(chosen.output, [chosen.records, chosen.library]) as stream:
        stream.write(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    written = f"the report ({output_name(chosen.output)})"
    with interrupted_after(written):
        notify(f"wrote the sanity report to {output_name(chosen.output)}")
    return written


def _draw(chosen: SanityOptions, report: SanityReport, written: str | None, notify: Callable[[str], None]) -> None:
    from ..views.plots import plot_sanity

    with interrupted_after(written, f"the picture ({chosen.plot})"):
        plot_sanity(report, chosen.plot, [chosen.records, chosen.library])
    both = f"{written} and the picture ({chosen.plot})" if written else f"the picture ({chosen.plot})"
    with interrupted_after(both, plural=written is not None):
        notify(f"wrote the picture to {chosen.plot}")


def sanity_check(
    classifier, records: Sequence[AttributionRecord], library, chosen: SanityOptions, source: str = "<records>",
    last_only: bool = False,
) -> SanityReport:
    """Spearman ρ between each record's map and its method's map on each randomised copy of
    ``classifier`` (``chosen``: its seed, bootstrap, batch size and progress). ``last_only``: on
    the last copy alone, the whole model randomised (what passing is judged on): the same ρ as
    the whole cascade's last step, at a fraction of its cost."""
    from ..attribution.pipeline import prepare_reattribution
    from ..library.recapture import RecapturedLibrary
    from ..models.randomize import cascade_steps, randomised

    records = list(records)
    pairs = bool(records) and records[0].pair is not None
    check_one_kind(records, pairs, source)
    elsewhere = next((r for r in records if made_elsewhere(r)), None)
    if elsewhere is not None:
        raise BadInput(f"{source}:{elsewhere.line}: the sanity check runs each record's method again, and a record "
                       "made elsewhere (no token ids) names no method of contrastcat")
    check_explained(records, source)
    check_against_model(records, classifier, source, chosen.names)
    needing = next((r for r in records if r.library), None)
    if library is None and needing is not None:
        where = f"{source}:{needing.line}" if needing.line is not None else source
        raise BadInput(f"{where}: records of {needing.method} were made with a reference library: pass {chosen.bare('library')}")
    # A map needs two tokens to be ranked: inputs of fewer non-special tokens say nothing here.
    records = [r for r in records if sum(not flag for flag in r.special) >= 2]
    if not records:
        raise BadInput(f"{source}: no record has two or more non-special tokens: no map to correlate")
    labels = MethodLabels(source)
    grouped = labels.group(records)
    methods = {label: MethodSanity(label, group[0].method) for label, group in grouped.items()}
    # Each method rebuilt from its records' settings and checked once, on the model as it is: each
    # randomised copy has its layers, its precision and its library's references recaptured.
    paired = classifier.paired() if pairs else classifier
    again = {label: prepare_reattribution(paired, group, library, chosen.batch_size, source, chosen.names)
             for label, group in grouped.items()}
    steps: list[str] = []
    total = len(cascade_steps(classifier))
    # One copy randomised further at each step: each step is used before the next one is made.
    for done, (step, copy) in enumerate(randomised(classifier, chosen.seed)):
        if last_only and done + 1 < total:
            continue  # each copy is randomised further than the one before, whether it is used or not
        steps.append(step.name)
        copy = copy.paired() if pairs else copy
        references = RecapturedLibrary(library, copy) if library is not None else None
        for label, group in grouped.items():
            scores = again[label].scores(copy, group, [r.target for r in group], references)
            methods[label].rho[step.name] = [
                spearman(*_non_special(record, new)) for record, new in zip(group, scores)
            ]
        if chosen.progress is not None:
            chosen.progress("randomising", done + 1, total)
    report = SanityReport(
        model=classifier.name, model_fingerprint=classifier.fingerprint, seed=chosen.seed, steps=steps, methods=methods,
        inputs=len({(r.id, tuple(r.token_ids)) for r in records}), bootstrap=chosen.intervals,
    )
    report.add_intervals()
    return report


def _non_special(record: AttributionRecord, new: Sequence[float]) -> tuple[list[float], list[float]]:
    keep = [i for i, flag in enumerate(record.special) if not flag]
    return [record.scores[i] for i in keep], [new[i] for i in keep]
