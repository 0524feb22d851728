"""Method options: one frozen dataclass per method, the single definition of each option.

A field made with :func:`option` carries its help text, allowed values and
minimum. Validation runs once, when the dataclass is made; ``settings()``
(what records store) is derived from the fields; the CLI's flags, their help
and the shell completions are generated from the same definitions
(``contrastcat_cli``), so a new method with an option touches its own file
and the registry only.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import InitVar, dataclass
from typing import Any

from ..arguments import shown
from ..errors import BadInput
from ..spec import Names, backticked

MAX_INTEGER = 2**32 - 1


@dataclass(frozen=True)
class OptionSpec:
    """What the CLI and the docs need to know about one option."""

    name: str  # the field name; the CLI flag is --name-with-dashes
    kind: type  # bool, int, float or str: what the CLI passes
    accepts: tuple[type, ...]  # what the library accepts (``layers``: "all" or a count, str or int)
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: int | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def option(default: Any, help: str, *, choices: tuple[str, ...] | None = None, minimum: int | None = None, why: str = ""):
    """A dataclass field with its CLI metadata. ``why`` ends the message for a value
    below ``minimum`` (default: "must be at least N")."""
    metadata = {"help": help, "choices": choices, "minimum": minimum, "why": why}
    return dataclasses.field(default=default, metadata=metadata)


def _of_type(value: Any, kind: type) -> bool:
    """isinstance, where a bool is not a number (JSON true must not pass for a count)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return isinstance(value, int if kind is int else (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


@dataclass(frozen=True)
class MethodOptions:
    """Base of every method's options. Subclasses are frozen dataclasses of :func:`option` fields.

    ``named`` (not a field: only passed to the checks) spells an option in messages as the
    caller does: ``--refs-used`` from the shell, ``refs_used`` from Python (default: in backticks)."""

    named: InitVar[Names | None] = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self, named: Names | None = None) -> None:
        named = named or backticked
        self._check_types(type(self).__name__)
        for spec in self.specs():
            value = getattr(self, spec.name)
            if spec.choices is not None and value not in spec.choices:
                raise BadInput(f"{named(spec.name)} must be one of {', '.join(spec.choices)}, got {shown(value)}")
            if spec.minimum is not None and value < spec.minimum:
                why = self._why(spec.name) or f"must be at least {spec.minimum}"
                raise BadInput(f"{named(spec.name)} {why}")
            if isinstance(value, float) and not math.isfinite(value):
                raise BadInput(f"{named(spec.name)} must be a finite number, got {shown(value)}")
            if isinstance(value, int) and not isinstance(value, bool) and value > MAX_INTEGER:
                # No count or seed here means anything this large: a typo, refused before it overflows.
                raise BadInput(f"{named(spec.name)} must be at most {MAX_INTEGER}, got {shown(value)}")
        self.check(named)

    def check(self, named: Names) -> None:
        """Checks that a single field's metadata cannot say (override); ``named`` spells an option."""

    @classmethod
    def _check_values(cls, owner: str, values: dict, named: Names | None = None) -> None:
        for spec in cls.specs():
            value = values.get(spec.name, spec.default)
            if not any(_of_type(value, kind) for kind in spec.accepts):
                expected = " or ".join(kind.__name__ for kind in spec.accepts)
                name = named(spec.name) if named is not None else spec.name
                raise BadInput(f"{owner}: option {name} must be {expected}, got {shown(value)}")

    def _check_types(self, owner: str) -> None:
        self._check_values(owner, {name: getattr(self, name) for name in self.names()})

    @classmethod
    def _why(cls, name: str) -> str:
        return next(f.metadata.get("why", "") for f in dataclasses.fields(cls) if f.name == name)

    @classmethod
    def specs(cls) -> tuple[OptionSpec, ...]:
        known = {"bool": bool, "int": int, "float": float, "str": str}
        specs = []
        for f in dataclasses.fields(cls):
            accepts = tuple(known[part.strip()] for part in str(f.type).split("|"))
            specs.append(OptionSpec(
                name=f.name,
                kind=accepts[0],
                accepts=accepts,
                default=f.default,
                help=f.metadata.get("help", ""),
                choices=f.metadata.get("choices"),
                minimum=f.metadata.get("minimum"),
            ))
        return tuple(specs)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def build(cls, method: str, named: Names | None = None, **values) -> MethodOptions:
        """The options of ``method`` from keyword values; an unknown name is an error that lists
        the valid ones. ``named``: how the caller spells an option (see the class)."""
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            valid = ", ".join(cls.names()) or "none"
            raise BadInput(f"method {method} has no option {unknown[0]!r} (its options: {valid})")
        cls._check_values(f"method {method}", values, named)
        return cls(**values, named=named)

    def settings(self) -> dict:
        """What a record's ``settings`` holds for this method (its options, as JSON values)."""
        return {name: getattr(self, name) for name in self.names()}


@dataclass(frozen=True)
class NoOptions(MethodOptions):
    """For the methods that take none."""
