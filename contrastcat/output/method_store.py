"""Where compare keeps each method's records while it runs, and how long they took: in memory, or
resumable in a folder through explain's checkpoint (an interrupted comparison continues)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..attribution.pipeline import ExplainSettings
from ..attribution.targets import PREDICTED
from ..errors import BadInput
from ..io.files import TEMP_SUFFIX, PendingFile, folder_file_target
from ..models import Classifier
from ..records.inputs import InputRow
from ..records.record import AttributionRecord, RecordFile, write_records
from ..spec import Names, backticked
from .checkpoint import digests_path, partial_path
from .resume import Resumed, Run, finished_output, write_resumable


class MethodStore:
    """Where :func:`compare` keeps each method's records, and how long they took."""

    def explained(self, number: int, method, rows: Sequence[InputRow],
                  records_from: Callable[[int], Iterable[AttributionRecord]]) -> tuple[list[AttributionRecord], float, int]:
        """The ``number``-th method's records of ``rows`` (``records_from(n)``: those of rows n
        on, as explain makes them), its seconds per input and how many inputs that was measured on."""
        raise NotImplementedError

    def check(self, methods: Sequence, rows: Sequence[InputRow]) -> None:
        """Before any work: what is kept from an earlier run is this run's (else :class:`BadInput`)."""


class InMemory(MethodStore):
    def explained(self, number, method, rows, records_from):
        began = time.perf_counter()
        found = list(records_from(0))
        return found, (time.perf_counter() - began) / len(rows), len(rows)


WORK = "work"  # the folder, inside the output folder, of a resumable comparison's records


@dataclass
class ResumableFolder(MethodStore):
    """Each method's records in ``<folder>/work/NN.jsonl``, written through explain's checkpoint
    (the records an interrupted run kept are checked as explain --resume checks them, and the
    finished file is the same, byte for byte), and its time in ``NN.seconds.json``. The time of
    a method an interrupted run began is measured on the inputs this run explains."""

    folder: str
    classifier: Classifier
    library: object | None
    settings: ExplainSettings
    inputs: Sequence[str | None]
    source: str = "<input>"
    named: Names = backticked
    notify: Callable[[str], None] | None = None
    kept: list[str] = field(default_factory=list)  # what each method kept, for the message

    @property
    def work(self) -> str:
        return os.path.join(self.folder, WORK)

    def paths(self, number: int) -> tuple[str, str]:
        stem = os.path.join(self.work, f"{number + 1:02d}")
        return f"{stem}.jsonl", f"{stem}.seconds.json"

    def run(self, method, rows: Sequence[InputRow]) -> Run:
        return Run(rows, [method], self.classifier, self.library if method.uses_library else None, PREDICTED,
                   self.settings, self.source, self.named)

    def check(self, methods, rows):
        for number, method in enumerate(methods):
            self._finished(number, self.run(method, rows))

    def _finished(self, number: int, run: Run) -> Resumed | None:
        """What the method's finished file holds, None where it has none; another run's is refused."""
        path = self.paths(number)[0]
        finished = finished_output(path, run)
        if finished is None and os.path.lexists(path):
            raise BadInput(
                f"{path}: holds records another comparison made (other inputs, methods, options or model), or "
                f"was changed: continue that one with its own options, or remove {self.work} to start again"
            )
        return finished

    def explained(self, number, method, rows, records_from):
        path, timing = self.paths(number)
        os.makedirs(self.work, exist_ok=True)
        run = self.run(method, rows)
        finished = self._finished(number, run)
        seconds = _seconds(timing) if finished is not None else None
        if seconds is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(timing)  # a time is kept only beside the records it measured
            kept: list[int] = []
            began = time.perf_counter()
            write_resumable(path, run, self.inputs, records_from, lambda found, origin: kept.append(found.inputs),
                            self.notify)
            elapsed, count = time.perf_counter() - began, len(rows) - kept[0]
            if count == 0:  # every record was kept, but not how long they took: made again, timed
                began = time.perf_counter()
                write_records(path, records_from(0), self.inputs)
                elapsed, count = time.perf_counter() - began, len(rows)
            seconds = (elapsed / count, count)
            _write_in_folder(timing, json.dumps({"seconds_per_input": seconds[0], "inputs": seconds[1]}) + "\n",
                             self.inputs)
            if kept[0]:
                self.kept.append(f"{method.name}: {kept[0]} of {len(rows)} inputs kept")
        else:
            self.kept.append(f"{method.name}: all {len(rows)} inputs kept")
        return list(RecordFile(path).records()), seconds[0], seconds[1]

    def keeps_records(self, methods: int) -> bool:
        """Whether the work folder holds a record of some method: a finished file, or a checkpoint
        with a record written (one holding only its header keeps nothing to continue from)."""
        for number in range(methods):
            finished = Path(self.paths(number)[0])
            partial = partial_path(finished)
            if finished.exists() or (partial.exists() and partial.stat().st_size > 0):
                return True
        return False

    def clear(self, methods: int) -> None:
        """The finished run's work files, once records.jsonl holds them all; the folder too
        when nothing else is in it."""
        for number in range(methods):
            for path in self.paths(number):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(self.work)


def _write_in_folder(path: str, text: str, inputs: Sequence[str | None]) -> None:
    """``text`` as the file ``path`` of a folder compare fills: whole or not at all, and onto the
    name itself (a link made there meanwhile is replaced, never written through)."""
    pending = PendingFile(folder_file_target(path, inputs))
    try:
        with open(pending.temp, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        pending.commit()
    finally:
        pending.discard()


def _seconds(path: str) -> tuple[float, int] | None:
    """A finished method's time, as its run wrote it; None where it is missing or not its form."""
    try:
        with open(path, encoding="utf-8") as stream:
            found = json.load(stream)
        seconds, inputs = found["seconds_per_input"], found["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        return None
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        return None
    return float(seconds), inputs


def check_work_folder(folder: str, methods: int, named: Names = backticked) -> None:
    """Before any work: ``<folder>/work`` holds only what a resumable comparison writes there
    (it is cleared when the run is done; another file there is the user's, never touched)."""
    work = os.path.join(folder, WORK)
    if not os.path.lexists(work):
        return
    if os.path.islink(work) or not os.path.isdir(work):
        raise BadInput(f"{work}: not a folder (compare keeps an unfinished run's records there)")
    ours = set()
    for number in range(max(methods, 99)):
        stem = f"{number + 1:02d}"
        records = Path(work) / f"{stem}.jsonl"
        partial = partial_path(records)
        ours |= {records.name, f"{stem}.seconds.json", partial.name, digests_path(partial).name}
    names = sorted(os.listdir(work))
    foreign = [name for name in names if name not in ours and not name.endswith(TEMP_SUFFIX)]
    if foreign:
        raise BadInput(f"{work}: holds {foreign[0]!r}, which compare did not write: move it, or write the "
                       f"comparison elsewhere with {named('output')}")
    linked = next((name for name in names if os.path.islink(os.path.join(work, name))), None)
    if linked is not None:  # compare never makes one: following it would write a method's records elsewhere
        raise BadInput(f"{os.path.join(work, linked)}: a symbolic link, which compare did not make: remove it, "
                       f"or write the comparison elsewhere with {named('output')}")
