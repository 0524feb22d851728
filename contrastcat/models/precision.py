"""The weights' precision (``--dtype``).

``auto`` keeps a checkpoint's own dtype on a GPU and uses float32 on a CPU,
where bfloat16 and float16 are slower than float32 except on recent CPUs
and lose precision. Whatever the weights, captured tensors are cast to
float32 before any method sums them (see ``contrastcat.capture``).
"""

from __future__ import annotations

import torch

from ..errors import BadInput

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
AUTO = "auto"
DTYPE_CHOICES = (AUTO, *DTYPES)


def resolve_dtype(spec: str | torch.dtype, device: torch.device) -> torch.dtype | str:
    """A torch dtype, or "auto" (the checkpoint's own dtype) for ``from_pretrained`` on a GPU."""
    if isinstance(spec, torch.dtype):
        return spec
    if spec == AUTO:
        return AUTO if device.type == "cuda" else torch.float32
    if spec not in DTYPES:
        raise BadInput(f"--dtype must be one of {', '.join(DTYPE_CHOICES)}, got {spec!r}")
    return DTYPES[spec]


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# Forward-only passes (the deletion test, evaluate's curves, build-refs' scan)
# are nearly all of the time and need no gradient; they can run under autocast
# while the captured forward and backward keep the weights' precision.
SAME = "same"
FORWARD_DTYPE_CHOICES = (SAME, *DTYPES)


def resolve_forward_dtype(spec: str | torch.dtype | None) -> torch.dtype | None:
    """The autocast dtype of forward-only passes, or None: the weights' own precision."""
    if spec is None or isinstance(spec, torch.dtype):
        return spec
    if spec == SAME:
        return None
    if spec not in DTYPES:
        raise BadInput(f"--forward-dtype must be one of {', '.join(FORWARD_DTYPE_CHOICES)}, got {spec!r}")
    return DTYPES[spec]


def forward_precision(device: torch.device, dtype: torch.dtype | None):
    """The context a forward-only pass runs in: autocast to ``dtype``, or nothing."""
    import contextlib

    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def effective_forward_dtype(spec: str, weights: torch.dtype) -> str:
    """The ``--forward-dtype`` a run uses and records: ``same`` when it is the weights' own
    precision; a lower one only below float32 weights (autocast cannot raise precision)."""
    resolve_forward_dtype(spec)
    if spec == SAME or DTYPES[spec] == weights:
        return SAME
    if weights != torch.float32:
        raise BadInput(
            f"--forward-dtype {spec}: the weights are {dtype_name(weights)}, and autocast only lowers the "
            "precision of float32 weights (load them with --dtype float32)"
        )
    return spec
