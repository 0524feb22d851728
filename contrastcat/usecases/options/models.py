"""``contrastcat models``' options: list the embedded models, prepare one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...models.aliases import EMBEDDED_NAMES
from ...spec import REQUIRED, CommandOptions, option
from .. import options


def _embedded(named: str, value: Any) -> str:
    name = check.text(named, value)
    if name not in EMBEDDED_NAMES:
        raise BadInput(f"unknown embedded model {name!r} (available: {', '.join(EMBEDDED_NAMES)})")
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


