"""One family of domain exceptions, and the warnings.

The CLI catches :class:`ContrastCatError`, prints its message as one line and
exits with :attr:`exit_code`; the library never prints. Warnings go through
Python's ``warnings`` (a notebook shows them; the CLI prints each as one
``warning:`` line).
"""

from __future__ import annotations


class ContrastCatError(Exception):
    """Base class; ``exit_code`` follows the CLI convention (1 run failed, 2 bad input)."""

    exit_code = 1


class BadInput(ContrastCatError):
    """A file, option or value given by the user cannot be used."""

    exit_code = 2


class RunFailed(ContrastCatError):
    """The input was fine but the run could not complete."""

    exit_code = 1


class ModelUnavailable(RunFailed):
    """A model or data set could not be loaded (offline, not cached, ...)."""


class LibraryMismatch(BadInput):
    """A reference library was built for a different model."""


class NonFiniteOutput(RunFailed):
    """The model produced NaN or infinite logits; ``rows`` are the offending batch positions."""

    def __init__(self, message: str, rows: list[int]) -> None:
        super().__init__(message)
        self.rows = rows


class PeerFailed(ContrastCatError):
    """Another process of a torchrun world failed; its message and exit code are carried here."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) with a word on what was kept, e.g. a checkpoint to resume from."""


def located(path: str, line: int | None, problem: str) -> str:
    """Format ``file:line: problem`` the way compilers do, so editors can jump to it."""
    where = path if line is None else f"{path}:{line}"
    return f"{where}: {problem}"


class ContrastCatWarning(UserWarning):
    """Something the user asked for runs, but not as they would expect."""


class SlowPrecision(ContrastCatWarning):
    """A half precision asked for on hardware that emulates it (slower than float32)."""


class GateFailed(ContrastCatError):
    """evaluate: a metric is on the wrong side of its bound, or worse than the baseline's."""

    exit_code = 3
