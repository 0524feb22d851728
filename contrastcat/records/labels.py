"""A label as inputs and records give it (an index, a digit string or a class name) -> its class."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import BadInput


def resolve_label(value: Any, label_names: Sequence[str], where: str) -> int:
    """A label given as an index (int or digit string) or as a class name -> class index."""
    if isinstance(value, bool):
        raise BadInput(f"{where}: label {value!r} is not a class index or name")
    if isinstance(value, int) or (isinstance(value, str) and _integer_text(value)):
        index = int(value)
        if 0 <= index < len(label_names):
            return index
        raise BadInput(f"{where}: label {index} out of range (model has {len(label_names)} classes)")
    if isinstance(value, str):
        lowered = [name.lower() for name in label_names]
        if value.strip().lower() in lowered:
            return lowered.index(value.strip().lower())
    raise BadInput(f"{where}: label {_short_repr(value)} is not one of {', '.join(label_names)} or an index")


def _integer_text(text: str) -> bool:
    """ASCII digits with an optional minus: str.isdigit() also takes '²' and '٣', which int() refuses or misreads."""
    body = text.strip()
    body = body[1:] if body.startswith("-") else body
    return body.isascii() and body.isdigit()


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
