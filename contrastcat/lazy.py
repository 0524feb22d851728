"""A package's public names, each imported from its own module on first use (PEP 562).

``import contrastcat.models`` then costs nothing until a name is used: the command line's
``--help``, its completions and the option checks that need no model import the light modules
they use, never torch or transformers through a package's ``__init__``. A package lists its
names in ``LAZY`` (name -> the module that defines it); the layering test reads that table as
the imports it is.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, table: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``table`` maps each public name to the
    module that defines it, one of the package's (``loading``) or a relative name
    (``..usecases.merge``); a name is imported once, then kept as the package's."""

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if module.startswith(".") else f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return getattr_, dir_
