"""The console script's entry point: signals first, then the app.

Everything here runs before Typer, Rich or the model libraries are imported, so a Ctrl-C or
SIGTERM at any moment after the interpreter has started (even during those
imports, which take a good part of a second) ends in one line and exit 130,
never a traceback. A closed pipe downstream (``| head``) ends quietly with
141, as it does for other Unix tools.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

from . import _early_stop

INTERRUPTED = 130
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool killed by a closed pipe


_received: list[int] = []  # signals that asked us to stop; process-wide by nature


def _stop(signum, frame) -> None:
    # SIGTERM unwinds like Ctrl-C, so temporary output files are removed on the way out.
    _received.append(signum)
    raise KeyboardInterrupt


def _unraisable(hook):
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


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _say_interrupted() -> None:
    _say("error: interrupted")


class _Closed:
    """Standard output when the shell closed it (``>&-``): writing there is an error, as for any
    tool; a run that writes elsewhere is not hurt by it."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it was closed by the caller")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it was closed by the caller")


class _BestEffort:
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


def main() -> None:
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, _early_stop):
        signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _early_stop):  # not when the shell ignores it
        signal.signal(signal.SIGINT, _stop)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    sys.stderr = _BestEffort(sys.stderr)
    if sys.stdout is None:
        sys.stdout = _Closed()
    try:
        code = _run()
        sys.stdout.flush()
    except KeyboardInterrupt:
        _say_interrupted()
        code = INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        code = BROKEN_PIPE
    except OSError as error:  # standard output closed (>&-) under --help, --version or a table
        _say(f"error: cannot write to standard output ({error.strerror})")
        code = 1
    # The work is over and its exit code decided: a late Ctrl-C must not turn it into a kill.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    sys.exit(code)


def _click_exceptions() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(Abort types, ClickException types): Typer may vendor its own copy of Click
    (``typer._click``), whose exceptions are not the ``click`` package's."""
    import click

    aborts, errors = [click.exceptions.Abort], [click.exceptions.ClickException]
    try:
        from typer._click import exceptions as vendored
    except ImportError:
        pass
    else:
        aborts += [vendored.Abort] if hasattr(vendored, "Abort") else []
        errors.append(vendored.ClickException)
    return tuple(aborts), tuple(errors)


def _run() -> int:
    from .app import app

    aborts, errors = _click_exceptions()
    try:
        code = app(standalone_mode=False)
    except aborts:  # Typer's word for an interrupted prompt or EOF
        _say_interrupted()
        return INTERRUPTED
    except errors as error:  # a usage error (a misspelt flag): one line, exit 2
        _say(f"error: {error.format_message()}")
        return error.exit_code
    if code == INTERRUPTED:
        # Typer turns a Ctrl-C outside a command (while parsing) into a silent 130;
        # inside a command, reports_errors has already said so and exited itself.
        _say_interrupted()
    return code if isinstance(code, int) else 0
