"""Models and libraries by name: load_model, open_library, and the embedded models."""

from __future__ import annotations

import os
from collections.abc import Callable

from .. import arguments as check
from ..errors import BadInput
from ..library import RefLibrary
from ..models import Classifier


def load_model(name: str, device: str = "auto", dtype: str = "auto") -> Classifier:
    """An alias (``minilm-rt``, ``roberta-sst2``, ...), a hub id or a local directory, loaded with
    eager attention; embedded models are trained on first use and cached."""
    import torch

    from ..models.resolve import load_classifier

    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if not isinstance(name, str) or not name.strip() or "\0" in name:
        raise BadInput(f"load_model: name must be an alias, a hub id or a model directory, got {check.shown(name)}")
    if not isinstance(device, (str, torch.device)):
        raise BadInput(f"load_model: device must be a string (auto, cpu, cuda:0) or a torch.device, got {check.shown(device)}")
    if not isinstance(dtype, (str, torch.dtype)):
        raise BadInput(f"load_model: dtype must be a string (auto, float32, ...) or a torch.dtype, got {check.shown(dtype)}")
    return load_classifier(name, device, dtype=dtype)


def open_library(path: str | os.PathLike) -> RefLibrary:
    """A reference library written by ``build_library`` or ``contrastcat build-refs``, verified."""
    return RefLibrary(check.path("open_library: path", path))


def embedded_models() -> list[dict]:
    """The embedded models (``contrastcat models list``): per model its name, what it is, whether it is
    prepared (``status`` says why not), and, once prepared, its held-out accuracy, how it was
    trained, its weights' fingerprint and its cache folder."""
    from ..models.zoo import EMBEDDED, entry_status
    from ..models.zoo.cache import entry_dir, read_metadata

    rows = []
    for name, spec in EMBEDDED.items():
        ready, why = entry_status(name)
        metadata = read_metadata(entry_dir(name)) if ready else None
        rows.append(
            {
                "name": name,
                "summary": spec.summary,
                "ready": ready,
                "status": "ready" if ready else why,
                "held_out_accuracy": metadata["held_out_accuracy"] if metadata else None,
                # Entries made before 0.7 do not record it (they trained under bfloat16 autocast).
                "training_dtype": metadata.get("training_dtype") if metadata else None,
                "trained_on": metadata.get("trained_on") if metadata else None,
                "weights_fingerprint": metadata.get("weights_fingerprint") if metadata else None,
                "path": str(entry_dir(name)),
            }
        )
    return rows


def prepare_model(
    name: str,
    *,
    force: bool = False,
    quick: bool = False,
    device: str = "auto",
    progress: Callable[[str, int, int | None], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> str:
    """Fine-tune the embedded model ``name`` now and cache it (``load_model`` would on first use);
    one already prepared is kept (``notify`` hears what it scored) unless ``force``. Returns its
    cache folder. ``quick``: a few steps on a few hundred rows, for tests."""
    from ..models.devices import resolve_device
    from ..models.zoo import EMBEDDED, entry_status, prepare
    from ..models.zoo.cache import entry_dir, read_metadata
    from ..models.zoo.registry import describe_entry

    name = check.text("prepare_model: name", name)
    if name not in EMBEDDED:
        raise BadInput(f"unknown embedded model {name!r} (available: {', '.join(EMBEDDED)})")
    force, quick = check.flag("prepare_model: force", force), check.flag("prepare_model: quick", quick)
    progress, notify = check.callback("prepare_model: progress", progress), check.callback("prepare_model: notify", notify)
    device = resolve_device(check.text("prepare_model: device", device))
    if entry_status(name, quick)[0] and not force:
        if notify:
            notify(describe_entry(name, read_metadata(entry_dir(name))))
        return str(entry_dir(name))
    return str(prepare(name, progress, notify, force=force, quick=quick, device=device))
