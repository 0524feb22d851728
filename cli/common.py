"""What every command shares: error reporting, progress bars, common options."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import typer

from contrastcat import api
from contrastcat.api import torchrun_follower
from contrastcat.errors import BadInput, ContrastCatError, ContrastCatWarning, GateFailed, Interrupted

if TYPE_CHECKING:
    from rich.console import Console

from .signals import (
    BROKEN_PIPE, ERROR_LINE, INTERRUPTED, bounded, interrupt_within, is_stdout_failure, silence_stdout, stop_if_interrupted,
)

@functools.cache
def _console_type() -> type[Console]:
    """Rich's console, imported when something is printed through it (a table, a bar, an error
    line), not when the command line is built."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # Rich would exit 1 on its own; a closed pipe downstream is 141, as for any Unix tool.
            self.quiet = True
            raise BrokenPipeError

    return _Console


def stdout_console(**options) -> Console:
    return _console_type()(highlight=False, **options)


def stderr_console() -> Console:
    return _console_type()(stderr=True, highlight=False)


def tables_console(output: str | None, quiet: bool, **options) -> Console | None:
    """Where a command's tables go: stdout, unless ``-o -`` writes the JSON report there (stdout
    then holds exactly one JSON document, and the tables go to stderr, or nowhere with --quiet)."""
    if not api.is_standard_output(output):
        return stdout_console(**options)
    return None if quiet else _console_type()(stderr=True, highlight=False, **options)


def print_blocks(console: Console, blocks: list) -> None:
    """A command's printed blocks: a string as a plain line, a Rich renderable through ``console``.
    A table is never cut: a pipe or a file gets it whole and unwrapped, a terminal narrower than
    its narrowest layout gets that layout (its lines wrap) rather than columns left out."""
    from rich.table import Table

    for block in blocks:
        if isinstance(block, str):
            typer.echo(block, err=console.stderr)
            continue
        if isinstance(block, Table):
            found = console.measure(block, options=console.options.update_width(1000))
            # Both sides set: a dumb terminal's console (TERM=dumb) keeps 80 columns otherwise.
            console.size = (max(console.width, found.minimum if console.is_terminal else found.maximum), console.height)
        console.print(block)


def one_thing_on_stdout(output: str | None, **printing: bool) -> None:
    """``-o -`` writes the JSON report on stdout: a flag that prints there too would mix two."""
    chosen = [flag for flag, on in printing.items() if on]
    if api.is_standard_output(output) and chosen:
        raise BadInput(
            f"-o - writes the JSON report on stdout and {chosen[0]} prints there too: pick one "
            "(-o - alone is the JSON report)"
        )


