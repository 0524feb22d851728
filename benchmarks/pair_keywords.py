"""Sentence pairs: how often each method ranks the planted keyword first, by training seed.

The toy pair task (``contrastcat.testing.pairs``: a keyword in the first or the second text
decides the class), trained per style (bert: token type ids; roberta: none) and seed as the
tests train it; 30 references from 600 other pairs; 120 held-out pairs, of which those with a
keyword count. The rates quoted in the docstring of tests/attribution/test_pairs.py's
keyword test:

    python benchmarks/pair_keywords.py [--seeds 0 1 2] [--methods contrastcat contrastcat-lrp attnlrp attcat random]
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

import contrastcat
from contrastcat.models.tokens import tokenize
from contrastcat.testing.pairs import keyword_token, make_pair_examples, train_pair_classifier

METHODS = ["contrastcat", "contrastcat-lrp", "attnlrp", "attcat", "random"]


def rates(style: str, seed: int, methods: list[str], work: str) -> tuple[float, dict[str, str]]:
    train, references, held_out = (make_pair_examples(n, seed=s) for n, s in ((2000, 0), (600, 1), (120, 5)))
    model, tokenizer = train_pair_classifier(style, train, seed=seed)
    classifier = contrastcat.load_model(model, tokenizer, name=f"pair-{style}-{seed}")
    library = contrastcat.build_library(
        classifier, os.path.join(work, f"{style}-{seed}.h5"), [(e.text, e.pair) for e in references],
        [e.label for e in references], k=30, keep=30, min_tokens=5,
    )
    records = contrastcat.explain(classifier, [(e.text, e.pair) for e in held_out], library=library, method=methods)
    texts = tokenize(tokenizer, [e.text for e in held_out], classifier.max_length, (), [e.pair for e in held_out])
    found = {}
    for index, name in enumerate(methods):
        hits = total = 0
        for record, example, text in zip(records[index :: len(methods)], held_out, texts):
            position = keyword_token(text, example)
            if position is None:
                continue
            hits += int(np.argmax(np.where(record.special, -np.inf, record.scores))) == position
            total += 1
        found[name] = f"{hits}/{total} = {hits / total:.3f}"
    accuracy = float(np.mean([r.predicted == e.label for r, e in zip(records[:: len(methods)], held_out)]))
    return accuracy, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--methods", nargs="+", default=METHODS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for style in ("bert", "roberta"):
            for seed in args.seeds:
                accuracy, found = rates(style, seed, args.methods, work)
                print(f"{style:8s} seed {seed}  accuracy {accuracy:.3f}  " + "  ".join(f"{k} {v}" for k, v in found.items()))


if __name__ == "__main__":
    main()
