"""A cheap Contrast-CAT, tried and lost: references ranked once per class.

Each class's stored contrast references are scored on calibration inputs (training rows that are
not references, seeded): every reference's map goes through the paper's deletion test on every
calibration input whose predicted class is that class, its S standardised within the input
(z = (S - mean) / std over the input's maps), and the references are ranked by their mean z. A
``rank-K`` variant then uses the K best-ranked references for every input, averaged with no
deletion test (cost ≈ AttCAT's); ``rank-K-test`` runs the paper's test over those K maps only.
The ranking is cached in ``build/variants/<model>/ranking-<N>.json``. It lives here, not in the
library format, because it lost (docs/results.md, the cost–faithfulness frontier): the best
references of the calibration inputs are barely better than the others on average (top mean z
about 0.3 on minilm-rt), so the per-input test is what Contrast-CAT's gain is made of.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from contrastcat.attribution.pipeline import attribute
from contrastcat.library import RefLibrary
from contrastcat.methods import build_method
from contrastcat.models.tokens import tokenize

CALIBRATION = 200  # training rows scored
SEED = 0


def ranking(
    classifier, library: RefLibrary, train_texts: list[str], cache: Path | None, calibration: int = CALIBRATION
) -> dict[int, list[int]]:
    """Per class, the rows of its contrast pool, best mean z first (cached in ``cache``), scored on
    the first ``calibration`` training rows of a seeded permutation that are not references."""
    if cache is not None and cache.exists():
        return {int(k): v for k, v in json.loads(cache.read_text()).items()}
    classes = range(classifier.num_classes)
    references = {e.source_row for c in classes for e in library.entries(c)}
    order = np.random.default_rng(SEED).permutation(len(train_texts))
    chosen = [train_texts[i] for i in order if int(i) not in references][:calibration]
    every = min(library.pool_size("contrast", c) for c in classes)
    method = build_method("contrastcat", refs_used=every)  # every stored reference's map, the paper's test
    standardised: dict[int, list[np.ndarray]] = {c: [] for c in classes}
    texts = tokenize(classifier.tokenizer, chosen, classifier.max_length)
    for start in range(0, len(texts), 16):
        batch = texts[start : start + 16]
        refined, _, targets = attribute(classifier, batch, [None] * len(batch), method, library)
        for result, target in zip(refined, targets):
            scores = result.drop_scores
            standardised[target].append((scores - scores.mean()) / (scores.std() + 1e-12))
    found = {}
    for c in classes:
        mean_z = np.mean(standardised[c], axis=0) if standardised[c] else np.zeros(every)
        found[c] = [int(i) for i in np.argsort(-mean_z, kind="stable")]
        print(f"ranking class {c}: {len(standardised[c])} calibration inputs, best mean z "
              f"{np.sort(mean_z)[::-1][:5].round(2).tolist()}", file=sys.stderr)
    if cache is not None:
        cache.write_text(json.dumps({str(k): v for k, v in found.items()}))
    return found


class RankedLibrary(RefLibrary):
    """The library, its contrast pool read in ranked order (the first K are the K best)."""

    def __init__(self, path, order: dict[int, list[int]]) -> None:
        super().__init__(path)
        self.order = order

    def references(self, target, count, device, pool="contrast", rows=None):
        if pool == "contrast" and rows is None:
            rows = self.order[int(target)][:count]
        return super().references(target, count, device, pool, rows)
