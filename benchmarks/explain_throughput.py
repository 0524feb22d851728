"""Explain throughput: batched vs one at a time, Contrast-CAT vs AttCAT, and every method.

    python benchmarks/explain_throughput.py [--inputs 64] [--words 40] [--all-methods]

Uses a randomly initialised BERT with all-MiniLM-L6-v2's shape (6 layers,
hidden 384, 12 heads) so it needs no download; attribution cost does not
depend on the weights. Prints inputs per second for each setting and the
batched / unbatched ratio measured in the same run; ``--all-methods`` adds
every registered method at batch 16, each one alone and then all of them in
one run (they share each batch's forward and backward pass).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
from contrastcat.records.data import LabelledData
from contrastcat.methods import METHODS, build_method, build_methods
from contrastcat.models import wrap_classifier
from contrastcat.models.precision import describe_hardware
from contrastcat.records.inputs import InputRow
from contrastcat.testing import toy


def minilm_shaped():
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(toy.make_tokenizer()), hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
        intermediate_size=1536, max_position_embeddings=512, num_labels=2,
    )
    config._attn_implementation = "eager"
    return wrap_classifier(BertForSequenceClassification(config), toy.make_tokenizer(), name="minilm-shaped")


def own_predictions(classifier, texts: list[str]) -> list[int]:
    from contrastcat.models import predictor
    from contrastcat.models.tokens import tokenize

    ids = [t.ids for t in tokenize(classifier.tokenizer, texts, classifier.max_length, classifier.empty_input)]
    logits = torch.log(torch.as_tensor(predictor(classifier, 32)(ids)))
    with torch.no_grad():
        classifier.model.classifier.bias -= logits.mean(dim=0).to(classifier.model.classifier.bias.dtype)
    return predictor(classifier, 32)(ids).argmax(axis=1).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=64)
    parser.add_argument("--words", type=int, default=40, help="filler words per input (about tokens)")
    parser.add_argument("--all-methods", action="store_true", help="also time every method at batch 16")
    args = parser.parse_args()

    classifier = minilm_shaped()
    pool = toy.make_examples(200, seed=1, min_filler=args.words // 2, max_filler=args.words)
    texts = toy.make_examples(args.inputs, seed=2, min_filler=args.words // 2, max_filler=args.words)
    rows = [InputRow(line=i + 1, id=i, text=e.text) for i, e in enumerate(texts)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "refs.h5"
        # A random model is not confident: every reference is a fill-up, which costs the same.
        # Its own predictions are the labels (references must be classified correctly); the
        # output bias is centred so that both classes are predicted.
        pool_texts = [e.text for e in pool]
        labels = own_predictions(classifier, pool_texts)
        build_library(
            classifier, LabelledData(pool_texts, labels, ""), path,
            BuildSettings(selection=SelectionSettings(gamma=1e-3, k=30, keep=30, min_tokens=1)),
        )
        library = RefLibrary(path)
        print(f"torch {torch.__version__}, {describe_hardware(torch.device('cpu'))}, {torch.get_num_threads()} threads, {args.inputs} inputs of "
              f"{args.words // 2}-{args.words} words, MiniLM-shaped BERT (6 x 384)")
        timings = {}
        for name in ("attcat", "contrastcat"):
            (method,) = build_methods([name], shared=True, refs_used=30)
            for batch_size in (1, 16):
                options = ExplainSettings(batch_size=batch_size)
                list(explain(classifier, rows[:2], method, library, options=options))  # warm-up
                start = time.perf_counter()
                list(explain(classifier, rows, method, library, options=options))
                elapsed = time.perf_counter() - start
                timings[name, batch_size] = elapsed
                print(f"{name:12s} batch {batch_size:2d}: {args.inputs / elapsed:7.1f} inputs/s")
        for name in ("attcat", "contrastcat"):
            print(f"{name:12s} batch 16 vs 1: {timings[name, 1] / timings[name, 16]:.2f}x faster")
        print(f"contrastcat / attcat cost at batch 16: {timings['contrastcat', 16] / timings['attcat', 16]:.1f}x")
        if args.all_methods:
            time_every_method(classifier, rows, library)


def time_every_method(classifier, rows, library) -> None:
    options = ExplainSettings(batch_size=16)
    methods = [build_method(name) for name in METHODS]
    separate = 0.0
    for method in methods:
        list(explain(classifier, rows[:2], method, library, options=options))  # warm-up
        start = time.perf_counter()
        list(explain(classifier, rows, method, library, options=options))
        elapsed = time.perf_counter() - start
        separate += elapsed
        print(f"{method.name:22s} batch 16: {len(rows) / elapsed:7.1f} inputs/s")
    start = time.perf_counter()
    list(explain(classifier, rows, methods, library, options=options))
    together = time.perf_counter() - start
    print(f"all {len(methods)} methods, one run: {together:.1f} s; one run per method: {separate:.1f} s "
          f"({separate / together:.2f}x)")


if __name__ == "__main__":
    main()
