"""Exit codes and the process's signal and stream handling, shared by the launcher and the commands.

Below every other CLI module (the launcher installs these handlers, the commands check them),
and free of Typer, Rich and the model libraries, so it is ready before they are imported.
"""

from __future__ import annotations

import errno
import os
import sys

INTERRUPTED = 130
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool killed by a closed pipe


_received: list[int] = []  # signals that asked us to stop; process-wide by nature


def stop(signum, frame) -> None:
    # SIGTERM unwinds like Ctrl-C, so temporary output files are removed on the way out.
    _received.append(signum)
    raise KeyboardInterrupt


def quiet_unraisable(hook):
    """A KeyboardInterrupt raised while Python runs a finaliser (``__del__``, a weakref
    callback) is printed as "Exception ignored" and lost; it is remembered in
    ``_received`` instead, and :func:`stop_if_interrupted` acts on it."""

    def handle(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)

    return handle


def stop_if_interrupted() -> None:
    """Raise the interrupt a finaliser swallowed; long work calls this between steps."""
    if _received:
        _received.clear()
        raise KeyboardInterrupt


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def say_interrupted() -> None:
    say("error: interrupted")


CLOSED_BY_CALLER = "it was closed by the caller"


def is_closed_stdout(error: BaseException) -> bool:
    """The error of writing to a standard output the shell closed (``>&-``): the user's doing, said
    in one line, never a bug's traceback."""
    return isinstance(error, OSError) and error.args == (errno.EBADF, CLOSED_BY_CALLER)


class ClosedStream:
    """Standard output when the shell closed it (``>&-``): writing there is an error, as for any
    tool; a run that writes elsewhere is not hurt by it."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, CLOSED_BY_CALLER)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it was closed by the caller")


class BestEffort:
    """Standard error that never fails the run: a closed or full stderr (``2>&-``,
    ``2>/dev/full``) loses the messages, never the exit code."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text) if self._stream is not None else len(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        try:
            if self._stream is not None:
                self._stream.flush()
        except (OSError, ValueError):
            pass

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name):
        return getattr(self._stream, name)
