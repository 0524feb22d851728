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


# An error line this long quotes data (what the caller gave) at length: its start and end say enough.
ERROR_LINE = 2000


def bounded(text: str, limit: int = ERROR_LINE) -> str:
    """``text`` no longer than ``limit`` characters: the middle left out, and said so."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]} … ({len(text) - 2 * keep} characters left out) … {text[-keep:]}"


def say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def say_interrupted() -> None:
    say("error: interrupted")


CLOSED_BY_CALLER = "it was closed by the caller"


def interrupt_within(error: BaseException) -> bool:
    """Whether ``error`` stands for a Ctrl-C or SIGTERM: Python wraps an exception raised where it
    cannot pass through (a signal landing while a dataclass is being made, mid-import, arrives as
    a RuntimeError whose cause is the KeyboardInterrupt)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


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


_FAILED_HERE = "contrastcat_standard_output"  # set on an OSError that writing standard output raised


def is_stdout_failure(error: BaseException) -> bool:
    """An error of writing standard output: closed by the shell (``>&-``), or a full disk or a
    failing device behind ``> file`` (raised through :class:`MarkedStdout`)."""
    return is_closed_stdout(error) or (isinstance(error, OSError) and getattr(error, _FAILED_HERE, False))


class MarkedStdout:
    """Standard output, marking the errors its writes raise, so that a full disk under any command
    (its table, its JSON, a completion script) is said as "cannot write to standard output",
    not as an unforeseen OSError. A closed pipe (EPIPE) is left as it is: the CLI exits quietly."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._marked(self._stream.write, text)

    def flush(self) -> None:
        self._marked(self._stream.flush)

    @staticmethod
    def _marked(action, *args):
        try:
            return action(*args)
        except BrokenPipeError:
            raise
        except OSError as error:
            setattr(error, _FAILED_HERE, True)
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


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
