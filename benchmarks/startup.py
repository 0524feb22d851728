"""How long the command line takes to answer what needs no model: --help, a command's --help,
the completions, refusals of a bad option, a missing file and a misspelt method, rendering a
records file and listing the embedded models (these two do work: shown, not bounded).

    python benchmarks/startup.py [--runs 7]

Each command runs --runs times as a new process (the console script, as a shell starts it); the
median wall time is printed beside the CPU it ran on, and whether it is under the 0.5 s the
command line promises. The same process's ``--version`` (which imports nothing) is the floor:
the interpreter's own start. Exit 1 where a command is over the bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOUND = 0.5  # seconds


def commands(folder: Path) -> list[tuple[str, list[str]]]:
    inputs = folder / "inputs.jsonl"
    inputs.write_text(json.dumps({"id": 1, "text": "a gripping, funny film"}) + "\n")
    missing = str(folder / "missing.jsonl")
    records = folder / "records.jsonl"  # one record as another tool might write it
    records.write_text(json.dumps({
        "id": 1, "text": "a good film", "tokens": ["a", "good", "film"], "offsets": [[0, 1], [2, 6], [7, 11]],
        "scores": [0.1, 0.9, 0.3], "target": 1, "method": "m",
    }) + "\n")
    return [
        ("--version (the floor)", ["--version"]),
        ("--help", ["--help"]),
        ("explain --help", ["explain", "--help"]),
        ("compare --help", ["compare", "--help"]),
        ("completions bash", ["completions", "bash"]),
        ("a misspelt flag", ["explain", str(inputs), "--bogus"]),
        ("a bad value", ["explain", str(inputs), "--batch-size", "0"]),
        ("a missing file", ["evaluate", missing]),
        ("a misspelt method", ["explain", str(inputs), "--method", "atcat"]),
        ("compare, a misspelt method", ["compare", str(inputs), "--method", "atcat,random"]),
        # Work, not an answer from the options: shown for reference, held to no bound.
        ("render a records file (work)", ["render", str(records), "--color", "never"]),
        ("models list (work)", ["models", "list"]),
    ]


def timed(executable: str, arguments: list[str], runs: int) -> float:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    seconds = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([executable, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                       check=False)
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds)


def cpu() -> str:
    """The CPU, named without importing torch (the benchmark measures processes that do not)."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU") if Path("/proc/cpuinfo").exists() else "unknown CPU"
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    units = [name for name, flag in (("AMX", "amx_bf16"), ("AVX-512 BF16", "avx512_bf16"), ("AVX-512", "avx512f"),
                                     ("AVX2", "avx2")) if f" {flag}" in flags]
    return f"{model}, {os.cpu_count()} cores, {', '.join(units) or 'no AVX'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--executable", default=shutil.which("contrastcat") or str(Path(sys.executable).parent / "contrastcat"))
    args = parser.parse_args()
    print(f"{cpu()}; Python {sys.version.split()[0]}; median of {args.runs} runs, each a new process")
    over = []
    with tempfile.TemporaryDirectory() as folder:
        for name, arguments in commands(Path(folder)):
            seconds = timed(args.executable, arguments, args.runs)
            bounded = not (name.startswith("--version") or name.endswith("(work)"))
            mark = f"  OVER {BOUND} s" if bounded and seconds >= BOUND else ""
            print(f"  {name:<28} {seconds:6.3f} s{mark}")
            if mark:
                over.append(name)
    print(f"over {BOUND} s: {', '.join(over)}" if over else f"every command under {BOUND} s")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
