"""Precision: the weights' (``--dtype``), the forward-only passes' (``--forward-dtype``),
and whether the hardware runs a half precision natively.

``--dtype auto`` keeps a checkpoint's own dtype on a GPU and uses float32 on a CPU,
where bfloat16 and float16 are slower than float32 except on recent CPUs
and lose precision. Whatever the weights, captured tensors are cast to
float32 before any method sums them (see ``contrastcat.capture.core``).

A CPU without bfloat16 units (no AMX, no AVX-512 BF16: every AVX2-only CPU
and many AVX-512 ones) emulates bfloat16 in software: measured with
all-MiniLM-L6-v2, one thread, a forward pass ran 3.9x (AVX-512 kernels) to
5.5x (AVX2 kernels) slower than float32 and a training step 3.2x to 14x
slower (``benchmarks/precision_speed.py``, docs/performance.md). Half
precision is therefore chosen (``--forward-dtype auto``, the embedded models'
training) only where it is native; asked for by name elsewhere, it runs
with a warning.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import warnings

import torch

from ..errors import BadInput, SlowPrecision
from ..spec import Names, backticked
from .dtypes import AUTO, DTYPE_CHOICES, FORWARD_DTYPE_CHOICES, SAME

# By the names of dtypes.FLOAT_NAMES (the options read those without torch; a test holds them equal).
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_dtype(spec: str | torch.dtype, device: torch.device) -> torch.dtype | str:
    """A torch dtype, or "auto" (the checkpoint's own dtype) for ``from_pretrained`` on a GPU."""
    if isinstance(spec, torch.dtype):
        return spec
    if spec == AUTO:
        return AUTO if device.type == "cuda" else torch.float32
    if spec not in DTYPES:
        raise BadInput(f"`dtype` must be one of {', '.join(DTYPE_CHOICES)}, got {spec!r}")
    warn_if_emulated(DTYPES[spec], device, "weights")
    return DTYPES[spec]


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# Forward-only passes (the deletion test, evaluate's curves, build-refs' scan)
# are nearly all of the time and need no gradient; they can run under autocast
# while the captured forward and backward keep the weights' precision.


def check_forward_dtype(spec: str) -> None:
    """A spelling of ``--forward-dtype``, checked before any work."""
    if spec not in FORWARD_DTYPE_CHOICES:
        raise BadInput(f"`forward_dtype` must be one of {', '.join(FORWARD_DTYPE_CHOICES)}, got {spec!r}")


def resolve_forward_dtype(spec: str | torch.dtype | None) -> torch.dtype | None:
    """The autocast dtype of forward-only passes, or None: the weights' own precision.
    ``auto`` depends on the hardware: resolve it with :func:`effective_forward_dtype` first."""
    if spec is None or isinstance(spec, torch.dtype):
        return spec
    check_forward_dtype(spec)
    if spec == AUTO:
        raise ValueError("`forward_dtype` auto must be resolved against the classifier first")
    return None if spec == SAME else DTYPES[spec]


def forward_precision(device: torch.device, dtype: torch.dtype | None):
    """The context a forward-only pass runs in: autocast to ``dtype``, or nothing."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def effective_forward_dtype(spec: str, weights: torch.dtype, device: torch.device, named: Names = backticked) -> str:
    """The ``--forward-dtype`` a run uses and records: ``same`` when it is the weights' own
    precision; a lower one only below float32 weights (autocast cannot raise precision).

    ``auto`` is bfloat16 where the device runs it natively and the weights are float32,
    else ``same``. A half precision asked for by name on a device that would emulate it
    runs, with a :class:`SlowPrecision` warning (once per place, as Python shows warnings)."""
    check_forward_dtype(spec)
    if spec == AUTO:
        return dtype_name(torch.bfloat16) if weights == torch.float32 and native(torch.bfloat16, device) else SAME
    if spec == SAME or DTYPES[spec] == weights:
        return SAME
    if weights != torch.float32:
        raise BadInput(
            f"{named('forward_dtype')} {spec}: the weights are {dtype_name(weights)}, and autocast only lowers the "
            f"precision of float32 weights (load them with {named('dtype')} float32)"
        )
    warn_if_emulated(DTYPES[spec], device, "forward passes")
    return spec


def on_classifier(options, classifier, named: Names = backticked):
    """``options`` (any settings with a ``forward_dtype``) as a run on ``classifier`` uses and
    records them: ``auto`` resolved by the hardware, the weights' own precision as ``same``
    (``named`` spells an option as the caller does)."""
    chosen = effective_forward_dtype(options.forward_dtype, classifier.dtype, classifier.device, named)
    return dataclasses.replace(options, forward_dtype=chosen)


# --- what the hardware runs natively -------------------------------------------------------

NATIVE_BF16_ENV = "CONTRASTCAT_NATIVE_BF16"  # "0" or "1": overrides the detection (to measure the other path)


def forced_bfloat16() -> bool | None:
    """``$CONTRASTCAT_NATIVE_BF16``: True (1) or False (0) overrides the detection; unset or empty: None."""
    forced = os.environ.get(NATIVE_BF16_ENV, "")
    if forced not in ("", "0", "1"):
        raise BadInput(f"${NATIVE_BF16_ENV} must be 0 or 1 (or unset), got {forced!r}")
    return None if forced == "" else forced == "1"


def _cpu_supports(query: str) -> bool:
    """One of torch's own CPU feature queries (``torch.cpu._is_amx_tile_supported`` ...);
    False where this torch does not have it."""
    check = getattr(torch.cpu, query, None)
    try:
        return bool(check()) if check is not None else False
    except RuntimeError:
        return False


def native(dtype: torch.dtype, device: torch.device) -> bool:
    """Whether ``device`` computes in ``dtype`` in hardware rather than emulating it.

    float32 always. bfloat16: a CUDA GPU that supports it without emulation; a CPU with
    AMX tiles or AVX-512 BF16 (``$CONTRASTCAT_NATIVE_BF16`` = 0 or 1 overrides this).
    float16: any CUDA GPU; a CPU with AMX-FP16."""
    if dtype == torch.float32:
        return True
    if dtype == torch.bfloat16:
        forced = forced_bfloat16()
        if forced is not None:
            return forced
        if device.type == "cuda":
            try:
                return bool(torch.cuda.is_bf16_supported(including_emulation=False))
            except TypeError:  # torch < 2.4 has no including_emulation: its answer is the hardware's
                return bool(torch.cuda.is_bf16_supported())
        return device.type == "cpu" and (_cpu_supports("_is_amx_tile_supported") or _cpu_supports("_is_avx512_bf16_supported"))
    if dtype == torch.float16:
        return device.type == "cuda" or (device.type == "cpu" and _cpu_supports("_is_amx_fp16_supported"))
    return False


def _cpu_units() -> str:
    """The CPU as torch sees it: its vector capability and its half-precision units."""
    units = [name for name, query in (("AMX", "_is_amx_tile_supported"), ("AVX512-BF16", "_is_avx512_bf16_supported"))
             if _cpu_supports(query)]
    return "+".join([torch.backends.cpu.get_cpu_capability(), *units])


def describe_hardware(device: torch.device) -> str:
    """The device as a timing should name it: the CPU's vector capability and whether it runs
    bfloat16 natively, or the GPU's name."""
    if device.type == "cuda":
        return f"CUDA {torch.cuda.get_device_name(device)}"
    if device.type != "cpu":
        return str(device)
    forced = f" (as ${NATIVE_BF16_ENV} says, not the hardware)" if forced_bfloat16() is not None else ""
    return f"CPU {_cpu_units()}, bfloat16 {'native' if native(torch.bfloat16, device) else 'emulated'}{forced}"


# benchmarks/precision_speed.py on a Xeon without AMX or AVX-512 BF16 (docs/performance.md): one
# forward pass of all-MiniLM-L6-v2, 64 x 32 tokens, one thread, under autocast against float32.
EMULATED_COST = {
    torch.bfloat16: "3.9x slower with AVX-512 kernels, 5.5x with AVX2 ones",
    torch.float16: "9.1x slower with AVX-512 kernels, 5.6x with AVX2 ones",
}


def warn_if_emulated(dtype: torch.dtype, device: torch.device, what: str) -> None:
    """Say that ``what`` (weights, forward passes) are asked for in a precision this device only
    emulates (it runs anyway). The message names what runs slower, not the option that asked,
    so it reads the same from the shell and from Python."""
    if native(dtype, device):
        return
    name = dtype_name(dtype)
    if device.type == "cpu":
        units = "AMX or AVX-512 BF16" if dtype == torch.bfloat16 else "AMX-FP16"
        where = f"this CPU ({_cpu_units()}) has no {units}"
        if dtype == torch.bfloat16 and forced_bfloat16() is False:  # the hardware may have them: say who decided
            where = f"this CPU ({_cpu_units()}) is taken to have no {units} (${NATIVE_BF16_ENV}=0)"
        cost = f" (measured for a forward pass: {EMULATED_COST[dtype]}; docs/performance.md)"
    else:
        where, cost = f"{describe_hardware(device)} has no {name} units", ""
    warnings.warn(
        f"{what} in {name}: {where}, so {name} is emulated and runs slower than float32, not faster{cost}",
        SlowPrecision,
        stacklevel=2,
    )
