"""The embedded models as ``contrastcat models list`` shows them: read from their cache folders
and the alias table alone (listing needs neither torch nor the training code)."""

from __future__ import annotations

import math

from ..models.aliases import ALIASES, EMBEDDED_NAMES
from ..models.zoo.cache import entry_dir, entry_status, read_metadata


def embedded_models() -> list[dict]:
    """The embedded models (``contrastcat models list``): per model its name, what it is, whether it is
    prepared (``status`` says why not), and, once prepared, its held-out accuracy, how it was
    trained, its weights' fingerprint and its cache folder."""
    rows = []
    for name in EMBEDDED_NAMES:
        ready, why = entry_status(name)
        metadata = read_metadata(entry_dir(name)) if ready else None
        rows.append(
            {
                "name": name,
                "summary": ALIASES[name].made_here.summary,
                "ready": ready,
                "status": "ready" if ready else why,
                "held_out_accuracy": _accuracy(metadata),
                # Entries made before 0.7 do not record it (they trained under bfloat16 autocast).
                "training_dtype": metadata.get("training_dtype") if metadata else None,
                "trained_on": metadata.get("trained_on") if metadata else None,
                "weights_fingerprint": metadata.get("weights_fingerprint") if metadata else None,
                "path": str(entry_dir(name)),
            }
        )
    return rows


def _accuracy(metadata: dict | None) -> float | None:
    """The held-out accuracy the entry wrote; None where it wrote none a table can show (an
    entry edited or damaged: listing it must not fail)."""
    value = (metadata or {}).get("held_out_accuracy")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None
