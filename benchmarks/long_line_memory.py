"""Peak memory of explain, evaluate and render against the length of one input line.

    python benchmarks/long_line_memory.py [--lengths 1e3,1e4,1e5,1e6,1e7,1.6e7,1e8] [--emoji]

One JSONL line whose text has the given number of characters (toy words), explained by a
tiny planted-keyword BERT (64 positions) with attcat, then evaluated and rendered, each
command a child process of its own: printed is each one's peak resident memory (the child's
ru_maxrss) and time, and the ratio to the shortest line. The model reads at most 64
tokens, so memory should grow only by the line itself (read, parsed, and written back in the
record's text), not by the tokens of the whole text (about 300 bytes per character when the
whole text was tokenised), and a line longer than $CONTRASTCAT_MAX_LINE_MIB (16 MiB unless
set) is refused (exit 2) after being read past in small pieces: the longest line the run
takes bounds its memory.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import torch
from streaming_memory import peak_rss

from contrastcat.io.lines import LINE_LIMIT_ENV, line_limit
from contrastcat.testing import toy


def write_line(path: Path, length: int, seed: int = 0, emoji: bool = False) -> None:
    """One JSONL line whose text has ``length`` characters of toy words, written in pieces:
    this process never holds the text, so a child forked from it starts small (a child's
    ru_maxrss counts the parent's memory at the fork). ``emoji``: the text starts with one
    character outside the Basic Multilingual Plane, which makes Python store every character
    of the text in 4 bytes instead of 1."""
    rng = random.Random(seed)
    words = list(toy.FILLER + toy.POSITIVE + toy.NEGATIVE)
    with path.open("w", encoding="utf-8") as stream:
        stream.write('{"id": 0, "text": "' + ("\U0001F600 " if emoji else ""))
        left = length - 2 * emoji
        while left > 0:
            piece = " ".join(rng.choice(words) for _ in range(20_000))[:left]
            if len(piece) < left:
                piece += " "
            stream.write(piece)
            left -= len(piece)
        stream.write('"}\n')


def cpu_line() -> str:
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    native = "avx512_bf16" in flags or "amx_bf16" in flags
    model = next((line.split(":", 1)[1].strip() for line in flags.splitlines() if line.startswith("model name")), "?")
    return f"CPU: {model}, torch capability {torch.backends.cpu.get_cpu_capability()}, bfloat16 native: {native}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="1e3,1e4,1e5,1e6,1e7,1.6e7,1e8")
    parser.add_argument("--emoji", action="store_true", help="start each text with one emoji (4 bytes per character)")
    args = parser.parse_args()
    lengths = [int(float(x)) for x in args.lengths.split(",")]
    limit = line_limit()
    import sys

    exe = [sys.executable, "-m", "contrastcat_cli"]
    print(cpu_line())
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        toy.save_toy_model(folder / "model", toy.make_examples(2000, seed=1), seed=0)
        rows = {}

        def explain(source: Path, records: Path) -> list[str]:
            return [*exe, "explain", str(source), "--model", str(folder / "model"), "--method", "attcat", "-q",
                    "-o", str(records)]

        for length in lengths:
            source = folder / f"in{length}.jsonl"
            write_line(source, length, emoji=args.emoji)
            records = folder / f"attr{length}.jsonl"
            if source.stat().st_size - 1 > limit:  # refused: nothing for evaluate or render to read
                rows[length] = {"explain": peak_rss(explain(source, records), exit_code=2)}
            else:
                rows[length] = {
                    "explain": peak_rss(explain(source, records)),
                    "evaluate": peak_rss([*exe, "evaluate", str(records), "--order", "morf", "-q",
                                          "-o", str(folder / f"report{length}.json")]),
                    "render": peak_rss([*exe, "render", str(records), "--color", "never", "-o", str(folder / "r.txt")]),
                }
            source.unlink()
        print("peak resident memory in MiB (seconds), one input line of N characters, tiny BERT reading 64 tokens;")
        print(f"lines over {limit >> 20} MiB (${LINE_LIMIT_ENV}) are refused")
        print(f"  {'characters':>12} " + " ".join(f"{c:>16}" for c in ("explain", "evaluate", "render")))
        for length, row in rows.items():
            cells = [f"{mib:>8.0f} ({s:>5.1f} s)" for mib, s in row.values()]
            if len(row) == 1:
                cells += ["refused (exit 2)", ""]
            print(f"  {length:>12,} " + " ".join(f"{cell:>16}" for cell in cells))
        first = rows[lengths[0]]
        most = {command: max(row[command][0] for row in rows.values() if command in row) for command in first}
        ratios = " ".join(f"{most[c] / first[c][0]:>16.2f}" for c in first)
        print(f"  {'ratio':>12} {ratios}   (largest peak / shortest line's)")


if __name__ == "__main__":
    main()
