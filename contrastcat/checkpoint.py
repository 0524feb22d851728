"""A checkpointed output, for ``explain --resume``.

Lines go to ``.NAME.contrastcat-partial`` beside the output NAME and are
flushed as they are written; the file is renamed to NAME when the run
completes. A run that is interrupted (Ctrl-C, a crash, SIGKILL) leaves it
there, and the next run with ``--resume`` continues it: the complete lines it
keeps stay byte for byte, the rest is appended. When there is no checkpoint,
a ``--resume`` run starts from what a killed run without ``--resume`` left
(its temporary file), else from NAME itself when it exists, so resuming a
finished job recomputes nothing. An exclusive lock keeps two runs off one output.

Which lines are kept is the caller's decision (:meth:`Checkpoint.keep`): it
knows what they must hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from .errors import BadInput, Interrupted
from .files import OutputTarget, new_file_mode, output_target, stale_temporaries, write_failed

PARTIAL_SUFFIX = ".contrastcat-partial"


def partial_path(path: Path) -> Path:
    return path.parent / f".{path.name}{PARTIAL_SUFFIX}"


class Checkpoint:
    """The lines a run starts from, and the stream it appends to."""

    def __init__(self, target: OutputTarget, handle, origin: str) -> None:
        self.target = target
        self.path = partial_path(target.path)
        self.origin = origin  # what the lines came from: checkpoint, interrupted run, output, or nothing
        self._handle = handle
        content = handle.read()
        pieces = content.split(b"\n")
        self.lines: list[bytes] = pieces[:-1]  # the last piece is empty or an unfinished line
        self.written = len(self.lines)  # complete lines in the file now
        self.appended = 0  # lines this run wrote

    @property
    def disposable(self) -> bool:
        """Nothing here that exists nowhere else: the file can go if the run fails."""
        return self.appended == 0 and self.origin in ("nothing", "output")

    def keep(self, count: int) -> None:
        """Keep the first ``count`` complete lines, drop everything after them."""
        count = min(count, len(self.lines))
        size = sum(len(line) + 1 for line in self.lines[:count])
        self._handle.seek(size)
        self._handle.truncate()
        self.lines = self.lines[:count]
        self.written = count

    def write(self, line: str) -> None:
        """Append one line and flush it: a kill loses at most the line being written."""
        try:
            self._handle.write(line.encode("utf-8") + b"\n")
            self._handle.flush()
        except OSError as error:
            raise write_failed(self.target, error) from None
        self.written += 1
        self.appended += 1


@contextlib.contextmanager
def checkpointed_output(path: str, inputs: Sequence[str | None] = ()) -> Iterator[Checkpoint]:
    """A :class:`Checkpoint` for ``path``; renamed into place when the block completes,
    kept (and said so) when it is interrupted or fails."""
    target = output_target(path, inputs)
    if target.is_stdout or target.in_place:
        raise BadInput(f"--resume needs -o FILE, a regular file to continue (got {path})")
    partial = partial_path(target.path)
    descriptor = os.open(partial, os.O_RDWR | os.O_CREAT, 0o600)
    handle = os.fdopen(descriptor, "r+b")
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise BadInput(f"{path}: another contrastcat run is writing it (it holds the lock on {partial.name})") from None
    try:
        os.fchmod(descriptor, new_file_mode(target.path))
        origin = _fill(handle, target)
        checkpoint = Checkpoint(target, handle, origin)
    except BaseException:
        handle.close()
        raise
    try:
        yield checkpoint
        handle.flush()
        os.fsync(descriptor)
        os.replace(partial, target.path)
        handle.close()
    except OSError as error:
        handle.close()
        raise write_failed(target, error) from None
    except KeyboardInterrupt:
        handle.close()
        if checkpoint.disposable:
            partial.unlink(missing_ok=True)
            raise
        raise Interrupted(
            f"interrupted; {checkpoint.written} line(s) kept in {partial}: "
            "run the same command with --resume to continue"
        ) from None
    except BaseException:
        handle.close()
        if checkpoint.disposable:
            partial.unlink(missing_ok=True)  # nothing to resume from: leave nothing behind
        raise


def _fill(handle, target: OutputTarget) -> str:
    """Start an empty checkpoint from a killed run's temporary file, else from the output."""
    handle.seek(0, os.SEEK_END)
    if handle.tell() > 0:
        handle.seek(0)
        return "checkpoint"
    stale = stale_temporaries(target.path)
    source, origin = None, "nothing"
    if stale:
        source, origin = max(stale, key=lambda p: p.stat().st_size), "interrupted run"
    elif target.path.is_file():
        source, origin = target.path, "output"
    if source is not None:
        with open(source, "rb") as stream:
            shutil.copyfileobj(stream, handle)
        handle.flush()
    for each in stale:
        each.unlink(missing_ok=True)
    handle.seek(0)
    return origin
