"""Write examples/<model>/inputs.{jsonl,csv}: held-out rows of each embedded model's corpus.

    python examples/make_examples.py

The rows are the first ones of the fixed held-out split (never trained on)
with at least 10 words (evaluate skips inputs under 10 tokens), identified
by their corpus id, with the gold label by name.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from contrastcat.models.zoo import EMBEDDED

COUNTS = {"minilm-rt": 30, "minilm-bbc": 20}


def main() -> None:
    for name, count in COUNTS.items():
        corpus = EMBEDDED[name].corpus()
        long_enough = [e for e in corpus.held_out if len(e.text.split()) >= 10][:count]
        rows = [{"id": e.id, "text": e.text, "label": corpus.label_names[e.label]} for e in long_enough]
        folder = Path(__file__).parent / name
        folder.mkdir(exist_ok=True)
        with open(folder / "inputs.jsonl", "w", encoding="utf-8") as stream:
            for row in rows:
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        with open(folder / "inputs.csv", "w", encoding="utf-8", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=["id", "text", "label"])
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
