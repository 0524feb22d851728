"""The interface every attribution method implements.

A method is a pure function of captured tensors (and, for Contrast-CAT, of
the reference library): it returns, per input, one or more candidate maps
over the input's real tokens, each min–max scaled to [0, 1]. Whether several
candidates are refined by a deletion test or averaged is decided by the
pipeline (``contrastcat.refine``), not by the method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Protocol

import torch

from ..capture import Captured
from ..refine import RefineSettings

class ReferenceSource(Protocol):
    """What a method needs from a reference library."""

    def references(self, target: int, count: int, device: torch.device) -> torch.Tensor:
        """[K, L, T_max, n] activations of the first ``count`` references for ``target``, zero-padded."""


def minmax(scores: torch.Tensor) -> torch.Tensor:
    """Scale the last dimension to [0, 1]; a constant map becomes all zeros.

    The reference code divides by 1e-6 instead of 0 when max == min; the
    result is the same zero map, and that is kept.
    """
    low = scores.min(dim=-1, keepdim=True).values
    high = scores.max(dim=-1, keepdim=True).values
    span = high - low
    span = torch.where(span == 0, torch.full_like(span, 1e-6), span)
    return (scores - low) / span


class AttributionMethod(ABC):
    """Base class: a name, a one-line summary, what it needs, and ``candidate_maps``."""

    name: ClassVar[str]
    summary: ClassVar[str]
    needs: ClassVar[frozenset[str]]
    uses_library: ClassVar[bool] = False

    @property
    def refinement(self) -> RefineSettings | None:
        """How several candidate maps are refined by deletion test; None: they are averaged."""
        return None

    def settings(self) -> dict:
        """The options that change this method's output, recorded with every record."""
        return {}

    @abstractmethod
    def candidate_maps(self, captured: Captured, library: ReferenceSource | None) -> list[torch.Tensor]:
        """Per input b, a [K_b, T_b] tensor of min–max scaled maps over its real tokens."""
