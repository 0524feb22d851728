"""The interface every attribution method implements.

A method is a pure function of captured tensors (and, for Contrast-CAT, of
the reference library): it returns, per input, one or more candidate maps
over the input's real tokens, each min–max scaled to [0, 1], and a method of
one map also that map before the scaling (its own units, signed where the
method is: what a record keeps as ``raw_scores``). Whether several
candidates are refined by a deletion test or averaged is decided by the
pipeline (``contrastcat.deletion.refine``), not by the method. The few methods that
need more model passes than the captured one (integrated gradients, TIS) get
them through ``ModelPasses``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

import torch

from ..capture.core import Captured
from ..deletion.refine import RefineSettings
from ..errors import BadInput
from ..spec import Names, backticked
from .options import MethodOptions, NoOptions

if TYPE_CHECKING:
    from ..capture.passes import ModelPasses

class ReferenceSource(Protocol):
    """What a method needs from a reference library."""

    def references(
        self, target: int, count: int, device: torch.device, pool: str = "contrast", rows: Sequence[int] | None = None
    ) -> torch.Tensor:
        """[K, L, T_max, n] activations, zero-padded: the first ``count`` references of ``pool`` for ``target``, or its ``rows``."""

    def pool_size(self, pool: str, target: int) -> int:
        """How many references ``pool`` holds for ``target``."""


def input_seed(seed: int, ids: Sequence[int]) -> int:
    """A seed for one input, derived from the input itself: batching and order change nothing."""
    digest = hashlib.sha256(f"{seed}:{','.join(map(str, ids))}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True)
class Candidates:
    """One input's candidate maps: ``scaled`` [K, T], each min–max scaled (what the deletion test
    ranks and the pipeline averages), and ``raw`` [T], the method's one map before that scaling
    (its own units, signed where the method is). ``raw`` is None where the final map averages
    candidates (Contrast-CAT's): its raw map is then that average, before the last scaling."""

    scaled: torch.Tensor
    raw: torch.Tensor | None = None


class AttributionMethod(ABC):
    """Base class: a name, a one-line summary, its options, what it needs, and ``candidate_maps``.

    ``Method(**values)`` builds ``Options`` from keyword values (an unknown or
    misspelt name is an error listing the valid ones); ``Method(options=...)``
    takes a ready options object.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    Options: ClassVar[type[MethodOptions]] = NoOptions
    needs: frozenset[str]  # what capture must record (see contrastcat.capture.core)
    uses_library: bool = False
    # Its map is signed: a score below 0 is evidence against the target (records.spans.SIGNED_METHODS
    # names these for the views, which the records' own display must reach without the methods).
    signed: ClassVar[bool] = False

    def __init__(self, options: MethodOptions | None = None, **values) -> None:
        if options is not None and values:
            raise TypeError("give options or keyword values, not both")
        if options is not None and not isinstance(options, self.Options):
            raise BadInput(f"method {self.name} takes {self.Options.__name__}, not {type(options).__name__}")
        self.options = options if options is not None else self.Options.build(self.name, **values)

    @property
    def pools_needed(self) -> dict[str, int]:
        """Pool of the library -> how many references per class it reads from it, when it
        uses one (checked before any work)."""
        return {"contrast": 0}

    def check_model(self, num_layers: int, named: Names = backticked) -> None:
        """What the options ask of a model of ``num_layers`` layers, checked before any pass
        (``named`` spells an option as the caller does)."""

    def count_option(self, named: Names = backticked) -> str:
        """The option and value that set how many references it reads, for the library's refusal."""
        return named("refs_used")

    @property
    def refinement(self) -> RefineSettings | None:
        """How several candidate maps are refined by deletion test; None: they are averaged."""
        return None

    @property
    def selects_by_deletion(self) -> bool:
        """Whether its deletion test chooses among several maps (what the fitted mark of
        evaluate needs to know): a test over one map, or keeping every map, chooses nothing."""
        return self.refinement is not None

    @property
    def occludes(self) -> str | None:
        """The perturbation under which this method's map is the leave-one-out drop itself
        (occlusion's): evaluate's leave-one-out τ under it measures the map against its own
        values. None for every other method."""
        return None

    def settings(self) -> dict:
        """The options that change this method's output, recorded with every record."""
        return self.options.settings()

    @abstractmethod
    def candidate_maps(
        self, captured: Captured, library: ReferenceSource | None = None, passes: ModelPasses | None = None
    ) -> list[Candidates]:
        """Per input b, its [K_b, T_b] min–max scaled maps over its real tokens (and, of one map, that
        map unscaled)."""
