"""The embedded models' use cases: list them, prepare one (fine-tune it now and cache it); and
the commands' options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import arguments as check
from ..errors import BadInput
from ..spec import REQUIRED, CommandOptions, option
from . import options


def _embedded(named: str, value: Any) -> str:
    from ..models.zoo import EMBEDDED

    name = check.text(named, value)
    if name not in EMBEDDED:
        raise BadInput(f"unknown embedded model {name!r} (available: {', '.join(EMBEDDED)})")
    return name


@dataclass(frozen=True)
class PrepareOptions(CommandOptions):
    """``contrastcat models prepare``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "prepare_model"

    name: str = option(REQUIRED, "An embedded model (see models list).", _embedded, argument=True)
    force: bool = option(False, "Train again even if a usable cache entry exists.", check.flag, kind=bool)
    quick: bool = option(
        False, "A few steps on a few hundred rows (tests only).", check.flag, kind=bool, hidden=True, show_default=False,
    )
    device: str = options.device()
    quiet: bool = options.quiet()
    progress: Callable[[str, int, int | None], None] | None = options.progress()
    notify: Callable[[str], None] | None = options.notify()


@dataclass(frozen=True)
class ListModelsOptions(CommandOptions):
    """``contrastcat models list``'s options."""

    command: ClassVar[str] = "embedded_models"

    as_json: bool = options.as_json("Print JSON instead of a table.")


def run_prepare(chosen: PrepareOptions) -> str:
    """Fine-tune the embedded model now and cache it; one already prepared is kept (``notify``
    hears what it scored) unless ``force``. Returns its cache folder."""
    from ..models.devices import resolve_device
    from ..models.zoo import entry_status, prepare
    from ..models.zoo.cache import entry_dir, read_metadata
    from ..models.zoo.registry import describe_entry

    device = resolve_device(chosen.device)
    if entry_status(chosen.name, chosen.quick)[0] and not chosen.force:
        if chosen.notify:
            chosen.notify(describe_entry(chosen.name, read_metadata(entry_dir(chosen.name))))
        return str(entry_dir(chosen.name))
    return str(prepare(chosen.name, chosen.progress, chosen.notify, force=chosen.force, quick=chosen.quick, device=device))
