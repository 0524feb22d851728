"""Options several commands take alike, each defined once here (its help, flags and check), and
the checks of values only a use case knows how to read (a model name or one loaded already).
Each command's own options are a module of this package (``options.compare``, ...).

Light by design: the command line builds its flags, its help and its completions from these
modules, and reads (checks) every value with them before any work, without torch, transformers,
numpy or h5py. A check that needs one of them (a loaded classifier, a CUDA device, matplotlib)
imports it when it runs, and only for such a value."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import arguments as check
from ...errors import BadInput
from ...io.lines import missing_input
from ...library.names import missing_library
from ...evaluation.levels import MAX_RESAMPLES, MIN_RESAMPLES, fewest_resamples_ever, level_text
from ...models.device_names import check_device_name
from ...models.dtypes import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES
from ...spec import PATH, REQUIRED, CommandOptions, Progress, option

if TYPE_CHECKING:
    from ...evaluation.stats import BootstrapSettings
    from ...models import Classifier


def model_check(named: str, value: Any) -> str | Classifier:
    """A model for the file calls: a name or directory, or a classifier loaded already (checked
    unchanged, as every call that takes one checks it)."""
    if isinstance(value, (str, os.PathLike)):
        return check.path(named, value)
    from ...models import Classifier  # a value that is no name: torch is loaded already, or it is refused
    from ...models.in_memory import check_unchanged

    if isinstance(value, Classifier):
        check_unchanged(value, named)
        return value
    return check.path(named, value)


def file_name(named: str, value: Any) -> str:
    """A file or folder name (or ``-``): the shells complete a file name."""
    return check.path(named, value)


file_name.completes = PATH  # type: ignore[attr-defined]
model_check.completes = PATH  # type: ignore[attr-defined]  # a directory, or an alias or hub id typed whole
path_or_none = check.optional(file_name)


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
    from ...views.plots import plot_format, require_matplotlib

    path = check.path(named, value)
    plot_format(named, path)
    require_matplotlib()
    return path


_plot.completes = PATH  # type: ignore[attr-defined]


def input_exists(named: str, path: str) -> None:
    """A file to read, or ``-``: one that does not exist is refused with the options (after them),
    before any module of the work is loaded (opened later, it is said the same way)."""
    if missing_input(path):
        raise BadInput(f"{path}: no such file")


def inputs() -> Any:
    """An inputs file, the command's argument (explain, compare)."""
    return option(
        REQUIRED, "JSONL or CSV with a text field; - for stdin.", file_name, argument=True, metavar="INPUT",
        shown_default=None, show_default=False, after=input_exists,
    )


def text_field() -> Any:
    return option("text", "Name of the text field/column.", check.text)


def id_field() -> Any:
    return option("id", "Name of the id field/column (default: line number).", check.text)


def label_field() -> Any:
    return option("label", "Name of the label field/column.", check.text)


def pair_field(help: str) -> Any:
    return option(None, help, check.optional_text)


def evidence_field() -> Any:
    return option(
        None, "Field/column of each input's evidence: [start, end] character spans (end excluded; [start, end, 1] "
        "in a pair's second text) known to decide its label, as planted shortcuts or human rationales. Records "
        "carry them, and evaluate scores each map against them (plausibility). Rows without it have none.",
        check.optional_text,
    )


def check_pair_field_apart(chosen: Any) -> None:
    """The second text's field is none of the others (a row's text read twice is no pair), nor
    is the evidence's."""
    named = (chosen.text_field, chosen.id_field, chosen.label_field)
    if chosen.pair_field is not None and chosen.pair_field in named:
        raise BadInput(f"{chosen.named('pair_field')} {chosen.pair_field!r} is also the text, id or label field")
    if chosen.evidence_field is not None and chosen.evidence_field in (*named, chosen.pair_field):
        raise BadInput(
            f"{chosen.named('evidence_field')} {chosen.evidence_field!r} is also the text, id, label or pair field"
        )


def input_fields(chosen: Any):
    """The fields an inputs file is read by, as the options name them."""
    from ...records.inputs import InputFields

    return InputFields(chosen.text_field, chosen.id_field, chosen.label_field, chosen.pair_field, chosen.evidence_field)


def records() -> Any:
    return option(
        REQUIRED, "Records from explain (JSONL); - for stdin.", file_name, argument=True, metavar="ATTR",
        after=input_exists,
    )


def model(loaded: bool = True, help: str = "Default: the model named in the records.") -> Any:
    """``--model``; ``loaded``: a classifier loaded already is taken too (from Python)."""
    return option(
        None, help, check.optional(model_check if loaded else file_name),
        flags=("--model", "-m"),
    )


def library_exists(named: str, path: str) -> None:
    """A library named: one that cannot exist is refused with the options (after them; read
    later, it is said the same way)."""
    missing = missing_library(path)
    if missing is not None:
        raise BadInput(f"{path}: {missing}")


def refs(help: str) -> Any:
    return option(None, help, path_or_none, flags=("--refs",), after=library_exists)


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
    """A device this machine has, checked once here; the run resolves it again (``auto``). Only
    a GPU named asks torch whether the machine has it: ``auto`` and ``cpu`` always exist."""
    spec = check_device_name(check.text(named, value), named)
    if spec in ("auto", "cpu"):
        return spec
    from ...models.devices import resolve_device

    resolve_device(spec, named)
    return spec


def device() -> Any:
    return option("auto", "auto (CUDA when available), cpu, cuda or cuda:N.", _device, completes=("auto", "cpu", "cuda"))


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


class Resampling:
    """The bootstrap intervals of a command whose options declare ``seed``, ``bootstrap`` and
    ``ci`` (each with its own help: what the seed also draws, what the intervals are of)."""

    @property
    def intervals(self) -> BootstrapSettings:
        from ...evaluation.stats import BootstrapSettings

        return BootstrapSettings(self.bootstrap, self.ci, self.seed)  # type: ignore[attr-defined]


@dataclasses.dataclass(frozen=True)
class MeasuringOptions(CommandOptions):
    """What the commands that measure on a model (evaluate, sanity, compare) share, declared once:
    where the model runs and what they say. Shown after each command's own options
    (:meth:`CommandOptions.specs`)."""

    device: str = device()
    dtype: str = dtype()
    quiet: bool = quiet()
    progress: Progress | None = progress()
    notify: Callable[[str], None] | None = notify()
