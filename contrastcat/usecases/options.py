"""Options several commands take alike, each defined once here (its help, flags and check), and
the checks of values only a use case knows how to read (a model name or one loaded already)."""

from __future__ import annotations

import os
from typing import Any

from .. import arguments as check
from ..models import Classifier
from ..models.in_memory import check_unchanged
from ..models.precision import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES
from ..spec import option


def model_check(named: str, value: Any) -> str | Classifier:
    """A model for the file calls: a name or directory, or a classifier loaded already (checked
    unchanged, as every call that takes one checks it)."""
    if isinstance(value, Classifier):
        check_unchanged(value, named)
        return value
    return check.path(named, value)


def path_or_none(named: str, value: Any) -> str | None:
    return None if value is None else check.path(named, value)


def batch_size(default: int) -> Any:
    return option(default, "Inputs per forward pass.", check.batch_size, kind=int)


def device() -> Any:
    return option("auto", "auto (CUDA when available), cpu, cuda or cuda:N.", check.text)


def dtype() -> Any:
    return option(
        "auto",
        "Weights' precision: auto (the checkpoint's on a GPU, float32 on a CPU), float32, bfloat16, float16.",
        check.one_of(DTYPE_CHOICES),
    )


def forward_dtype() -> Any:
    return option(
        "same",
        "Precision of the forward-only passes (deletion test, evaluate's curves, the f_c scan) by autocast: "
        "same (the weights'), auto (bfloat16 where the hardware runs it natively: AMX or AVX-512 BF16 CPUs, "
        "recent GPUs; else same), float32, bfloat16 (about 2.4x faster with AMX, slower without: a warning "
        "says so; scores change, see docs/performance.md), float16. Gradients keep the weights' precision.",
        check.one_of(FORWARD_DTYPE_CHOICES),
    )


def quiet() -> Any:
    return option(
        False, "No progress bars or summaries on stderr.", check.flag, flags=("--quiet", "-q"), kind=bool,
        negatable=False, where="command",
    )


def progress() -> Any:
    """The call's ``progress(phase, done, total)``; the command draws bars with it."""
    return option(None, "", check.callback, where="call")


def notify() -> Any:
    """The call's ``notify(line)`` for what the command says on stderr."""
    return option(None, "", check.callback, where="call")


def is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))
