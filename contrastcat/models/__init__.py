"""Resolve model names, load classifiers, per-architecture adapters."""

from .adapters import Adapter, adapter_for
from .aliases import ALIASES, DataSource, ModelAlias, lookup_alias
from .loading import (
    Classifier,
    load_classifier,
    model_location,
    resolve_source,
    weights_fingerprint,
    wrap_classifier,
)

__all__ = [
    "ALIASES",
    "Adapter",
    "Classifier",
    "DataSource",
    "ModelAlias",
    "adapter_for",
    "load_classifier",
    "lookup_alias",
    "model_location",
    "resolve_source",
    "weights_fingerprint",
    "wrap_classifier",
]
