"""Peak memory of ``contrastcat summarize`` on synthetic records: it grows with distinct words, not records.

    python benchmarks/summarize_memory.py                  # 10^4, 10^5, 10^6 records; 2,000 words
    python benchmarks/summarize_memory.py --sizes 10000,100000 --words 2000,20000

Each run is a new process reading records from a pipe (``summarize -``, so no file is held in the
page cache of this process either), written by a generator process: texts of 6 to 12 words drawn
from a fixed vocabulary (half by Zipf's law, half evenly), a signed map, two classes with gold labels. Prints the records, the
distinct words, peak resident memory (of the summarize process, by GNU time) and the time, with the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

GENERATOR = r"""
import json, random, sys
count, words = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(0)
vocabulary = [f"w{i}" for i in range(words)]
out = sys.stdout
seen = set()
for index in range(count):
    # Half the words by Zipf's law (a few frequent ones), half drawn evenly from the whole vocabulary,
    # so a larger vocabulary does give more distinct words.
    chosen = [vocabulary[min(int(rng.paretovariate(1.1)) - 1, words - 1) if rng.random() < 0.5 else rng.randrange(words)]
              for _ in range(rng.randint(6, 12))]
    text = " ".join(chosen)
    seen.update(chosen)
    offsets, start = [], 0
    for word in chosen:
        offsets.append([start, start + len(word)]); start += len(word) + 1
    raw = [round(rng.uniform(-1, 1), 4) for _ in chosen]
    low, high = min(raw), max(raw)
    predicted = rng.randrange(2)
    record = {"id": index, "text": text, "tokens": chosen, "token_ids": [5] * len(chosen), "offsets": offsets,
              "special": [False] * len(chosen), "scores": [round((v - low) / ((high - low) or 1), 6) for v in raw],
              "raw_scores": raw, "target": predicted, "target_name": ["neg", "pos"][predicted],
              "probs": [0.3, 0.7] if predicted else [0.7, 0.3], "predicted": predicted, "label": rng.randrange(2),
              "method": "synthetic", "model": "synthetic", "model_fingerprint": "0" * 40, "library": None}
    out.write(json.dumps(record) + "\n")
print(len(seen), file=sys.stderr)
"""


def run(count: int, words: int) -> dict:
    generator = subprocess.Popen([sys.executable, "-c", GENERATOR, str(count), str(words)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=False)
    started = time.perf_counter()
    # GNU time reports the peak resident memory of the summarize process alone (%M, in KiB).
    summary = subprocess.run(
        ["/usr/bin/time", "-f", "peak %M", sys.executable, "-m", "contrastcat_cli", "summarize", "-", "--json", "-q",
         "--bootstrap", "200"],
        stdin=generator.stdout, capture_output=True, text=True,
    )
    distinct = int(generator.stderr.read().decode().strip() or 0)
    generator.wait()
    elapsed = time.perf_counter() - started
    if summary.returncode != 0:
        raise SystemExit(f"summarize failed: {summary.stderr.strip()[-500:]}")
    peak_kib = int(summary.stderr.strip().splitlines()[-1].split()[-1])
    found = json.loads(summary.stdout)
    return {"records": count, "distinct": distinct, "peak_mib": round(peak_kib / 1024, 1), "seconds": round(elapsed, 1),
            "ranked_words": sum(len(c["for"]) + len(c["against"]) for c in found["classes"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--words", default="2000", help="vocabularies to draw from (comma list)")
    args = parser.parse_args()
    import torch

    print(f"CPU: {torch.backends.cpu.get_cpu_capability()}, {os.cpu_count()} cores")
    print(f"{'records':>10} {'distinct words':>15} {'peak MiB':>9} {'seconds':>8}")
    for words in (int(w) for w in args.words.split(",")):
        for count in (int(s) for s in args.sizes.split(",")):
            result = run(count, words)
            print(f"{result['records']:>10} {result['distinct']:>15} {result['peak_mib']:>9} {result['seconds']:>8}", flush=True)


if __name__ == "__main__":
    main()
