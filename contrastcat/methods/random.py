"""Seeded random scores: the floor every method must beat."""

from __future__ import annotations

import torch

from ..capture import Captured
from .base import AttributionMethod, input_seed, minmax


class RandomScores(AttributionMethod):
    name = "random"
    summary = "uniform random scores, seeded per input and target (a floor for the metrics)"
    needs = frozenset()

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def settings(self) -> dict:
        return {"seed": self.seed}

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[torch.Tensor]:
        maps = []
        for ids, target in zip(captured.token_ids, captured.targets.tolist()):
            # One independent draw per (input, target class): batching changes nothing.
            generator = torch.Generator().manual_seed(input_seed(self.seed, (*ids, -1, target)))
            scores = torch.rand(len(ids), generator=generator, dtype=torch.float64).float()
            maps.append(minmax(scores)[None].to(captured.logits.device))
        return maps
