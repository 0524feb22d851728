"""Cost per input of every method on the real `minilm-rt` model (the methods table's column).

    python benchmarks/method_cost.py [--inputs examples/minilm-rt/inputs.jsonl] [--refs build/demo/refs.h5]

Each method explains the same inputs alone (batch 16, float32, defaults), after
one warm-up input; printed: seconds per input, and the ratio to AttCAT (one
forward and one backward pass) measured in the same run. The cost of the
deletion test depends on the weights, so this runs on the trained model, not
on random weights (`explain_throughput.py` measures bookkeeping).
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from contrastcat.api import explain, load_model, open_library
from contrastcat.methods import METHODS
from contrastcat.models.precision import describe_hardware


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", default="examples/minilm-rt/inputs.jsonl")
    parser.add_argument("--refs", default="build/demo/refs.h5", help="a minilm-rt library (make demo)")
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()

    classifier = load_model("minilm-rt")
    library = open_library(args.refs)
    with open(args.inputs, encoding="utf-8") as stream:
        texts = [json.loads(line)["text"] for line in stream if line.strip()]
    names = args.methods.split(",")
    print(f"torch {torch.__version__}, {describe_hardware(torch.device('cpu'))}, {torch.get_num_threads()} threads, minilm-rt, {len(texts)} inputs, batch 16")
    seconds = {}
    for name in names:
        list(explain(classifier, texts[:1], library, name))  # warm-up: first-call allocations
        start = time.perf_counter()
        records = list(explain(classifier, texts, library, name))
        seconds[name] = (time.perf_counter() - start) / len(records)
    base = seconds.get("attcat")
    for name in names:
        ratio = f"  ({seconds[name] / base:5.1f}x attcat)" if base else ""
        print(f"{name:22s} {seconds[name]:7.3f} s/input{ratio}")


if __name__ == "__main__":
    main()
