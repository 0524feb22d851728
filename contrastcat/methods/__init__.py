"""The method registry: one entry per attribution method.

Registration is explicit (this table), so which methods exist never depends
on which modules happened to be imported.
"""

from __future__ import annotations

import inspect

from ..errors import BadInput
from .base import AttributionMethod, ReferenceSource, minmax
from .cat import CAT, RHO_CHOICES, AttCAT, ContrastCAT, contrast_maps
from .random import RandomScores

METHODS: dict[str, type[AttributionMethod]] = {
    method.name: method for method in (ContrastCAT, AttCAT, CAT, RandomScores)
}


def list_methods() -> list[type[AttributionMethod]]:
    return list(METHODS.values())


def method_class(name: str) -> type[AttributionMethod]:
    try:
        return METHODS[name]
    except KeyError:
        raise BadInput(f"unknown method {name!r} (available: {', '.join(METHODS)})") from None


def build_method(name: str, **options) -> AttributionMethod:
    """Instantiate ``name`` with the options it accepts; others are ignored."""
    cls = method_class(name)
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{key: value for key, value in options.items() if key in accepted})


__all__ = [
    "CAT",
    "METHODS",
    "RHO_CHOICES",
    "AttCAT",
    "AttributionMethod",
    "ContrastCAT",
    "RandomScores",
    "ReferenceSource",
    "build_method",
    "contrast_maps",
    "list_methods",
    "method_class",
    "minmax",
]
