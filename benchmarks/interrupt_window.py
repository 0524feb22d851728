"""How a Ctrl-C in the first milliseconds of `contrastcat` ends: the interpreter's own start-up
window, which no code of ours can close (docs/cli.md, "Signals").

    python benchmarks/interrupt_window.py [--tries 6] [--max-ms 120] [--step-ms 5]

Sends SIGINT to `contrastcat models list` at each delay after spawning it and counts outcomes:
"clean" (one line `error: interrupted`, exit 130), "finished" (it ran to the end first), or
"python" (the interpreter's own start-up failure: "Fatal Python error" or a traceback).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter


def outcome(exe: str, delay: float) -> str:
    child = subprocess.Popen([exe, "models", "list"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    text = err.decode(errors="replace")
    if "Fatal Python error" in text or "Traceback" in text:
        return "python"
    if child.returncode == 130 and text.strip() == "error: interrupted":
        return "clean"
    if child.returncode == 0:
        return "finished"
    return f"other(rc={child.returncode}: {text.strip()[:60]!r})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=6)
    parser.add_argument("--max-ms", type=int, default=120)
    parser.add_argument("--step-ms", type=int, default=5)
    args = parser.parse_args()
    import torch

    exe = shutil.which("contrastcat") or os.path.join(os.path.dirname(sys.executable), "contrastcat")
    print(f"CPU {torch.backends.cpu.get_cpu_capability()}, {os.cpu_count()} cores; {args.tries} tries per delay")
    for ms in range(0, args.max_ms + 1, args.step_ms):
        counts = Counter(outcome(exe, ms / 1000) for _ in range(args.tries))
        print(f"{ms:4d} ms  " + "  ".join(f"{key} {value}" for key, value in sorted(counts.items())))


if __name__ == "__main__":
    main()
