"""The method registry: one entry per attribution method.

Registration is explicit (this table), so which methods exist never depends
on which modules happened to be imported.
"""

from __future__ import annotations

import inspect
import typing

from ..errors import BadInput
from .attention import (
    AttentionGradients,
    AttentionTimesGradients,
    GenericAttention,
    GradSAM,
    RawAttention,
    Rollout,
)
from .base import AttributionMethod, ReferenceSource, input_seed, minmax
from .cat import (
    CAT,
    REFERENCE_SELECTIONS,
    RHO_CHOICES,
    AttCAT,
    ContrastCAT,
    contrast_maps,
)
from .gradients import IG_BASELINES, InputXGradient, IntegratedGradients
from .random import RandomScores
from .tis import TIS

# The paper's Table 1 order: attention-based, then activation-based, then the rest.
METHODS: dict[str, type[AttributionMethod]] = {
    method.name: method
    for method in (
        ContrastCAT,
        AttCAT,
        CAT,
        TIS,
        RawAttention,
        Rollout,
        AttentionGradients,
        AttentionTimesGradients,
        GradSAM,
        GenericAttention,
        IntegratedGradients,
        InputXGradient,
        RandomScores,
    )
}


def list_methods() -> list[type[AttributionMethod]]:
    return list(METHODS.values())


def method_class(name: str) -> type[AttributionMethod]:
    try:
        return METHODS[name]
    except KeyError:
        raise BadInput(f"unknown method {name!r} (available: {', '.join(METHODS)})") from None


def method_options(name: str) -> tuple[str, ...]:
    """The option names ``name``'s constructor accepts (none for most baselines)."""
    cls = method_class(name)
    if cls.__init__ is object.__init__:
        return ()
    parameters = inspect.signature(cls.__init__).parameters.values()
    return tuple(p.name for p in parameters if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD)


def build_method(name: str, **options) -> AttributionMethod:
    """Instantiate ``name`` with the options it accepts (others are ignored), each of the
    type its constructor declares: a record's settings can hold anything."""
    cls = method_class(name)
    accepted = method_options(name)
    chosen = {key: value for key, value in options.items() if key in accepted}
    hints = typing.get_type_hints(cls.__init__) if chosen else {}
    for key, value in chosen.items():
        allowed = typing.get_args(hints[key]) or (hints[key],)
        if not any(_of_type(value, kind) for kind in allowed):
            expected = " or ".join(kind.__name__ for kind in allowed)
            raise BadInput(f"method {name}: option {key} must be {expected}, got {value!r}")
    return cls(**chosen)


def _of_type(value, kind) -> bool:
    """isinstance, where a bool is not an int (JSON true must not pass for a count)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return isinstance(value, int if kind is int else (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


ALL = "all"


def check_options(**options) -> None:
    """Refuse a bad option value even when no chosen method takes that option.

    Every constructor validates what it accepts, so building each method once
    (cheap: constructors hold settings only) checks every value.
    """
    for name in METHODS:
        build_method(name, **options)


def parse_method_list(spec: str) -> list[str]:
    """``a,b,c`` -> known method names, in order, without repeats; ``all`` is every method."""
    parts = [part.strip() for part in spec.split(",") if part.strip()]
    names = list(dict.fromkeys(name for part in parts for name in (METHODS if part == ALL else [part])))
    if not names:
        raise BadInput("--method needs at least one method name")
    for name in names:
        method_class(name)
    return names


__all__ = [
    "CAT",
    "IG_BASELINES",
    "METHODS",
    "REFERENCE_SELECTIONS",
    "RHO_CHOICES",
    "TIS",
    "AttCAT",
    "AttentionGradients",
    "AttentionTimesGradients",
    "AttributionMethod",
    "ContrastCAT",
    "GenericAttention",
    "GradSAM",
    "InputXGradient",
    "IntegratedGradients",
    "RandomScores",
    "RawAttention",
    "ReferenceSource",
    "Rollout",
    "build_method",
    "check_options",
    "contrast_maps",
    "input_seed",
    "list_methods",
    "method_class",
    "method_options",
    "minmax",
    "parse_method_list",
]
