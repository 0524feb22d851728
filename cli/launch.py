"""The console script's entry point: signals first, then the app.

Everything here runs before Typer, Rich or the model libraries are imported, so a Ctrl-C or
SIGTERM at any moment after the interpreter has started (even during those
imports, which take a good part of a second) ends in one line and exit 130,
never a traceback. A closed pipe downstream (``| head``) ends quietly with
141, as it does for other Unix tools.
"""

from __future__ import annotations

import os
import signal
import sys

from . import _early_stop
from .signals import (
    BROKEN_PIPE,
    INTERRUPTED,
    BestEffort,
    ClosedStream,
    MarkedStdout,
    bounded,
    interrupt_within,
    is_stdout_failure,
    quiet_unraisable,
    say,
    say_interrupted,
    silence_stdout,
    stop,
)


def main() -> None:
    code = 1
    try:
        # Inside the try: a signal that lands the moment ``stop`` replaces the early handler
        # raises KeyboardInterrupt right here, and must end as every other interrupt does.
        _take_over()
        code = _run()
        sys.stdout.flush()
    except KeyboardInterrupt:
        say_interrupted()
        code = INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        code = BROKEN_PIPE
    except OSError as error:  # standard output closed (>&-) under --help, --version or a table
        if os.environ.get("CONTRASTCAT_DEBUG") and not is_stdout_failure(error):  # a traceback of the unforeseen
            raise
        say(f"error: cannot write to standard output ({error.strerror})")
        code = 1
    except Exception as error:
        if not interrupt_within(error):  # a signal landing mid-import may come wrapped (signals.interrupt_within)
            raise
        say_interrupted()
        code = INTERRUPTED
    finally:
        # The work is over and its exit code decided (here, or by a command's SystemExit): a late
        # Ctrl-C must not turn it into a kill, nor an interrupt handled on the way.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
        _forget_handled_interrupt()
    sys.exit(code)


def _forget_handled_interrupt() -> None:
    """CPython marks a KeyboardInterrupt that left code run from a string (``exec("...")``: how
    dataclasses and namedtuples make their methods, mid-import) as unhandled, even once it was
    handled; run as ``python -m contrastcat_cli``, the interpreter then kills itself with SIGINT
    after the exit code was chosen (a waiting parent sees a death by signal, not 130). Running
    any string resets that mark."""
    exec("pass")  # noqa: S102 - a constant: what resets the mark


def _take_over() -> None:
    """The process's handlers and streams, from the early ones of ``cli/__init__``."""
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, _early_stop):
        signal.signal(signal.SIGTERM, stop)
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _early_stop):  # not when the shell ignores it
        signal.signal(signal.SIGINT, stop)
    sys.unraisablehook = quiet_unraisable(sys.unraisablehook)
    sys.stderr = BestEffort(sys.stderr)
    if sys.stdout is None:
        sys.stdout = ClosedStream()
    else:
        sys.stdout = MarkedStdout(sys.stdout)


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


VERSION_FLAGS = (["--version"], ["-V"])


def _run() -> int:
    if sys.argv[1:] in VERSION_FLAGS:
        # The version alone needs none of the app: building it imports Typer, torch and
        # transformers (seconds), while contrastcat alone imports nothing more. The line is the one
        # the app's own eager --version prints (``app._version``), which other spellings still reach.
        from contrastcat import __version__

        sys.stdout.write(f"contrastcat {__version__}\n")
        return 0
    # Typer checks option values through pydantic, whose first check looks for plugins in every
    # installed package's entry points: a tenth of the start-up, for plugins this command line has
    # no use for. A user's own setting of the variable is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from .app import build_app

    app = build_app(sys.argv[1] if len(sys.argv) > 1 else None)
    aborts, errors = _click_exceptions()
    try:
        code = app(standalone_mode=False)
    except aborts:  # Typer's word for an interrupted prompt or EOF
        say_interrupted()
        return INTERRUPTED
    except errors as error:  # a usage error (a misspelt flag): one line, exit 2
        if type(error).__name__ == "NoArgsIsHelpError":  # `contrastcat models` alone: its help, not an error line
            say(error.format_message().rstrip("\n"))
        else:
            say(f"error: {bounded(error.format_message())}")
        return error.exit_code
    if code == INTERRUPTED:
        # Typer turns a Ctrl-C outside a command (while parsing) into a silent 130;
        # inside a command, reports_errors has already said so and exited itself.
        say_interrupted()
    return code if isinstance(code, int) else 0
