"""Model families, adapters, loading a checkpoint, and every forward pass."""

from .adapters import Adapter, adapter_for
from .families import FAMILIES, Family
from .forward import classify, predictor
from .loading import Classifier, load_pretrained, recast, weights_fingerprint, wrap_classifier
from .precision import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES, resolve_forward_dtype

__all__ = [
    "DTYPE_CHOICES",
    "FORWARD_DTYPE_CHOICES",
    "FAMILIES",
    "Adapter",
    "Classifier",
    "Family",
    "adapter_for",
    "classify",
    "load_pretrained",
    "predictor",
    "recast",
    "resolve_forward_dtype",
    "weights_fingerprint",
    "wrap_classifier",
]
