"""The embedded models as ``contrastcat models list`` shows them: read from their cache folders
and the alias table alone (listing needs neither torch nor the training code); and the held-out
synthetic inputs of the planted-shortcut models, with their evidence."""

from __future__ import annotations

import math
import os

from .. import arguments as check
from ..errors import BadInput
from ..io import jsonl
from ..io.files import atomic_text_output
from ..models.aliases import ALIASES, EMBEDDED_NAMES
from ..models.zoo.cache import entry_dir, entry_status, read_metadata
from ..records.corpora import CORPORA
from ..records.data import CORPUS_PREFIX
from ..records.shortcuts import held_out_inputs


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
                "shortcut": shortcut.rule() if (shortcut := ALIASES[name].made_here.shortcut) else None,
                # Of a planted-shortcut model: the share of held-out synthetic inputs it follows its words on.
                "follow_rate": _number(((metadata or {}).get("shortcut") or {}).get("reliance", {}).get("follow_rate")),
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
    return _number((metadata or {}).get("held_out_accuracy"))


def _number(value) -> float | None:
    finite = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if finite else None


SHORTCUT_NAMES = tuple(name for name in EMBEDDED_NAMES if ALIASES[name].made_here.shortcut is not None)


def shortcut_inputs(model: str, path: str | os.PathLike | None = None) -> list[dict]:
    """The held-out synthetic inputs of a planted-shortcut model (``minilm-rt-single``,
    ``minilm-rt-pair``, ``minilm-rt-context``, ``minilm-rt-partial``, ``minilm-bbc-single``): one copy of each held-out row of
    its corpus (never a training row) with the planted words inserted, as the recipe the model was
    trained with makes them, seeded: the same list on every machine, and no model needed. Each is
    an input line ``{"id", "text", "label", "evidence", "text_label"}``: ``label`` the class the
    planted words decide (an index), ``evidence`` the ``[start, end]`` character spans (end
    excluded) of every planted word that decides it, ``text_label`` the held-out row's own label;
    where the two labels differ (half of them) the words contradict the text. ``path``: also
    written there as JSON Lines (a file name or ``pathlib.Path``; ``-``: standard output)."""
    if not isinstance(model, str) or model not in SHORTCUT_NAMES:
        raise BadInput(f"shortcut_inputs: model must be a planted-shortcut model ({', '.join(SHORTCUT_NAMES)}), "
                       f"got {check.shown(model)}")
    if path is not None:
        path = check.path("shortcut_inputs: path", path)
    alias = ALIASES[model]
    corpus = CORPORA[alias.data.name.removeprefix(CORPUS_PREFIX)]()
    lines = [planted.as_input() for planted in held_out_inputs(alias.made_here.shortcut, corpus.held_out)]
    if path is not None:
        with atomic_text_output(path) as out:
            for line in lines:
                out.write(jsonl.dumps(line) + "\n")
    return lines
