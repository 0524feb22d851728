"""Seeded random scores: the floor every method must beat."""

from __future__ import annotations

import hashlib

import torch

from ..capture import Captured
from .base import AttributionMethod, ReferenceSource, minmax


class RandomScores(AttributionMethod):
    name = "random"
    summary = "uniform random scores, seeded per input (a floor for the metrics)"
    needs = frozenset()

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def settings(self) -> dict:
        return {"seed": self.seed}

    def candidate_maps(self, captured: Captured, library: ReferenceSource | None) -> list[torch.Tensor]:
        maps = []
        for ids in captured.token_ids:
            # Seeded from the input itself, so batching and order change nothing.
            digest = hashlib.sha256(f"{self.seed}:{','.join(map(str, ids))}".encode()).digest()
            generator = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little"))
            scores = torch.rand(len(ids), generator=generator, dtype=torch.float64).float()
            maps.append(minmax(scores)[None].to(captured.logits.device))
        return maps
