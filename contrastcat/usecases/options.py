"""Options several commands take alike, each defined once here (its help, flags and check), and
the checks of values only a use case knows how to read (a model name or one loaded already)."""

from __future__ import annotations

import functools
import os
from typing import Any

from .. import arguments as check
from ..models import Classifier
from ..models.in_memory import check_unchanged
from ..models.devices import resolve_device
from ..models.precision import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES
from ..errors import BadInput
from ..evaluation.stats import MAX_RESAMPLES, MIN_RESAMPLES, fewest_resamples_ever, level_text
from ..spec import REQUIRED, option
from ..views.plots import plot_format, require_matplotlib


def model_check(named: str, value: Any) -> str | Classifier:
    """A model for the file calls: a name or directory, or a classifier loaded already (checked
    unchanged, as every call that takes one checks it)."""
    if isinstance(value, Classifier):
        check_unchanged(value, named)
        return value
    return check.path(named, value)


def path_or_none(named: str, value: Any) -> str | None:
    return None if value is None else check.path(named, value)


def _bootstrap(named: str, value: Any) -> int:
    resamples = check.count(named, value, minimum=0)
    if 0 < resamples < MIN_RESAMPLES or resamples > MAX_RESAMPLES:
        # A handful of resamples gives "intervals" that need not even hold the mean; past
        # MAX_RESAMPLES the interval's ends no longer move, only the time and memory grow.
        raise BadInput(f"{named} must be 0 (off) or {MIN_RESAMPLES} to {MAX_RESAMPLES} resamples, got {resamples}")
    return resamples


def check_picture_apart(chosen: Any) -> None:
    """A command writing a report (``output``) and a picture (``plot``): not to one file."""
    if chosen.plot is not None and chosen.output is not None and os.path.realpath(chosen.output) == os.path.realpath(chosen.plot):
        raise BadInput(
            f"{chosen.named('plot')} and {chosen.bare('output')} both name {chosen.plot}: the picture would replace the report"
        )


def check_resamples_resolve(chosen: Any) -> None:
    """Resamples enough for an interval at the level asked, however many inputs: an end needs
    at least one resampled mean beyond it (``evaluation.stats.resolvable_level``)."""
    needed = fewest_resamples_ever(chosen.ci)
    if 0 < chosen.bootstrap < needed:
        raise BadInput(
            f"{chosen.named('bootstrap')} {chosen.bootstrap} resamples cannot resolve a {level_text(chosen.ci)} interval "
            f"of any number of inputs: it needs at least {needed}, more for few inputs (or 0 for none)"
        )


def _plot(named: str, value: Any) -> str | None:
    """A picture's file name, whose suffix names a format matplotlib (installed) can write."""
    if value is None:
        return None
    path = check.path(named, value)
    plot_format(named, path)
    require_matplotlib()
    return path


def inputs() -> Any:
    """An inputs file, the command's argument (explain, compare)."""
    return option(
        REQUIRED, "JSONL or CSV with a text field; - for stdin.", check.path, argument=True, metavar="INPUT",
        shown_default=None, show_default=False,
    )


def text_field() -> Any:
    return option("text", "Name of the text field/column.", check.text)


def id_field() -> Any:
    return option("id", "Name of the id field/column (default: line number).", check.text)


def label_field() -> Any:
    return option("label", "Name of the label field/column.", check.text)


def pair_field(help: str) -> Any:
    return option(None, help, check.optional_text)


def check_pair_field_apart(chosen: Any) -> None:
    """The second text's field is none of the others (a row's text read twice is no pair)."""
    if chosen.pair_field is not None and chosen.pair_field in (chosen.text_field, chosen.id_field, chosen.label_field):
        raise BadInput(f"{chosen.named('pair_field')} {chosen.pair_field!r} is also the text, id or label field")


def records() -> Any:
    return option(REQUIRED, "Records from explain (JSONL); - for stdin.", check.path, argument=True, metavar="ATTR")


def model(loaded: bool = True, help: str = "Default: the model named in the records.") -> Any:
    """``--model``; ``loaded``: a classifier loaded already is taken too (from Python)."""
    return option(
        None, help, check.optional(model_check if loaded else check.path),
        flags=("--model", "-m"),
    )


def refs(help: str) -> Any:
    return option(None, help, path_or_none, flags=("--refs",))


def report_output() -> Any:
    return option(None, "Write the JSON report here.", path_or_none, flags=("--output", "-o"))


def plot(help: str) -> Any:
    return option(None, help, _plot, metavar="FILE")


def as_json(help: str) -> Any:
    return option(False, help, check.flag, flags=("--json",), kind=bool, negatable=False, where="command")


def per_input(help: str) -> Any:
    return option(False, help, check.flag, kind=bool, negatable=False)


def bootstrap(help: str) -> Any:
    return option(1000, help, _bootstrap, kind=int)


def ci() -> Any:
    return option(
        0.95, "Confidence level of the intervals (0.5 to 0.999).",
        functools.partial(check.number, minimum=0.5, maximum=0.999), kind=float,
    )


def seed(help: str) -> Any:
    return option(0, help, check.seed, kind=int)


def batch_size(default: int) -> Any:
    return option(default, "Inputs per forward pass.", check.batch_size, kind=int)


def _device(named: str, value: Any) -> str:
    """A device this machine has, checked once here; the run resolves it again (``auto``)."""
    spec = check.text(named, value)
    resolve_device(spec, named)
    return spec


def device() -> Any:
    return option("auto", "auto (CUDA when available), cpu, cuda or cuda:N.", _device)


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
