"""``contrastcat merge``'s options: the part files of a sharded explain run -> its records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...io.files import check_output_path
from ...spec import REQUIRED, CommandOptions, option
from .. import options


def _parts(named: str, value: Any) -> list[str]:
    paths = [check.path(named, part) for part in check.collection(named, value, "part files")]
    if not paths:
        raise BadInput(f"{named}: no part file given")
    return paths


@dataclass(frozen=True)
class MergeOptions(CommandOptions):
    """``contrastcat merge``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "merge"

    parts: list[str] = option(
        REQUIRED, "The part files of every shard, any order.", _parts, argument=True, metavar="PART...", kind=list[str],
    )
    output: str = option("-", "Records (JSONL); - for stdout.", options.file_name, flags=("--output", "-o"))
    quiet: bool = options.quiet()

    def check_together(self) -> None:
        check_output_path(self.output, self.parts)


