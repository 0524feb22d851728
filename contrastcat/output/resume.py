"""Which inputs a checkpoint already holds, for ``explain --resume``.

A line is kept only when it is the record this run would write at that
place: a valid record (the check every record file gets), written the way
contrastcat writes records, for the same input (id, text, label, tokens),
method and settings, model (as named, and its weights), library and target
rule; its digest in the checkpoint (see :mod:`contrastcat.output.checkpoint`) vouches
that what this run cannot recompute without the work (scores, probabilities)
is what was written. Anything else is refused, not silently mixed in. The
kept part is cut back to a whole window of inputs, so the batches formed
after it are the ones an uninterrupted run forms, and the finished file is
byte for byte the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..attribution.pairs import tokenize_rows
from ..attribution.pipeline import ExplainSettings, record_settings
from ..attribution.targets import Target
from ..errors import BadInput
from ..spec import Names, backticked
from ..io import jsonl
from ..methods import AttributionMethod
from ..models import Classifier
from ..models.loading import check_max_length
from ..models.tokens import TokenizedText
from ..records.evidence import written_spans
from ..records.inputs import InputRow
from ..records.record import AttributionRecord, check_record
from .checkpoint import checkpointed_output, partial_path, recorded_run, run_digest
from .identity import environment


@dataclass(frozen=True)
class Resumed:
    inputs: int  # inputs whose records are kept (all methods, and with all-active all labels)
    truncated: int  # of those, inputs that were cut to the length limit
    records: int  # their records: the lines kept


def early_header(batch_size: int, window: int = ExplainSettings.window) -> dict:
    """What of :meth:`Run.header` is known before the model loads: a checkpoint made with other
    values is refused before any work."""
    return environment(batch_size, window)


@dataclass(frozen=True)
class Run:
    """What an explain run writes, record by record: enough to recognise its records."""

    rows: Sequence[InputRow]
    methods: Sequence[AttributionMethod]
    classifier: Classifier
    library: object | None
    target: Target
    options: ExplainSettings
    source: str = "<input>"
    named: Names = backticked  # how the caller spells an option, for what a kept checkpoint says

    def header(self) -> dict:
        """What its records do not show but what changes their last digits: a checkpoint
        made under other values would not continue into the same bytes."""
        return environment(self.options.batch_size, self.options.window, self.classifier.device.type)

    def expected(self, row: InputRow, method: AttributionMethod, text: TokenizedText) -> dict:
        """The fields of the record this run writes for ``row`` and ``method`` that are known
        without computing it (all but the scores, probabilities and what follows from them)."""
        classifier = self.classifier
        return {
            "id": row.id,
            "text": row.text,
            "label": row.label,
            "method": method.name,
            "settings": record_settings(method, self.options),
            **classifier.identity(),
            "library": self.library.fingerprint if self.library is not None and method.uses_library else None,
            "token_ids": list(text.ids),
            "tokens": list(text.tokens),
            "offsets": [list(span) for span in text.offsets],
            "special": list(text.special),
            "truncated": text.truncated,
            "tokens_dropped": text.dropped,
            "pad_token_id": classifier.pad_id,
            "pair": row.pair,
            "evidence": None if row.evidence is None else written_spans(row.evidence),
            "segments": None if text.segments is None else list(text.segments),
        }


def completed_inputs(lines: Sequence[bytes], run: Run, where: Path, first_line: int = 1) -> Resumed:
    """How many leading inputs ``lines`` (read from ``where``, starting at line ``first_line``)
    holds whole; raises :class:`BadInput` on a line this run would not have written. An input's
    records are one per method, and with all-active that for each label its records' written
    probabilities name (the digest vouches for those), in label order."""
    per_input = len(run.methods)
    all_active = run.target.per_label
    most = len(lines) // per_input  # each input has at least one record per method
    if most > len(run.rows) and not all_active:
        raise BadInput(
            f"{where}: holds records for {most} inputs, but this run has {len(run.rows)}; delete it to start over"
        )
    limit = check_max_length(run.classifier, run.options.max_length)
    classifier = run.classifier.paired() if run.rows and run.rows[0].pair is not None else run.classifier
    texts = tokenize_rows(classifier, run.rows[: min(most, len(run.rows))], limit, run.source)
    sizes: list[int] = []  # each whole input's records
    position = 0
    for index, text in enumerate(texts):
        row = run.rows[index]
        labels = None
        if all_active:
            if position == len(lines):
                break
            first = _valid_record(lines[position], f"{where}:{first_line + position}")
            labels = run.target.written_labels(first, len(run.classifier.label_names))
        size = per_input * (len(labels) if labels is not None else 1)
        if position + size > len(lines):
            break
        for offset in range(size):
            number = position + offset
            line = f"{where}:{first_line + number}"
            record = _valid_record(lines[number], line)
            expected = run.expected(row, run.methods[offset % per_input], text)
            differs = next((key for key, value in expected.items() if not _same(record.get(key), value)), None)
            now = None  # the value this run would write, where the check knows it
            if differs is None and all_active:
                if labels is None:
                    differs = "probs"  # not a model's probabilities: no labels to tell from them
                elif not (_same(record.get("probs"), first.get("probs")) and _same(record.get("predicted"), first.get("predicted"))):
                    differs = "probs"  # every record of an input carries its one pass's probabilities
                else:
                    differs, now = _target_difference(record, labels[offset // per_input], run.classifier.label_names)
            if differs is None and not all_active and not run.target.explains(
                record, row, run.classifier.label_names, f"{run.source}:{row.line}"
            ):
                # pred: the class this run would explain is not known without the model's pass
                want = _wanted(row, run.target, run.classifier.label_names, f"{run.source}:{row.line}")
                differs, now = _target_difference(record, want, run.classifier.label_names) if want is not None else (None, None)
                differs = differs or "target"
            if differs is None and ("words" in record) != run.options.words:
                differs = "words"  # written with --words, or without it
            if differs is not None:
                raise BadInput(
                    f"{line}: this record was not made by this run (its {differs} differs from input "
                    f"{run.source}:{row.line} with these options"
                    f"{_values(record.get(differs), expected.get(differs, now)) if differs in expected or now is not None else ''}); "
                    "delete the file to start over"
                )
        sizes.append(size)
        position += size
    whole = len(sizes)
    if whole == len(run.rows) and position < len(lines):
        raise BadInput(
            f"{where}: holds more records than this run's {len(run.rows)} inputs have; delete it to start over"
        )
    if whole < len(run.rows):
        whole -= whole % run.options.window_inputs  # resume at a window boundary: same batches as an unbroken run
    return Resumed(whole, sum(t.truncated for t in texts[:whole]), sum(sizes[:whole]))


def _same(found, expected) -> bool:
    """Equal as written: 1 and 1.0, or 1 and true, are equal in Python but not in the file."""
    return found == expected and jsonl.dumps(found) == jsonl.dumps(expected)


def _valid_record(raw: bytes, line: str) -> dict:
    """The record on ``raw``, after the check every record file gets, written as contrastcat writes it."""
    try:
        record = jsonl.parse(raw.decode("utf-8"))
    except (UnicodeDecodeError, jsonl.NotStrictJSON) as error:
        raise BadInput(f"{line}: not a record ({error}); delete the file to start over") from None
    if not isinstance(record, dict):
        raise BadInput(f"{line}: not a record (expected a JSON object); delete the file to start over")
    checked = check_record(record, line)
    if checked.to_json().encode("utf-8") != raw:
        raise BadInput(
            f"{line}: not a record as contrastcat writes it (its fields, their order or spacing differ); "
            "delete the file to start over"
        )
    return record


def _values(found, expected) -> str:
    """Both values, where they are short enough to say."""
    shown = [repr(value) for value in (found, expected)]
    if any(isinstance(value, (list, dict)) for value in (found, expected)) or max(map(len, shown)) > 80:
        return ""
    return f": {shown[0]} there, {shown[1]} now"


def finished_output(path: str, run: Run, note: Callable[[str], None] | None = None) -> Resumed | None:
    """When no checkpoint is pending and ``path`` holds every record ``run`` would write, as this
    run published them (its extended attribute says so), what it holds (a finished job,
    resumed: nothing to do); else None, and the run writes it again."""
    output = Path(os.path.realpath(path))
    if partial_path(output).exists() or not output.is_file():
        return None
    try:
        content = output.read_bytes()
    except OSError:
        return None  # written again; a write that fails there says why
    *lines, tail = content.split(b"\n")
    if tail or (len(lines) != len(run.rows) * len(run.methods) and not run.target.per_label):
        return None
    try:
        kept = completed_inputs(lines, run, output)
    except BadInput:
        return None  # another run's output: this run replaces it, as a run without --resume would
    if kept.inputs != len(run.rows):
        return None
    recorded = recorded_run(output)
    if recorded == run_digest(run.header(), content):
        return kept
    if note is not None:
        why = (
            "the file system keeps no digest of it" if recorded is None
            else "it was changed since it was written, or made with other settings (its digest differs)"
        )
        note(f"{path}: cannot tell it holds this run's records unchanged ({why}); explaining the inputs again")
    return None


def write_resumable(
    output: str,
    run: Run,
    inputs: Sequence[str | None],
    records_from: Callable[[int], Iterable[AttributionRecord]],
    on_resume: Callable[[Resumed, str], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> None:
    """Write ``run``'s records to ``output`` through a checkpoint that an interrupted run left or
    this one starts: the lines this run would write are kept, ``records_from(n)`` gives the
    records from input n on, and the finished file replaces ``output``. An output that already
    holds the whole run, as this run published it, is left as it is. ``on_resume(kept, origin)``
    hears what was kept first ("output": all of it; "checkpoint": a part); ``note`` hears why a
    finished-looking output is written again."""
    finished = finished_output(output, run, note)
    if finished is not None:
        if on_resume:
            on_resume(finished, "output")
        return
    with checkpointed_output(output, run.header(), inputs, run.named) as checkpoint:
        kept = completed_inputs(checkpoint.lines, run, checkpoint.path)  # the record file: records from line 1
        checkpoint.keep(kept.records)
        if on_resume:
            on_resume(kept, "checkpoint")
        for record in records_from(kept.inputs):
            checkpoint.write(record.to_json())


def _target_difference(record: dict, label: int, label_names) -> tuple[str | None, object]:
    """Which of the record's target fields differs from explaining ``label``, and its value now."""
    if not _same(record.get("target"), label):
        return "target", label
    if record.get("target_name") != label_names[label]:
        return "target_name", label_names[label]
    return None, None


def _wanted(row: InputRow, target: Target, label_names, where: str) -> int | None:
    """The class a run of ``target`` explains for ``row``, where it is known without the model."""
    try:
        return target.fixed(row, label_names, where)
    except BadInput:  # a gold target's row without a usable label: said where it is read
        return None
