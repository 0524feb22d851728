"""Peak memory of Contrast-CAT's capture (one forward + backward) against the README's formula.

    python benchmarks/capture_memory.py [--tokens 512,1024,2048]

Each length runs in a fresh process (peak RSS cannot be reset reliably in
one): a random Llama at reduced width (hidden 1024, 4 layers, 16 heads, MLP
2752: the 7B shape's ratios), bfloat16 weights, one input of T tokens, the
tensors Contrast-CAT needs (activations, gradients, attention received).
Printed: the peak resident memory above the loaded model, and the formula
the README's 7B estimate uses, per layer 10·T·n + 4·T·m + 2·H·T² values of
2 bytes (the autograd graph) plus the captured float32 A^l and G^l.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

WIDTH, LAYERS, HEADS, MLP = 1024, 4, 16, 2752


def megabytes(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def one(tokens: int) -> None:
    import torch
    import transformers

    from contrastcat.capture.core import ACTIVATIONS, ATTENTION_RECEIVED, GRADIENTS, capture
    from contrastcat.models import wrap_classifier
    from contrastcat.testing import tiny

    torch.set_num_threads(2)
    config = transformers.LlamaConfig(
        vocab_size=32000, hidden_size=WIDTH, intermediate_size=MLP, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=4096, num_labels=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    classifier = wrap_classifier(model.to(torch.bfloat16), tiny.make_tokenizer("llama"), name="llama-reduced")
    ids = [1] + [5 + i % 100 for i in range(tokens - 1)]
    with torch.no_grad():
        classifier.model(input_ids=torch.tensor([ids[:8]]))  # thread pools and kernels, outside the measure
    before = megabytes("VmRSS")
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    capture(classifier, [ids], [[True] + [False] * (tokens - 1)], [None], needs=needs)
    peak = megabytes("VmHWM") - before
    graph = LAYERS * (10 * tokens * WIDTH + 4 * tokens * MLP + 2 * HEADS * tokens**2) * 2 / 2**20
    captured = 2 * LAYERS * tokens * WIDTH * 4 / 2**20
    print(f"T = {tokens:5d}: peak {peak:7.0f} MB   formula {graph + captured:7.0f} MB   ratio {peak / (graph + captured):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="512,1024,2048")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    for tokens in args.tokens.split(","):
        subprocess.run([sys.executable, __file__, "--one", tokens], check=True)


if __name__ == "__main__":
    main()
