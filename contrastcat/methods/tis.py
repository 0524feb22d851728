"""TIS, Transformer Input Sampling (Englebert et al. 2023), adapted to text as in the paper's baselines.

Per input:
1. Every activation channel of every layer is a point: its profile over the
   input's non-special tokens (the activations entering each layer, A^l).
2. k-means groups the channels into ``clusters``; each centroid is a soft
   mask over the tokens.
3. Each centroid keeps its top half of the non-special tokens (ties: lower
   position first); the special tokens are always kept; the other tokens are
   removed, and the kept sequence is scored by the target probability f_c.
4. A token's score is the mean f_c of the masks that keep it (TIS's coverage
   correction); special tokens score 0.

Scoring by f_c of the masked input, or by its change f_c(masked) - f_c(x)
as the paper words it, gives the same map once min–max scaled: the two
differ by the constant f_c(x). k-means is seeded per input, so batching changes nothing.
"""

from __future__ import annotations

import torch

from ..capture.core import ACTIVATIONS, Captured
from ..capture.passes import ModelPasses
from ..errors import BadInput
from ..scaling import minmax
from .base import AttributionMethod, Candidates, input_seed
from .options import TISOptions

KEEP_RATIO = 0.5  # TIS's default share of tokens each mask keeps
ITERATIONS = 100


def kmeans(points: torch.Tensor, k: int, seed: int, iterations: int = ITERATIONS) -> tuple[torch.Tensor, torch.Tensor]:
    """Lloyd's k-means with k-means++ seeding: (centroids [k, D], assignment [N]).

    Deterministic for a given seed, on any device: it runs on the CPU in float64.
    A cluster that empties keeps its centroid.
    """
    points = points.detach().double().cpu()
    count = points.shape[0]
    k = min(k, count)
    generator = torch.Generator().manual_seed(seed % (2**63))
    first = int(torch.randint(count, (1,), generator=generator))
    centroids = [points[first]]
    distance = ((points - points[first]) ** 2).sum(dim=1)
    for _ in range(1, k):
        total = distance.sum()
        if total <= 0:  # fewer distinct points than clusters: repeat one
            index = int(torch.randint(count, (1,), generator=generator))
        else:
            index = int(torch.multinomial(distance / total, 1, generator=generator))
        centroids.append(points[index])
        distance = torch.minimum(distance, ((points - points[index]) ** 2).sum(dim=1))
    centres = torch.stack(centroids)
    assignment = torch.full((count,), -1, dtype=torch.long)
    for _ in range(iterations):
        updated = torch.cdist(points, centres).argmin(dim=1)
        if torch.equal(updated, assignment):
            break
        assignment = updated
        sums = torch.zeros_like(centres).index_add_(0, assignment, points)
        sizes = torch.bincount(assignment, minlength=k).to(points.dtype)[:, None]
        centres = torch.where(sizes > 0, sums / sizes.clamp(min=1), centres)
    return centres, assignment


def top_positions(centroid: torch.Tensor, keep: int) -> list[int]:
    order = torch.sort(-centroid, stable=True).indices
    return sorted(int(i) for i in order[:keep])


class TIS(AttributionMethod):
    name = "tis"
    summary = "k-means clusters of activation channels as token masks, scored by f_c (Englebert et al. 2023)"
    Options = TISOptions
    needs = frozenset({ACTIVATIONS})

    @property
    def clusters(self) -> int:
        return self.options.clusters

    @property
    def seed(self) -> int:
        return self.options.seed

    def candidate_maps(self, captured: Captured, library=None, passes: ModelPasses | None = None) -> list[Candidates]:
        if passes is None:
            raise BadInput("tis needs model passes (call it through contrastcat.explain or contrastcat.attribution.pipeline)")
        plans = []
        sequences: dict[tuple[int, ...], int] = {}
        for b, length in enumerate(captured.lengths):
            ids = captured.token_ids[b]
            special = captured.special[b, :length].tolist()
            positions = [i for i in range(length) if not special[i]]
            if not positions:
                plans.append((ids, positions, []))
                continue
            features = captured.activations[b, :, positions]  # [L, T_ns, n]
            points = features.permute(0, 2, 1).reshape(-1, len(positions))  # one point per channel
            centres, _ = kmeans(points, self.clusters, input_seed(self.seed, ids))
            keep = max(1, int(KEEP_RATIO * len(positions)))
            masks = []
            for centre in centres:
                kept = {positions[i] for i in top_positions(centre, keep)}
                sequence = tuple(t for i, t in enumerate(ids) if special[i] or i in kept)
                sequences.setdefault(sequence, len(sequences))
                masks.append((kept, sequence))
            plans.append((ids, positions, masks))
        probs = passes.probabilities(list(sequences)) if sequences else None
        maps = []
        for b, (ids, positions, masks) in enumerate(plans):
            target = int(captured.targets[b])
            scores = torch.zeros(len(ids), dtype=torch.float64)
            coverage = torch.zeros(len(ids), dtype=torch.float64)
            for kept, sequence in masks:
                value = float(probs[sequences[sequence], target])
                for i in kept:
                    scores[i] += value
                    coverage[i] += 1
            scores = torch.where(coverage > 0, scores / coverage.clamp(min=1), scores)
            maps.append(Candidates(minmax(scores).float()[None].to(captured.logits.device), scores))
        return maps
