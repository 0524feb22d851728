"""Train the planted-keyword toy classifier and write what the demo needs.

    python examples/toy_model.py OUTDIR

writes OUTDIR/model/ (a tiny BERT, 3 classes), OUTDIR/train.jsonl (the data
build-refs scans) and OUTDIR/inputs.jsonl (held-out sentences to explain).
It needs no download and trains in about ten seconds on a CPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contrastcat.testing import toy


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    train = toy.make_examples(2000, seed=1)
    held_out = toy.make_examples(40, seed=2)
    toy.save_toy_model(out / "model", train, seed=0)
    for name, examples in (("train.jsonl", train), ("inputs.jsonl", held_out)):
        with open(out / name, "w", encoding="utf-8") as stream:
            for index, example in enumerate(examples):
                record = {"id": f"{name.split('.')[0]}-{index}", "text": example.text, "label": toy.LABELS[example.label]}
                stream.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/toy"))