def fail(message: str, code: int) -> typer.Exit:
    stderr_console().print(f"[bold red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _interrupted(output: str | None) -> str:
    """What Ctrl-C leaves: an output file is written whole or not at all, but what already went
    to standard output (records as they finish, or the report) cannot be taken back."""
    if api.is_standard_output(output):
        return "interrupted; what reached standard output is incomplete"
    return "interrupted; no output was written"


class _Watched:
    """Standard output, noting whether anything was written to it."""

    def __init__(self, stream) -> None:
        self._stream, self.written = stream, False

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def watching_stdout() -> Iterator[_Watched]:
    """Whether a command's work has begun printing its result (render prints as it goes, after
    reading and checking every record): Ctrl-C before says nothing was written."""
    watched = sys.stdout = _Watched(sys.stdout)
    try:
        yield watched
    finally:
        sys.stdout = watched._stream


@contextlib.contextmanager
def printing_after(
    *written: tuple[str, str | os.PathLike | None], stdout: str | Callable[[], str | None] | None = None
) -> Iterator[None]:
    """Ctrl-C while a command prints (tables, a summary, its ``wrote`` line, failed gates) after
    its outputs were written whole: each ``(what, where)`` names one (``where`` None: not written).
    The message names every one written, rather than saying that no output was written beside a
    new or replaced file, or that standard output is incomplete when it holds the whole document.
    ``stdout`` names what the command is printing on standard output as its result (``--json``'s
    report, render's text), or is a function saying it once something was printed: cut short, it
    is said to be incomplete, not that nothing was written."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        stdout = stdout() if callable(stdout) else stdout
        done = [(what, _where(where)) for what, where in written if where is not None]
        if isinstance(interrupt, Interrupted) or not (done or stdout):
            raise
        verb = "are" if stdout and stdout.endswith("s") else "is"  # "the tables", "the JSON report"
        cut = f"{stdout} on standard output {verb} incomplete" if stdout else ""
        if not done:
            raise Interrupted(f"interrupted; {cut}") from None
        (what, where), *others = done
        said = [f"{what} was written whole to {where}", *(f"{what} to {where}" for what, where in others)]
        listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
        raise Interrupted(f"interrupted while printing; {listed}" + (f"; {cut}" if cut else "")) from None


def _where(path: str | os.PathLike) -> str:
    return "standard output" if api.is_standard_output(os.fspath(path)) else os.fspath(path)


def reports_errors(command: Callable) -> Callable:
    """Turn domain errors into one red line and an exit code; never a traceback.

    Ctrl-C and SIGTERM (``KeyboardInterrupt``) exit 130 with one line, after
    the command's own clean-up has run on the way out; a closed pipe on stdout
    exits 141 without a word, as Unix tools do.
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning(warnings.showwarning)
                return command(*args, **kwargs)
        except ContrastCatError as error:
            if torchrun_follower():  # rank 0 says it (or that this rank failed) once for all
                # Failing the same way before the processes meet, rank 0 needs a moment to say
                # it before torchrun stops everyone because this process has ended.
                time.sleep(FOLLOWER_GRACE)
                raise typer.Exit(error.exit_code) from None
            raise fail(_escape(str(error), ERROR_LINE), error.exit_code) from None
        except KeyboardInterrupt as interrupt:
            _stopped(interrupt, kwargs.get("output"))
        except BrokenPipeError:
            silence_stdout()
            raise SystemExit(BROKEN_PIPE) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as error:  # a bug, or an environment problem we did not foresee
            if interrupt_within(error):  # a signal landing mid-import may come wrapped
                _stopped(KeyboardInterrupt(), kwargs.get("output"))
            if is_stdout_failure(error):  # closed by the shell (>&-), or a full disk behind > file
                raise fail(f"cannot write to standard output ({error.strerror})", 1) from None
            if os.environ.get("CONTRASTCAT_DEBUG"):
                raise
            raise fail(
                _escape(f"{type(error).__name__}: {error} (set CONTRASTCAT_DEBUG=1 for a traceback)", ERROR_LINE), 1
            ) from None

    return wrapper


def _stopped(interrupt: KeyboardInterrupt, output) -> None:
    """A Ctrl-C or SIGTERM: one line (what was kept of ``output``), exit 130."""
    if torchrun_follower():
        raise SystemExit(INTERRUPTED) from None
    # SystemExit, not typer.Exit: launch tells this (already said) from Typer's silent 130.
    message = str(interrupt) if isinstance(interrupt, Interrupted) else _interrupted(output)
    _quietly(lambda: stderr_console().print(f"[bold red]error:[/] {_escape(message, ERROR_LINE)}", soft_wrap=True))
    raise SystemExit(INTERRUPTED) from None


def notifier(quiet: bool) -> Callable[[str], None]:
    """The ``notify`` a command passes to its public call: each line on stderr, none with
    --quiet. The library names options as the command line spells them (the options were
    read with ``ON_COMMAND_LINE``): the lines are printed as they come."""
    return lambda line: info(line, quiet)


FOLLOWER_GRACE = 2.0  # seconds


def _show_warning(fallback):
    """The library's warnings as one ``warning:`` line each, each text once per command
    (whatever Python's filters say); other libraries' warnings as Python shows them."""
    shown: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, ContrastCatWarning):
            return fallback(message, category, filename, lineno, file, line)
        if str(message) not in shown and not torchrun_follower():  # rank 0 speaks for all
            shown.add(str(message))
            warn(str(message))

    return show


def _escape(text: str, limit: int | None = None) -> str:
    """Data quoted in a message, made safe to print: one line (control characters and line
    separators shown as escapes, so an error stays one line), no Rich markup, and, with
    ``limit``, no longer than that (the middle left out, said so)."""
    visible = "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)
    return (visible if limit is None else bounded(visible, limit)).replace("[", r"\[")


