"""The fixed sets of values the public calls take: what a CLI offers as flags and completions.

Light: every set comes from a module that imports neither torch nor numpy, so ``--help`` and
the completions read them at once."""

from __future__ import annotations

from ..arguments import MAX_BATCH_SIZE
from ..deletion.names import PERTURBATIONS, STEP_GRIDS
from ..methods.options import OptionSpec, method_names, option_specs
from ..models.aliases import EMBEDDED_NAMES
from ..models.dtypes import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES
from ..usecases.options.build_refs import STORE_DTYPES
from ..usecases.options.explain import ON_ERROR
from ..usecases.options.render import COLOR_CHOICES

__all__ = [
    "COLOR_CHOICES", "ON_ERROR", "STORE_DTYPES", "DTYPE_CHOICES", "FORWARD_DTYPE_CHOICES", "MAX_BATCH_SIZE", "PERTURBATIONS", "STEP_GRIDS", "OptionSpec",
    "embedded_names", "method_names", "option_specs",
]


def embedded_names() -> tuple[str, ...]:
    """The embedded models' aliases (``minilm-rt``, ...)."""
    return EMBEDDED_NAMES
