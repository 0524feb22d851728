"""Resolve the ``--device`` option; nothing else in the package picks a device."""

from __future__ import annotations

import torch

from ..errors import BadInput
from .device_names import check_device_name


def resolve_device(spec: str = "auto", named: str = "`device`") -> torch.device:
    """``auto`` means CUDA when available, else CPU; ``cuda[:N]`` must exist (``named``: the
    option as the caller spells it)."""
    check_device_name(spec, named)
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(spec)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise BadInput(f"{named} {spec}: CUDA is not available on this machine")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise BadInput(f"{named} {spec}: only {torch.cuda.device_count()} CUDA device(s) present")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise BadInput(f"{named} {spec}: MPS is not available on this machine")
    return device
