"""What identifies a run beyond its inputs: one definition for ``--resume``'s checkpoint, ``--shard``'s
part files and the records both check. Two runs that differ in any of it do not write the same
bytes, so their work is never joined."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..models import Classifier
from ..version import __version__


def environment(batch_size: int, window: int, device: str | None = None) -> dict:
    """What records do not show but what changes their last digits: the batching, the versions,
    and once the model is placed its device and, on a CPU, the number of threads (the last bits
    of a backward pass depend on it). Without ``device``: what is known before the model loads,
    so a run made otherwise is refused before any work."""
    found = {"batch_size": batch_size, "window": window, "contrastcat": __version__, "torch": torch.__version__}
    if device is not None:
        found |= {"device": device, "threads": torch.get_num_threads() if device == "cpu" else None}
    return found


def run_identity(methods, settings: Sequence[dict], classifier: Classifier, library, target, options) -> dict:
    """What every shard of one run shares (compared as a whole: key order is not part of it)."""
    return {
        **environment(options.batch_size, options.window, classifier.device.type),
        **classifier.identity(),
        "methods": [method.name for method in methods],
        "settings": list(settings),
        "library": library.fingerprint if library is not None else None,
        "target": target,
        "max_length": options.max_length,
        **({"words": True} if options.words else {}),  # a run without --words stays as it was
    }
