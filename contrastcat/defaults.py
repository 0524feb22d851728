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

from .errors import BadInput, ContrastCatError
from .library import RefLibrary
from .models import Classifier

DEFAULT_LIBRARY = "refs.h5"
DEFAULT_MODEL = "minilm-rt"


def check_replaceable(path: str | os.PathLike, classifier: Classifier) -> None:
    """Refuse to replace ``path`` (the default output, not one the user named) unless it is
    missing or a library built for ``classifier``'s model."""
    shown = str(path)
    if not os.path.lexists(path):
        return
    advice = "build-refs without -o replaces only a library of the same model: pass -o to choose the file"
    try:
        info = RefLibrary(path).info
    except ContrastCatError as error:
        why = str(error).removeprefix(f"{shown}: ")
        raise BadInput(f"{shown}: exists and is not a usable reference library ({why}); {advice}") from None
    if classifier.fingerprint == info.model_fingerprint or classifier.name == info.model or classifier.source == info.model_source:
        return
    raise BadInput(
        f"{shown}: holds a library built for model {info.model!r}, not {classifier.name!r}; {advice} "
        f"(-o {shown} replaces it)"
    )


def cached_library_path(name: str) -> Path:
    """Where the default library of the model alias ``name`` is cached (see ``api.cached_library``)."""
    from .zoo import cache

    return cache.cache_root() / "libraries" / f"{name}.h5"


def unnamed_sources() -> tuple[str | None, str | None]:
    """(library, model) for explain when the user names neither: ``./refs.h5`` (its model
    comes from it) if it exists, else the default embedded model (its library: the cached one)."""
    return (DEFAULT_LIBRARY, None) if os.path.lexists(DEFAULT_LIBRARY) else (None, DEFAULT_MODEL)
