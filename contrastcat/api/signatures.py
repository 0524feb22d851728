"""The public calls' signatures from their command's options: ``help()`` and notebooks show each
option as a keyword argument, though the call takes them as ``**options`` (checked once, where
the options are read)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ..spec import CommandOptions, signature


def with_signature(function: Callable, options: type[CommandOptions], head: tuple[str, ...], only: tuple[str, ...] = ()) -> None:
    """``function``'s own parameters named in ``head`` first, then the options (or ``only`` those)."""
    found = signature(options, only=only)
    own = [p for p in inspect.signature(function).parameters.values() if p.name in head]
    rest = [p for p in found.parameters.values() if p.name not in head]
    function.__signature__ = found.replace(parameters=[*own, *rest])
