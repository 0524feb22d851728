"""Peak memory of explain, evaluate and render against the number of inputs.

    python benchmarks/streaming_memory.py [--small 1000] [--large 20000]

Runs the installed command on N short inputs for two values of N and prints
each run's peak resident memory (the child's ru_maxrss) and the ratio: the
commands stream, so it should not grow with N. A tiny planted-keyword BERT
(trained here in a few seconds) keeps 20,000 inputs affordable and makes any
growth stand out against a small base; attcat stands for explain's methods
(Contrast-CAT costs more time per input, not more memory per input held).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contrastcat.testing import toy


def peak_rss(command: list[str], stdout=subprocess.DEVNULL, exit_code: int = 0) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of one child process, which must end with ``exit_code``."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, env=environment)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != exit_code:
        raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return usage.ru_maxrss / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=20000)
    args = parser.parse_args()
    exe = [sys.executable, "-m", "contrastcat_cli"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        toy.save_toy_model(folder / "model", toy.make_examples(2000, seed=1), seed=0)
        examples = toy.make_examples(args.large, seed=2)
        results = {}
        for count in (args.small, args.large):
            source = folder / f"in{count}.jsonl"
            source.write_text("".join(json.dumps({"id": i, "text": e.text}) + "\n" for i, e in enumerate(examples[:count])))
            records = folder / f"attr{count}.jsonl"
            results[count] = {
                "explain": peak_rss([*exe, "explain", str(source), "--model", str(folder / "model"),
                                     "--method", "attcat", "-q", "-o", str(records)]),
                "evaluate": peak_rss([*exe, "evaluate", str(records), "--order", "morf", "-q",
                                      "-o", str(folder / f"report{count}.json")]),
                "render": peak_rss([*exe, "render", str(records), "--color", "never"]),
            }
        print(f"peak resident memory (MiB) and time, tiny BERT, {args.small} vs {args.large} short inputs")
        print(f"  {'command':<10} {args.small:>14} {args.large:>14}   ratio")
        for command in ("explain", "evaluate", "render"):
            (small, small_s), (large, large_s) = results[args.small][command], results[args.large][command]
            print(f"  {command:<10} {small:>7.0f} ({small_s:>4.0f} s) {large:>7.0f} ({large_s:>4.0f} s)   {large / small:.3f}")


if __name__ == "__main__":
    main()
