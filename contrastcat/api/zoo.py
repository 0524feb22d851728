"""The embedded models as ``contrastcat models list`` shows them: read from their cache folders
and the alias table alone (listing needs neither torch nor the training code)."""

from __future__ import annotations

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
                "held_out_accuracy": metadata["held_out_accuracy"] if metadata else None,
                # Entries made before 0.7 do not record it (they trained under bfloat16 autocast).
                "training_dtype": metadata.get("training_dtype") if metadata else None,
                "trained_on": metadata.get("trained_on") if metadata else None,
                "weights_fingerprint": metadata.get("weights_fingerprint") if metadata else None,
                "path": str(entry_dir(name)),
            }
        )
    return rows
