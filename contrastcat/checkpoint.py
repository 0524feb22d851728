"""A checkpointed output, for ``explain --resume``.

Records go to ``.NAME.contrastcat-partial`` beside the output NAME, flushed
as they are written, after one header line that says how they were computed
(batch size, window, versions, device: what records do not show but what
changes their last digits). When the run completes the records (without the
header) become NAME, atomically. A run that is interrupted (Ctrl-C, a crash,
SIGKILL) leaves the checkpoint, and the next run with ``--resume`` continues
it: the lines it keeps stay byte for byte and the rest is appended. A
checkpoint made another way is refused, not mixed in. An exclusive lock keeps
two runs off one output.

Which lines are kept is the caller's decision (:meth:`Checkpoint.keep`): it
knows what they must hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from .errors import BadInput, Interrupted
from .files import OutputTarget, PendingFile, new_file_mode, output_target, remove_stale_temporaries, write_failed

PARTIAL_SUFFIX = ".contrastcat-partial"
HEADER_KEY = "contrastcat-checkpoint"


def partial_path(path: Path) -> Path:
    return path.parent / f".{path.name}{PARTIAL_SUFFIX}"


class Checkpoint:
    """The records a run starts from, and the stream it appends to."""

    def __init__(self, target: OutputTarget, handle, run: dict) -> None:
        self.target = target
        self.path = partial_path(target.path)
        self._handle = handle
        content = handle.read()
        if not content:
            header = json.dumps({HEADER_KEY: 1, **run}, sort_keys=True).encode() + b"\n"
            handle.write(header)
            handle.flush()
            content = header
        first, _, rest = content.partition(b"\n")
        self._check_header(first, run)
        self._start = len(first) + 1
        pieces = rest.split(b"\n")
        self.lines: list[bytes] = pieces[:-1]  # the last piece is empty or an unfinished line
        self.written = len(self.lines)  # complete records in the file now
        self.appended = 0  # records this run wrote

    def _check_header(self, first: bytes, run: dict) -> None:
        try:
            header = json.loads(first)
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get(HEADER_KEY) != 1:
            raise BadInput(f"{self.path}: not a contrastcat checkpoint; delete it to start over")
        for key, value in run.items():
            if header.get(key) != value:
                raise BadInput(
                    f"{self.path}: was made with {key} {header.get(key)!r}, this run has {value!r} "
                    "(its records would differ in the last digits); run with the same settings to continue "
                    "it, or delete it to start over"
                )

    def keep(self, count: int) -> None:
        """Keep the first ``count`` complete records, drop everything after them."""
        count = min(count, len(self.lines))
        size = self._start + sum(len(line) + 1 for line in self.lines[:count])
        self._handle.seek(size)
        self._handle.truncate()
        self.lines = self.lines[:count]
        self.written = count

    def write(self, line: str) -> None:
        """Append one record and flush it: a kill loses at most the record being written."""
        try:
            self._handle.write(line.encode("utf-8") + b"\n")
            self._handle.flush()
        except OSError as error:
            raise write_failed(self.target, error) from None
        self.written += 1
        self.appended += 1

    def publish(self) -> None:
        """The records, without the header, become the output: atomically, synced to disk."""
        pending = PendingFile(self.target)
        try:
            self._handle.flush()
            self._handle.seek(self._start)
            with open(pending.temp, "wb") as sink:
                shutil.copyfileobj(self._handle, sink)
            pending.commit()
        except OSError as error:
            pending.discard()
            raise write_failed(self.target, error) from None
        except BaseException:
            pending.discard()
            raise


@contextlib.contextmanager
def checkpointed_output(path: str, run: dict, inputs: Sequence[str | None] = ()) -> Iterator[Checkpoint]:
    """A :class:`Checkpoint` for ``path``, made (or continued) for a run described by
    ``run``; published when the block completes, kept (and said so) when it is
    interrupted or fails after writing records."""
    target = output_target(path, inputs)
    if target.is_stdout or target.in_place:
        raise BadInput(f"--resume needs -o FILE, a regular file to continue (got {path})")
    remove_stale_temporaries(target.path)
    partial = partial_path(target.path)
    existed = partial.exists()
    descriptor = os.open(partial, os.O_RDWR | os.O_CREAT, 0o600)
    handle = os.fdopen(descriptor, "r+b")
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise BadInput(f"{path}: another contrastcat run is writing it (it holds the lock on {partial.name})") from None
    checkpoint = None
    try:
        os.fchmod(descriptor, new_file_mode(target.path))
        checkpoint = Checkpoint(target, handle, run)
        yield checkpoint
        checkpoint.publish()
        partial.unlink()
        handle.close()
    except KeyboardInterrupt:
        handle.close()
        if checkpoint is None or checkpoint.written == 0:
            if not existed:
                partial.unlink(missing_ok=True)
            raise
        raise Interrupted(
            f"interrupted; {checkpoint.written} record(s) kept in {partial}: "
            "run the same command with --resume to continue"
        ) from None
    except BaseException:
        handle.close()
        if not existed and (checkpoint is None or checkpoint.written == 0):
            partial.unlink(missing_ok=True)  # nothing to resume from: leave nothing behind
        raise
