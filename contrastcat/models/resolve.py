"""From a model name to a loaded classifier: aliases, embedded models, hub ids, directories.

This sits above ``models`` (loading any checkpoint) and ``zoo`` (training the
embedded models), which do not import each other's way up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import torch

from ..errors import BadInput
from ..spec import Names, backticked
from . import Classifier, load_pretrained
from .aliases import ModelAlias, lookup_alias
from .devices import resolve_device


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or os.sep in name and not _is_hub_id(name)


def _is_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def _is_dir(path: Path) -> bool:
    """``path.is_dir()``, false where the name cannot even be looked up (longer than the system
    allows, say: Python 3.11 raises for that rather than answering no)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def resolve_source(name: str) -> tuple[str, ModelAlias | None]:
    """Map ``name`` to what ``from_pretrained`` should load."""
    alias = lookup_alias(name)
    if alias is not None:
        return alias.model_id, alias
    expanded = Path(name).expanduser()
    if _is_dir(expanded):
        return str(expanded.resolve()), None
    if _looks_like_path(name) or _exists(expanded):
        raise BadInput(f"model {name!r}: no such directory (give an alias, a hub id or a local model directory)")
    return name, None


def model_location(name: str | Classifier) -> str | None:
    """The directory ``name`` loads from, where it is known without loading: a local
    directory, or an embedded model's cache entry (outputs must stay out of it); for a
    classifier already loaded, the directory it came from, if any."""
    if isinstance(name, Classifier):
        return name.source if _is_dir(Path(name.source)) else None
    if not name:
        return None
    alias = lookup_alias(name)
    if alias is not None and alias.embedded:
        from .zoo import cache

        return str(cache.entry_dir(name))
    expanded = Path(name).expanduser()
    return str(expanded) if _is_dir(expanded) else None


def load_classifier(
    name: str,
    device: str | torch.device = "auto",
    progress: Callable[[str, int, int], None] | None = None,
    notify: Callable[[str], None] | None = None,
    dtype: str | torch.dtype = "auto",
) -> Classifier:
    """Load an alias, hub id or local directory. Embedded aliases are trained on first
    use (``progress`` sees the training, ``notify`` gets one-line notices)."""
    target_device = device if isinstance(device, torch.device) else resolve_device(device)
    alias = lookup_alias(name)
    if alias is not None and alias.embedded:
        from .zoo import load_embedded

        return load_embedded(name, target_device, progress, notify, dtype=dtype)
    source, alias = resolve_source(name)
    return load_pretrained(
        source, name=name, device=target_device, dtype=dtype, label_names=alias.label_names if alias else None
    )


def classifier_for(
    model: str | Classifier,
    device: str | torch.device = "auto",
    progress: Callable[[str, int, int], None] | None = None,
    notify: Callable[[str], None] | None = None,
    dtype: str | torch.dtype = "auto",
) -> Classifier:
    """``model`` loaded by name (:func:`load_classifier`), or a classifier loaded already
    (``contrastcat.load_model``, a model in memory included), used as it is."""
    if not isinstance(model, Classifier):
        return load_classifier(model, device, progress, notify, dtype)
    for option, value in (("device", device), ("dtype", dtype)):
        if value != "auto":
            raise BadInput(f"`{option}` goes with a model name: a loaded classifier keeps its own (leave it auto)")
    return model


def library_model(library, named: Names = backticked) -> str:
    """The model a library was built with, as ``load_classifier`` takes it: its alias,
    else the directory it loaded (if it is still there), else its hub id."""
    info = library.info
    if lookup_alias(info.model) is not None:
        return info.model
    source = info.model_source
    if _is_dir(Path(source)):
        return source
    if Path(source).is_absolute():  # a local directory when the library was built (hub ids are not paths)
        raise BadInput(
            f"{library.path}: built for model {info.model!r} loaded from {source}, which is not a directory "
            f"any more: name the model's directory now with {named('library')} {library.path} {named('model')} DIR"
        )
    return info.model
