"""The fixed sets of values the public calls take: what a CLI offers as flags and completions."""

from __future__ import annotations

from ..arguments import MAX_BATCH_SIZE
from ..deletion.perturb import PERTURBATIONS
from ..deletion.plan import STEP_GRIDS
from ..methods import METHODS, OptionSpec, option_specs
from ..models import DTYPE_CHOICES, FORWARD_DTYPE_CHOICES
from ..models.zoo.registry import EMBEDDED
from ..usecases.build_refs import STORE_DTYPES
from ..usecases.explain_file import ON_ERROR
from ..usecases.render_file import COLOR_CHOICES

__all__ = [
    "COLOR_CHOICES", "ON_ERROR", "STORE_DTYPES", "DTYPE_CHOICES", "FORWARD_DTYPE_CHOICES", "MAX_BATCH_SIZE", "PERTURBATIONS", "STEP_GRIDS", "OptionSpec",
    "embedded_names", "method_names", "option_specs",
]


def method_names() -> tuple[str, ...]:
    """Every registered method, in the paper's order (``all`` in a method list means these)."""
    return tuple(METHODS)


def embedded_names() -> tuple[str, ...]:
    """The embedded models' aliases (``minilm-rt``, ...)."""
    return tuple(EMBEDDED)
