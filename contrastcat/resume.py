"""Which inputs a checkpoint already holds, for ``explain --resume``.

A line is kept only when it is the record this run would write at that
place: the same input (id, text, tokens), method and settings, model
weights, library and target rule. Anything else is refused, not silently
mixed in. The kept part is cut back to a whole window of inputs, so the
batches formed after it are the ones an uninterrupted run forms, and the
finished file is byte for byte the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from . import __version__, jsonl
from .checkpoint import checkpointed_output, partial_path
from .errors import BadInput
from .pipeline import GOLD, PRED, ExplainOptions, check_max_length, record_settings
from .methods import AttributionMethod
from .models import Classifier
from .records import AttributionRecord, InputRow, resolve_label
from .tokens import tokenize


@dataclass(frozen=True)
class Resumed:
    inputs: int  # inputs whose records are kept (all methods)
    truncated: int  # of those, inputs that were cut to the length limit


@dataclass(frozen=True)
class Run:
    """What an explain run writes, record by record: enough to recognise its records."""

    rows: Sequence[InputRow]
    methods: Sequence[AttributionMethod]
    classifier: Classifier
    library: object | None
    target: str | int
    options: ExplainOptions
    source: str = "<input>"

    def header(self) -> dict:
        """What its records do not show but what changes their last digits: a checkpoint
        made under other values would not continue into the same bytes."""
        return {
            "batch_size": self.options.batch_size,
            "window": self.options.window,
            "contrastcat": __version__,
            "torch": torch.__version__,
            "device": self.classifier.device.type,
        }

    def expected(self, row: InputRow, method: AttributionMethod, token_ids: list[int]) -> dict:
        """The fields of the record this run writes for ``row`` and ``method`` that identify it."""
        return {
            "id": row.id,
            "text": row.text,
            "method": method.name,
            "settings": record_settings(method, self.options),
            "model_fingerprint": self.classifier.fingerprint,
            "library": self.library.fingerprint if self.library is not None and method.uses_library else None,
            "token_ids": token_ids,
        }


def completed_inputs(lines: Sequence[bytes], run: Run, where: Path, first_line: int = 1) -> Resumed:
    """How many leading inputs ``lines`` (read from ``where``, starting at line ``first_line``)
    holds whole; raises :class:`BadInput` on a line this run would not have written."""
    per_input = len(run.methods)
    whole = len(lines) // per_input
    if whole > len(run.rows):
        raise BadInput(
            f"{where}: holds records for {whole} inputs, but this run has {len(run.rows)}; delete it to start over"
        )
    limit = check_max_length(run.classifier, run.options.max_length)
    texts = tokenize(run.classifier.tokenizer, [row.text for row in run.rows[:whole]], limit, run.classifier.empty_input)
    for number, raw in enumerate(lines[: whole * per_input]):
        index, position = divmod(number, per_input)
        row, line = run.rows[index], f"{where}:{first_line + number}"
        try:
            record = jsonl.parse(raw.decode("utf-8"))
        except (UnicodeDecodeError, jsonl.NotStrictJSON) as error:
            raise BadInput(f"{line}: not a record ({error}); delete the file to start over") from None
        expected = run.expected(row, run.methods[position], list(texts[index].ids))
        differs = [key for key, value in expected.items() if not isinstance(record, dict) or record.get(key) != value]
        if not differs and not _target_matches(record, row, run.target, run.classifier.label_names, f"{run.source}:{row.line}"):
            differs = ["target"]
        if differs:
            raise BadInput(
                f"{line}: this record was not made by this run (its {differs[0]} differs from input "
                f"{run.source}:{row.line} with these options); delete the file to start over"
            )
    if whole < len(run.rows):
        whole -= whole % run.options.window_inputs  # resume at a window boundary: same batches as an unbroken run
    return Resumed(whole, sum(t.truncated for t in texts[:whole]))


def finished_output(path: str, run: Run) -> Resumed | None:
    """When no checkpoint is pending and ``path`` already holds every record ``run``
    would write, what it holds (a finished job, resumed: nothing to do); else None."""
    output = Path(path)
    if partial_path(output).exists() or not output.is_file():
        return None
    *lines, tail = output.read_bytes().split(b"\n")
    if tail or len(lines) != len(run.rows) * len(run.methods):
        return None
    try:
        kept = completed_inputs(lines, run, output)
    except BadInput:
        return None  # another run's output: this run replaces it, as a run without --resume would
    return kept if kept.inputs == len(run.rows) else None


def write_resumable(
    output: str,
    run: Run,
    inputs: Sequence[str | None],
    records_from: Callable[[int], Iterable[AttributionRecord]],
    on_resume: Callable[[Resumed, str], None] | None = None,
) -> None:
    """Write ``run``'s records to ``output`` through a checkpoint that an interrupted run left or
    this one starts: the lines this run would write are kept, ``records_from(n)`` gives the
    records from input n on, and the finished file replaces ``output``. An output that already
    holds the whole run is left as it is. ``on_resume(kept, origin)`` hears what was kept
    first ("output": all of it; "checkpoint": a part)."""
    finished = finished_output(output, run)
    if finished is not None:
        if on_resume:
            on_resume(finished, "output")
        return
    with checkpointed_output(output, run.header(), inputs) as checkpoint:
        kept = completed_inputs(checkpoint.lines, run, checkpoint.path, first_line=2)  # line 1: the header
        checkpoint.keep(kept.inputs * len(run.methods))
        if on_resume:
            on_resume(kept, "checkpoint")
        for record in records_from(kept.inputs):
            checkpoint.write(record.to_json())


def _target_matches(record: dict, row: InputRow, target: str | int, label_names, where: str) -> bool:
    if target == PRED:
        return record.get("target") == record.get("predicted")
    if target == GOLD:
        return record.get("target") == resolve_label(row.label, label_names, where)
    return record.get("target") == int(target)
