"""Checks of the values a Python caller passes: the API's counterpart of the CLI's option parsing.

A wrong type or value is a :class:`BadInput` naming the argument, before any work, never a
``TypeError`` from deep inside or a result quietly computed from something else (``True``
read as class 1, a string iterated as characters).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import BadInput

# Above this a batch is no batch any more (memory runs out long before): a typo, refused.
MAX_BATCH_SIZE = 65536
# Seeds go to numpy's generators, which take 0 .. 2**32 - 1 where they take a plain integer.
MAX_SEED = 2**32 - 1


def shown(value: Any, limit: int = 60) -> str:
    """``repr`` on one line, cut to ``limit`` characters: a message stays one line."""
    if isinstance(value, int) and value.bit_length() > 256:  # Python writes no int past 4,300 digits
        sign = "a negative" if value < 0 else "a"
        return f"{sign} whole number of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - an object whose repr fails still gets a message
        text = f"<{type(value).__name__}>"
    text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cut(text: str, limit: int = 80) -> str:
    """Text as the user wrote it (a method and its options), cut to ``limit`` characters in a message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: names in a sentence of a message."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def plain_int(value: Any) -> bool:
    """A Python int and not a bool: what a JSON integer reads as."""
    return isinstance(value, int) and not isinstance(value, bool)


def whole(value: Any) -> bool:
    """An integer, numpy's included; never a bool (True is not 1 here)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def count(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    # Past sys.maxsize no count means anything (and past 4,300 digits Python cannot even print
    # one in a later message): a typo, refused here.
    if not whole(value) or value < minimum or value > (sys.maxsize if maximum is None else maximum):
        too_large = maximum is None and whole(value) and value > sys.maxsize  # the bound all counts share, said
        upper = f" and at most {maximum}" if maximum is not None else f" and at most {sys.maxsize}" if too_large else ""
        raise BadInput(f"{name} must be a whole number of at least {minimum}{upper}, got {shown(value)}")
    return int(value)


def optional_count(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int | None:
    return None if value is None else count(name, value, minimum, maximum)


def batch_size(name: str, value: Any) -> int:
    return count(name, value, 1, MAX_BATCH_SIZE)


def seed(name: str, value: Any) -> int:
    return count(name, value, 0, MAX_SEED)


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise BadInput(f"{name} must be True or False, got {shown(value)}")
    return bool(value)


def number(name: str, value: Any, minimum: float | None = None, maximum: float | None = None) -> float:
    try:  # float() of a huge int or Fraction overflows rather than giving inf
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))
    except OverflowError:
        ok = False
    if ok and ((minimum is not None and value < minimum) or (maximum is not None and value > maximum)):
        ok = False
    if not ok:
        bounds = "".join(
            part for part in (
                f" of at least {minimum:g}" if minimum is not None else "",
                f" and at most {maximum:g}" if maximum is not None else "",
            )
        )
        raise BadInput(f"{name} must be a finite number{bounds}, got {shown(value)}")
    return float(value)


def text(name: str, value: Any, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise BadInput(f"{name} must be a{'' if empty else ' non-empty'} string, got {shown(value)}")
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def path(name: str, value: Any) -> str:
    """A file name: a string or an ``os.PathLike`` (``pathlib.Path``); blank is a slip, not a name."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise BadInput(f"{name} must be a file name (a string or a pathlib.Path), got {shown(value)}")
    return value


def callback(name: str, value: Any) -> Callable | None:
    if value is not None and not callable(value):
        raise BadInput(f"{name} must be a function or None, got {shown(value)}")
    return value


def names(name: str, value: Any) -> list[str]:
    """One name, a comma list (as the CLI takes it) or a sequence of names; never empty."""
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
    else:
        raise BadInput(f"{name} must be a name or a list of names, got {shown(value)}")
    if not items:
        raise BadInput(f"{name}: no name given")
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise BadInput(f"{name} must hold names (non-empty strings), got {shown(item)} in {shown(value)}")
    return [item.strip() for item in items]


def collection(name: str, value: Any, what: str) -> Any:
    """Several items (a list, a generator, a ``datasets.Dataset``): never one string or one mapping,
    which would be read item by item as characters or keys."""
    if isinstance(value, (str, bytes)):
        raise BadInput(f"{name} is one string; pass a list of {what} ([text])")
    if isinstance(value, Mapping):
        raise BadInput(f"{name} is one mapping (its keys would be read as {what}); pass a list of them")
    if not isinstance(value, Iterable):
        raise BadInput(f"{name} must be a list of {what}, got {shown(value)}")
    return value


def instance(name: str, value: Any, kind: type, hint: str = "") -> Any:
    if not isinstance(value, kind):
        raise BadInput(f"{name} must be a {kind.__name__}{hint}, got {shown(value)}")
    return value


def one_of(choices: Iterable[str]) -> Callable[[str, Any], str]:
    """The check of a value from a fixed set (``--steps``: paper or reference)."""
    allowed = tuple(choices)

    def chosen(name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise BadInput(f"{name} must be one of {', '.join(allowed)}, got {shown(value)}")
        return value

    chosen.completes = allowed  # type: ignore[attr-defined]  # the values the shells offer
    return chosen


def some_of(choices: Iterable[str]) -> Callable[[str, Any], tuple[str, ...]]:
    """The check of several values from a fixed set, as a comma list (``morf,lerf``, any case)
    or a sequence of names."""
    allowed = tuple(choices)

    def chosen(name: str, value: Any) -> tuple[str, ...]:
        picked = tuple(item.lower() for item in names(name, value))
        if any(item not in allowed for item in picked):
            raise BadInput(f"{name} must be a comma list of {', '.join(allowed)}, got {','.join(picked)!r}")
        return picked

    chosen.completes = (",".join(allowed), *allowed)  # type: ignore[attr-defined]
    return chosen


def optional(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """``check``, where None means "not given"."""

    def maybe(name: str, value: Any) -> Any:
        return None if value is None else check(name, value)

    maybe.completes = getattr(check, "completes", None)  # type: ignore[attr-defined]
    return maybe
