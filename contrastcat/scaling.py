"""Min–max scaling: the one definition every layer uses (methods' maps, refinement's mean map,
the shading of a view)."""

from __future__ import annotations

import numpy as np


def minmax(values):
    """``values`` (a numpy array or a torch tensor) scaled to [0, 1] along the last axis; a
    constant row becomes all zeros.

    The reference code divides by 1e-6 instead of 0 when max == min; the result is the same
    zero row, and that is kept (so the arithmetic, and every bit, is the reference's)."""
    if isinstance(values, np.ndarray):
        low, high = values.min(axis=-1, keepdims=True), values.max(axis=-1, keepdims=True)
    else:  # a tensor: the same operations under torch's names
        low, high = values.amin(dim=-1, keepdim=True), values.amax(dim=-1, keepdim=True)
    span = high - low
    span[span == 0] = 1e-6
    return (values - low) / span
