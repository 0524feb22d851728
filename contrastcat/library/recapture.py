"""A library's references captured again under another model (the sanity check's randomised
copies, docs/cli.md "sanity"): the same references, chosen by the original model and stored as
token ids, with their activations recomputed by the model being explained instead of read from
the file, which holds the original model's."""

from __future__ import annotations

import torch

from ..capture.core import ACTIVATIONS, capture
from ..errors import BadInput, LibraryMismatch
from ..models import Classifier
from ..models.tokens import length_batches
from .reader import RefLibrary
from .schema import group_path

BATCH = 16


class RecapturedLibrary(RefLibrary):
    """``library``'s references with activations from ``classifier`` (same tokenizer and shapes,
    other weights); read like the library itself."""

    def __init__(self, library: RefLibrary, classifier: Classifier) -> None:
        # Share what was read and verified; only the activations differ.
        self.__dict__.update({key: value for key, value in library.__dict__.items() if key != "_cache"})
        self._cache = {}
        self.classifier = classifier

    def check_model(self, classifier) -> None:
        """The weights differ by design; the shapes must not."""
        if classifier is not self.classifier:
            raise LibraryMismatch(f"{self.path}: references recaptured for another model")
        if len(self.info.label_names) != classifier.num_classes or self.info.num_layers != classifier.num_layers:
            raise LibraryMismatch(f"{self.path}: the library's classes or layers do not fit {classifier.name!r}")

    def _pool(self, pool: str, target: int, count: int | None, device: torch.device) -> torch.Tensor:
        path = group_path(pool, target)
        entries = self.entries(target, pool)
        if not entries:
            raise BadInput(f"{self.path}: no references for class {target} in the {pool!r} pool")
        wanted = len(entries) if count is None else min(count, len(entries))
        cached = self._cache.get((path, str(device)))
        if cached is not None and len(cached) >= wanted:
            return cached
        chosen = entries[:wanted]
        special_ids = set(getattr(self.classifier.tokenizer, "all_special_ids", ()))
        length = max(e.length for e in chosen)
        stacked = torch.zeros(len(chosen), self.info.num_layers, length, self.info.hidden_size)
        for batch in length_batches([e.length for e in chosen], BATCH):
            ids = [list(chosen[i].token_ids) for i in batch]
            captured = capture(
                self.classifier, ids, [[t in special_ids for t in each] for each in ids], [None] * len(ids),
                needs=frozenset({ACTIVATIONS}),
            )
            for position, index in enumerate(batch):
                size = chosen[index].length
                stacked[index, :, :size] = captured.activations[position, :, :size].detach().float().cpu()
        self._cache[(path, str(device))] = stacked.to(device)
        return self._cache[(path, str(device))]
