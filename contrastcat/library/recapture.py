"""A library's references captured again under another model (the sanity check's randomised
copies, docs/cli.md "sanity"): the same references, chosen by the original model and stored as
token ids, with their activations recomputed by the model being explained instead of read from
the file, which holds the original model's."""

from __future__ import annotations

import torch

from ..capture.core import ACTIVATIONS, capture
from ..errors import LibraryMismatch
from ..models import Classifier
from ..models.tokens import length_batches
from .reader import RefLibrary
from .schema import ReferenceEntry

BATCH = 16


class RecapturedLibrary(RefLibrary):
    """``library``'s references with activations from ``classifier`` (same tokenizer and shapes,
    other weights); read like the library itself."""

    def __init__(self, library: RefLibrary, classifier: Classifier) -> None:
        # Share what was read and verified; only the activations differ.
        self.__dict__.update({key: value for key, value in library.__dict__.items() if key != "_cache"})
        self._cache = {}
        # Nothing is read from the file here; closing this copy must not close the original's handle.
        self._file = None
        self.classifier = classifier

    def check_model(self, classifier) -> None:
        """The weights differ by design; the shapes must not."""
        if classifier is not self.classifier:
            raise LibraryMismatch(f"{self.path}: references recaptured for another model")
        if len(self.info.label_names) != classifier.num_classes or self.info.num_layers != classifier.num_layers:
            raise LibraryMismatch(f"{self.path}: the library's classes or layers do not fit {classifier.name!r}")
        self.check_positions(classifier)  # the references' ids are captured anew here
        self.check_token_ids(classifier)

    def _load(self, path: str, available: list[ReferenceEntry]) -> torch.Tensor:
        """The activations of ``available`` as this library's classifier computes them."""
        special_ids = set(getattr(self.classifier.tokenizer, "all_special_ids", ()))
        stacked = torch.zeros(len(available), self.info.num_layers, max(e.length for e in available), self.info.hidden_size)
        for batch in length_batches([e.length for e in available], BATCH):
            ids = [list(available[i].token_ids) for i in batch]
            captured = capture(
                self.classifier, ids, [[t in special_ids for t in each] for each in ids], [None] * len(ids),
                needs=frozenset({ACTIVATIONS}),
            )
            for position, index in enumerate(batch):
                size = available[index].length
                stacked[index, :, :size] = captured.activations[position, :, :size].detach().float().cpu()
        return stacked
