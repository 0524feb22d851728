"""The precisions a run may ask for, by name: what ``--dtype`` and ``--forward-dtype`` take
(``precision`` maps them to torch's dtypes; the options read them without torch)."""

from __future__ import annotations

FLOAT_NAMES = ("float32", "bfloat16", "float16")
AUTO = "auto"  # the weights: the checkpoint's own on a GPU, float32 on a CPU; the passes: half where native
SAME = "same"  # the forward-only passes in the weights' precision
DTYPE_CHOICES = (AUTO, *FLOAT_NAMES)
FORWARD_DTYPE_CHOICES = (SAME, AUTO, *FLOAT_NAMES)
