"""Seeded random scores: the floor every method must beat."""

from __future__ import annotations

import torch

from ..capture.core import Captured
from ..scaling import minmax
from .base import AttributionMethod, Candidates, input_seed
from .options import RandomOptions


class RandomScores(AttributionMethod):
    name = "random"
    summary = "uniform random scores, seeded per input and target (a floor for the metrics)"
    Options = RandomOptions
    needs = frozenset()

    @property
    def seed(self) -> int:
        return self.options.seed

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for ids, target in zip(captured.token_ids, captured.targets.tolist()):
            # One independent draw per (input, target class): batching changes nothing.
            generator = torch.Generator().manual_seed(input_seed(self.seed, (*ids, -1, target)))
            scores = torch.rand(len(ids), generator=generator, dtype=torch.float64).float()
            maps.append(Candidates(minmax(scores)[None].to(captured.logits.device), scores))
        return maps
