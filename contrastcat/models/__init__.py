"""Model families, adapters, loading a checkpoint, and every forward pass.

Each name is imported from its module on first use (``contrastcat.lazy``): the light ones
(``DTYPE_CHOICES``) never bring torch or transformers with them."""

from ..lazy import lazy_names

LAZY = {
    "DTYPE_CHOICES": "dtypes",
    "FORWARD_DTYPE_CHOICES": "dtypes",
    "FAMILIES": "families",
    "Adapter": "adapters",
    "Classifier": "loading",
    "Family": "families",
    "adapter_for": "adapters",
    "classify": "forward",
    "load_pretrained": "loading",
    "predictor": "forward",
    "recast": "loading",
    "resolve_forward_dtype": "precision",
    "weights_fingerprint": "loading",
    "wrap_classifier": "loading",
}
__all__ = list(LAZY)
__getattr__, __dir__ = lazy_names(__name__, LAZY)
