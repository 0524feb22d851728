"""What the commands use when the user names no file: the card's two commands work as written.

    contrastcat build-refs --model minilm-rt          # writes ./refs.h5
    contrastcat explain input.jsonl -o attr.jsonl     # uses ./refs.h5 and its model

- ``build-refs`` without ``-o`` writes :data:`DEFAULT_LIBRARY` in the current
  directory. A file already there is replaced only when it is a library of the
  same model (by name, loaded source or weights); anything else (another
  model's library, a file that is no library) is refused: ``-o`` says to
  replace it.
- ``explain`` without ``--refs`` and ``--model`` uses ``./refs.h5`` and the
  model it was built for; with no ``./refs.h5``, the embedded
  :data:`DEFAULT_MODEL` and its library, built with ``build-refs``' defaults
  from the model's own training data on first use and cached beside the
  models (rebuilt when the model or the library format changes; any alias
  has such a library, ``api.cached_library``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInput, ContrastCatError
from ..models import Classifier
from ..models.aliases import lookup_alias
from . import LibraryInfo, RefLibrary

DEFAULT_LIBRARY = "refs.h5"
DEFAULT_MODEL = "minilm-rt"


ADVICE = "build-refs without -o replaces only a library of the same model: pass -o to choose the file"


def replaceable(path: str | os.PathLike) -> LibraryInfo | None:
    """Before any work (the model not loaded yet): what ``path``, the default output, holds.
    None when nothing is there; a file that is no usable library is refused."""
    if not os.path.lexists(path):
        return None
    try:
        return RefLibrary(path).info
    except ContrastCatError as error:
        why = str(error).removeprefix(f"{path}: ")
        raise BadInput(f"{path}: exists and is not a usable reference library ({why}); {ADVICE}") from None


def check_same_model(path: str | os.PathLike, info: LibraryInfo | None, classifier: Classifier) -> None:
    """Refuse to replace the library ``info`` at ``path`` unless it was built for ``classifier``'s
    model: the same weights, the same source (a hub id, an absolute directory) or the same
    alias (an embedded model trained again replaces its library). Other names are not
    compared: ``./model`` in two directories is two models."""
    if info is None or classifier.fingerprint == info.model_fingerprint or classifier.source == info.model_source:
        return
    if lookup_alias(classifier.name) is not None and classifier.name == info.model:
        return
    raise BadInput(
        f"{path}: holds a library built for model {info.model!r} ({info.model_source}), not {classifier.name!r} "
        f"({classifier.source}); {ADVICE} (-o {path} replaces it)"
    )


def cached_library_path(name: str, weights: str = "float32") -> Path:
    """Where the default library of the model alias ``name`` with weights in ``weights`` is
    cached (see ``api.cached_library``): one file per precision, so runs at two ``--dtype``
    do not rebuild each other's."""
    from ..models.zoo import cache

    suffix = "" if weights == "float32" else f"-{weights}"
    return cache.cache_root() / "libraries" / f"{name}{suffix}.h5"


def unnamed_sources() -> tuple[str | None, str | None]:
    """(library, model) for explain when the user names neither: ``./refs.h5`` (its model
    comes from it) if it exists, else the default embedded model (its library: the cached one)."""
    return (DEFAULT_LIBRARY, None) if os.path.lexists(DEFAULT_LIBRARY) else (None, DEFAULT_MODEL)