def _quietly(action: Callable[[], None]) -> None:
    try:
        action()
    except (OSError, ValueError):  # stderr itself is gone: nothing left to tell
        pass


# To a stderr that is no terminal (a log, CI), progress is a plain line now and then: none in a
# run's first half minute (a short run says nothing), then at most one each half minute.
# CONTRASTCAT_PROGRESS_EVERY sets both (seconds): a log that wants fewer lines, or none in a run
# of known length (a test that reads stderr whole, on a machine of any speed).
PLAIN_EVERY = 30.0  # seconds
EVERY_VARIABLE = "CONTRASTCAT_PROGRESS_EVERY"


def plain_every() -> float:
    """The seconds between plain progress lines (and before the first): the environment's
    CONTRASTCAT_PROGRESS_EVERY, or PLAIN_EVERY."""
    text = os.environ.get(EVERY_VARIABLE)
    if text is None:
        return PLAIN_EVERY
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 1 <= seconds < float("inf"):
        raise BadInput(f"{EVERY_VARIABLE}={_escape(text, 40)}: a number of seconds, at least 1")
    return seconds


class PlainProgress:
    """A ``(phase, done, total)`` callback that writes ``phase: done/total, 1:05 elapsed, about
    0:40 left of it`` at most once each ``every`` seconds, the first no sooner (``clock``:
    seconds, ``write``: where a line goes)."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic,
                 every: float = PLAIN_EVERY) -> None:
        self.write, self.clock, self.every = write, clock, every
        self.start = clock()
        self.last = self.start  # the first line no sooner than ``every``
        self.began: dict[str, float] = {}  # phase -> when it was first heard of

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        stop_if_interrupted()
        now = self.clock()
        began = self.began.setdefault(phase, now)
        if now - self.last < self.every:
            return
        self.last = now
        line = f"{phase}: {done}/{total}" if total else phase
        line += f", {_clock(now - self.start)} elapsed"
        if total and done and done < total:
            line += f", about {_clock((now - began) / done * (total - done))} left of it"
        self.write(line)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}" if minutes >= 60 else f"{minutes}:{seconds:02d}"


@contextlib.contextmanager
def phased_progress(quiet: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A callback ``(phase, done, total)`` that shows one bar per phase, with the time gone and
    the time left; to a stderr that is no terminal, a plain line now and then (:class:`PlainProgress`)."""
    if quiet:
        yield lambda phase, done, total: stop_if_interrupted()
        return
    if not sys.stderr.isatty():  # rank 0 speaks for all under torchrun
        every = plain_every()
        yield PlainProgress(lambda line: info(line, False) if not torchrun_follower() else None, every=every)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("elapsed,"),
        TimeRemainingColumn(),
        TextColumn("left"),
        console=stderr_console(),
        transient=True,
        # Rich would point sys.stdout at the bar's console (stderr) while it shows: records and
        # reports written to standard output (-o - > file) would land on the terminal instead.
        redirect_stdout=False,
    )
    tasks: dict[str, int] = {}
    with progress:

        def report(phase: str, done: int, total: int) -> None:
            stop_if_interrupted()
            if phase not in tasks:
                tasks[phase] = progress.add_task(phase, total=total)
            progress.update(tasks[phase], completed=done, total=total)

        yield report


def warn(message: str) -> None:
    """A warning on stderr, shown even with --quiet: it tells of something done to the user's data."""
    stderr_console().print(f"[yellow]warning:[/] {_escape(message)}", highlight=False, soft_wrap=True)


def gates(problems: list[str]) -> None:
    """Exit 3 on a failed gate: one line, or with several a line each and then the count."""
    if len(problems) > 1:
        for problem in problems:
            gate_failed(problem)
        raise GateFailed(f"{len(problems)} gates failed (each above)")
    if problems:
        raise GateFailed(problems[0])


def gate_failed(message: str) -> None:
    """One failed gate of several, on its own line (shown even with --quiet): none hides behind another."""
    stderr_console().print(f"[bold red]gate failed:[/] {_escape(message)}", highlight=False, soft_wrap=True)


def info(message: str, quiet: bool) -> None:
    if not quiet:
        stderr_console().print(_escape(message), highlight=False, soft_wrap=True)
