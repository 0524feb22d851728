"""Which inputs a checkpoint already holds, for ``explain --resume``.

A line is kept only when it is the record this run would write at that
place: the same input (id, text, tokens), method and settings, model
weights, library and target rule. Anything else is refused, not silently
mixed in. The kept part is cut back to a whole window of inputs, so the
batches formed after it are the ones an uninterrupted run forms, and the
finished file is byte for byte the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import jsonl
from .checkpoint import partial_path
from .errors import BadInput
from .explain import GOLD, PRED, ExplainOptions, check_max_length, record_settings
from .methods import AttributionMethod
from .models import Classifier
from .records import InputRow, resolve_label
from .tokens import tokenize


@dataclass(frozen=True)
class Resumed:
    inputs: int  # inputs whose records are kept (all methods)
    truncated: int  # of those, inputs that were cut to the length limit


def completed_inputs(
    lines: Sequence[bytes],
    rows: Sequence[InputRow],
    methods: Sequence[AttributionMethod],
    classifier: Classifier,
    library,
    target: str | int,
    options: ExplainOptions,
    checkpoint: Path,
    source: str = "<input>",
) -> Resumed:
    """How many leading inputs ``lines`` holds whole; raises :class:`BadInput` on a foreign line."""
    per_input = len(methods)
    whole = len(lines) // per_input
    if whole > len(rows):
        raise BadInput(
            f"{checkpoint}: holds records for {whole} inputs, but this run has {len(rows)}; "
            "delete it to start over"
        )
    texts = tokenize(classifier.tokenizer, [row.text for row in rows[:whole]], check_max_length(classifier, options.max_length))
    truncated = 0
    for number, raw in enumerate(lines[: whole * per_input], start=1):
        index, position = divmod(number - 1, per_input)
        method, row, text = methods[position], rows[index], texts[index]
        where = f"{checkpoint}:{number}"
        try:
            record = jsonl.parse(raw.decode("utf-8"))
        except (UnicodeDecodeError, jsonl.NotStrictJSON) as error:
            raise BadInput(f"{where}: not a record ({error}); delete the file to start over") from None
        expected = {
            "id": row.id,
            "text": row.text,
            "method": method.name,
            "settings": record_settings(method, options),
            "model_fingerprint": classifier.fingerprint,
            "library": library.fingerprint if library is not None and method.uses_library else None,
            "token_ids": list(text.ids),
        }
        differs = [key for key, value in expected.items() if not isinstance(record, dict) or record.get(key) != value]
        if not differs and not _target_matches(record, row, target, classifier.label_names, f"{source}:{row.line}"):
            differs = ["target"]
        if differs:
            raise BadInput(
                f"{where}: this record was not made by this run (its {differs[0]} differs from input "
                f"{source}:{row.line} with these options); delete the file to start over"
            )
        if position == 0 and record.get("truncated"):
            truncated += 1
    if whole < len(rows):
        whole -= whole % options.window_inputs  # resume at a window boundary: same batches as an unbroken run
        truncated = sum(t.truncated for t in texts[:whole])
    return Resumed(whole, truncated)


def finished_output(
    path: str,
    rows: Sequence[InputRow],
    methods: Sequence[AttributionMethod],
    classifier: Classifier,
    library,
    target: str | int,
    options: ExplainOptions,
    source: str = "<input>",
) -> Resumed | None:
    """When no checkpoint is pending and ``path`` already holds every record this run
    would write, what it holds (a finished job, resumed: nothing to do); else None."""
    output = Path(path)
    if partial_path(output).exists() or not output.is_file():
        return None
    *lines, tail = output.read_bytes().split(b"\n")
    if tail or len(lines) != len(rows) * len(methods):
        return None
    try:
        kept = completed_inputs(lines, rows, methods, classifier, library, target, options, output, source)
    except BadInput:
        return None  # another run's output: this run replaces it, as a run without --resume would
    return kept if kept.inputs == len(rows) else None


def _target_matches(record: dict, row: InputRow, target: str | int, label_names, where: str) -> bool:
    if target == PRED:
        return record.get("target") == record.get("predicted")
    if target == GOLD:
        return record.get("target") == resolve_label(row.label, label_names, where)
    return record.get("target") == int(target)
