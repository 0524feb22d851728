"""Explain speed on a real trained model, against a reference-style loop.

    python benchmarks/explain_speed.py [--inputs 200] [--loop-inputs 200] [--long 6]

On ``minilm-rt`` (fine-tuned here on first use) and held-out Rotten Tomatoes
snippets that are not among the examples, in one run on the same inputs:

1. ``explain`` (Contrast-CAT, 30 references) in seconds per input, against a
   reference-style loop written below: one input at a time, 30 maps, one
   unbatched forward per map per deletion step, no deduplication; the two
   outputs compared (max |diff| of the scores).
2. Efficiency: the time of only the unavoidable passes (one forward+backward
   per input, one forward per distinct deletion input, in the best batch
   size found here) divided by ``explain``'s time.
3. The same with ``--forward-dtype bfloat16`` (autocast of the forward-only
   passes) and its agreement with float32: the same kept references, top-1
   and top-3 tokens, Kendall-τ of the score vectors, and the paired change
   of MoRF AOPC.
4. ``build-refs`` and ``evaluate`` throughput, and long inputs
   (``minilm-bbc``, BBC articles cut at 128, 256 and 512 tokens).

The cost of the deletion test depends on the weights (distinct deletion
inputs): that is why this runs on a trained model, not a random one.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from benchstats import paired_interval, per_input_aopc  # benchmarks/benchstats.py

import contrastcat as cc
from contrastcat.attribution import pipeline
from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.capture.core import capture
from contrastcat.capture.passes import ModelPasses
from contrastcat.deletion.names import MORF
from contrastcat.deletion.perturb import perturb, ranked_positions
from contrastcat.deletion.refine import deletion_counts
from contrastcat.methods import build_method
from contrastcat.models import predictor
from contrastcat.models.precision import describe_hardware
from contrastcat.models.tokens import length_batches, pad, tokenize
from contrastcat.records.corpora import CORPORA
from contrastcat.records.inputs import InputRow

REFS = 30
ROOT = Path(__file__).resolve().parent.parent


class RecordingPasses(ModelPasses):
    """ModelPasses that also keeps every sequence the deletion test asks for (cheap)."""

    asked: list[tuple[int, ...]] = []

    def probabilities(self, sequences):
        RecordingPasses.asked.extend(tuple(s) for s in sequences)
        return super().probabilities(sequences)


def held_out_rows(corpus: str, examples: Path, count: int) -> list[InputRow]:
    shown = {json.loads(line)["text"] for line in examples.read_text().splitlines() if line.strip()}
    held = [e for e in CORPORA[corpus]().held_out if e.text not in shown]
    return [InputRow(line=i + 1, id=i, text=e.text, label=e.label) for i, e in enumerate(held[:count])]


def timed(action):
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


# --- 1. the reference-style loop -------------------------------------------------------------


def reference_loop(classifier, library, row: InputRow) -> tuple[np.ndarray, int]:
    """Contrast-CAT for one input the plain way: returns (scores, references kept)."""
    (text,) = tokenize(classifier.tokenizer, [row.text], classifier.max_length, classifier.empty_input)
    captured = capture(classifier, [text.ids], [text.special], [None])
    length = len(text)
    A = captured.activations[0, :, :length]  # [L, T, n]
    G = captured.gradients[0, :, :length]
    alpha = captured.attention_received[0, :, :length]  # [L, T]
    target = int(captured.targets[0])
    references = library.references(target, REFS, classifier.device)  # [K, L, T_r, n], zero-padded
    maps = []
    for k in range(len(references)):
        R = torch.zeros_like(A)
        overlap = min(length, references.shape[2])
        R[:, :overlap] = references[k, :, :overlap]
        raw = ((G * (A - R)).sum(-1) * alpha).sum(0).double().numpy()
        span = raw.max() - raw.min()
        maps.append((raw - raw.min()) / (span if span != 0 else 1e-6))
    one = predictor(classifier, 1)
    base = one([text.ids])[0, target]
    drops = []
    for scores in maps:
        ranking = ranked_positions(scores, text.special, MORF)
        probs = [one([perturb(text.ids, ranking[:count])])[0, target] for count in deletion_counts(length)]
        drops.append(np.mean([base - p for p in probs]))
    drops = np.array(drops)
    threshold = drops.mean() + drops.std()
    kept = drops >= threshold - 1e-12 * max(1.0, abs(threshold))
    kept = kept if kept.any() else np.ones_like(kept)  # none pass: keep all (docs/spec.md §4)
    mean = np.mean([m for m, keep in zip(maps, kept) if keep], axis=0)
    span = mean.max() - mean.min()
    return (mean - mean.min()) / (span if span != 0 else 1e-6), int(kept.sum())


# --- 2. the unavoidable passes ---------------------------------------------------------------


def unavoidable_seconds(classifier, rows, sequences, batch_size: int) -> tuple[float, int]:
    """Seconds of one forward+backward per input and one forward per distinct deletion input."""
    texts = tokenize(classifier.tokenizer, [r.text for r in rows], classifier.max_length, classifier.empty_input)

    def captures():
        for batch in length_batches([len(t) for t in texts], batch_size):
            capture(classifier, [texts[i].ids for i in batch], [texts[i].special for i in batch], [None] * len(batch))

    distinct = sorted(set(sequences), key=len)
    sample = distinct[:: max(1, len(distinct) // 1500)]
    best = min((timed(lambda: forwards(classifier, sample, size))[1], size) for size in (32, 64, 128, 256))[1]
    _, capture_time = timed(captures)
    _, forward_time = timed(lambda: forwards(classifier, distinct, best))
    return capture_time + forward_time, best


@torch.no_grad()
def forwards(classifier, sequences, batch_size: int) -> None:
    from contrastcat.models.forward import classify

    for batch in length_batches([len(s) for s in sequences], batch_size):
        ids, mask = pad([sequences[i] for i in batch], classifier.pad_id, classifier.device)
        classify(classifier, mask, mask.sum(dim=1), input_ids=ids)


def profile_shares(classifier, library, rows) -> dict[str, float]:
    """Where explain's time goes (cProfile): shares of the wall time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    _, seconds = timed(lambda: (profiler.enable(), explain_timed(classifier, library, rows), profiler.disable()))
    stats = pstats.Stats(profiler).stats  # (file, line, name) -> (calls, primitive, own, cumulative, callers)

    def cumulative(file_end: str, name: str) -> float:
        return sum(v[3] for (file, _, function), v in stats.items() if file.endswith(file_end) and function == name)

    linear = sum(v[2] for (_, _, function), v in stats.items() if "torch._C._nn.linear" in function)
    return {
        "deletion test's forward passes (refine.drop_scores -> predict)": cumulative("forward.py", "predict") / seconds,
        "the captured forward + backward (capture.capture)": cumulative("capture.py", "capture") / seconds,
        "  of all that: matrix products (torch linear)": linear / seconds,
    }


# --- 3. agreement of two sets of records -------------------------------------------------------


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (ties counted as neither)."""
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(len(a), 1)
    da, db = da[upper], db[upper]
    denominator = np.sqrt((da != 0).sum() * (db != 0).sum())
    return float((da * db).sum() / denominator) if denominator else 1.0


def top(record, k: int) -> set[int]:
    scores = np.where(record.special, -np.inf, record.scores)
    return set(np.argsort(-scores, kind="stable")[:k].tolist())


def agreement(first, second) -> dict:
    same_kept = [
        a.refs_kept == b.refs_kept and np.max(np.abs(np.subtract(a.scores, b.scores))) < 1e-5
        for a, b in zip(first, second)
    ]
    top1 = [top(a, 1) == top(b, 1) for a, b in zip(first, second)]
    top3 = [len(top(a, 3) & top(b, 3)) / min(3, sum(not s for s in a.special)) for a, b in zip(first, second)]
    taus = [kendall_tau(np.array(a.scores), np.array(b.scores)) for a, b in zip(first, second)]
    return {
        "same references kept": float(np.mean(same_kept)),
        "top-1 token agrees": float(np.mean(top1)),
        "top-3 overlap": float(np.mean(top3)),
        "Kendall tau (mean)": float(np.mean(taus)),
        "Kendall tau (min)": float(np.min(taus)),
    }


# --- the run ----------------------------------------------------------------------------------


def explain_timed(classifier, library, rows, forward_dtype: str = "same"):
    method = build_method("contrastcat", refs_used=REFS)
    options = ExplainSettings(batch_size=16, forward_dtype=forward_dtype)
    return timed(lambda: list(explain(classifier, rows, method, library, options=options)))


def line(name: str, value: str) -> None:
    print(f"  {name:<58} {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=200, help="held-out snippets explained")
    parser.add_argument("--loop-inputs", type=int, default=200, help="of those, how many the loop explains")
    parser.add_argument("--long", type=int, default=6, help="BBC articles per length (0: skip long inputs)")
    parser.add_argument("--process-inputs", type=int, default=256, help="inputs for the 1 vs 2 processes runs")
    args = parser.parse_args()
    torch.manual_seed(0)

    classifier = cc.load_model("minilm-rt")
    available = held_out_rows(
        "rotten-tomatoes", ROOT / "examples/minilm-rt/inputs.jsonl", max(args.inputs, args.process_inputs)
    )
    rows = available[: args.inputs]
    lengths = [len(t) for t in tokenize(classifier.tokenizer, [r.text for r in rows], 512)]
    print(f"torch {torch.__version__}, {describe_hardware(torch.device('cpu'))}, {torch.get_num_threads()} threads; minilm-rt; {len(rows)} held-out "
          f"Rotten Tomatoes snippets, median {int(np.median(lengths))} tokens (max {max(lengths)})")
    with tempfile.TemporaryDirectory() as folder:
        _, build_time = timed(lambda: cc.build_library(classifier, Path(folder) / "refs.h5"))
        library = cc.open_library(Path(folder) / "refs.h5")
        scanned = library.info.scanned

        pipeline.ModelPasses = RecordingPasses  # to list the deletion inputs explain asks for
        records, explain_time = explain_timed(classifier, library, rows)
        pipeline.ModelPasses = ModelPasses
        asked = RecordingPasses.asked
        fast, fast_time = explain_timed(classifier, library, rows, "bfloat16")

        loop_rows = rows[: args.loop_inputs]
        loop, loop_time = timed(lambda: [reference_loop(classifier, library, row) for row in loop_rows])
        loop_diff = max(float(np.max(np.abs(np.array(r.scores) - s))) for r, (s, _) in zip(records, loop))
        loop_kept = np.mean([r.refs_kept == kept for r, (_, kept) in zip(records, loop)])
        needed, best_batch = unavoidable_seconds(classifier, rows, asked, 16)

        per_input = explain_time / len(rows)
        per_loop = loop_time / len(loop_rows)
        per_fast = fast_time / len(rows)
        print("\n1. explain (Contrast-CAT, 30 references) against the reference-style loop")
        line("explain, float32", f"{per_input:.3f} s/input")
        line(f"reference-style loop ({len(loop_rows)} inputs)", f"{per_loop:.3f} s/input")
        line("speed-up", f"{per_loop / per_input:.1f}x")
        line("max |explain - loop| (scores; explain rounds to 6 decimals)", f"{loop_diff:.1e}")
        line("same number of references kept", f"{loop_kept:.3f}")
        print("\n2. efficiency")
        line("deletion inputs asked for, distinct", f"{len(asked)}, {len(set(asked))} "
             f"({len(set(asked)) / len(rows):.0f} per input)")
        line(f"unavoidable passes (best forward batch {best_batch})", f"{needed / len(rows):.3f} s/input")
        line("efficiency (unavoidable / explain)", f"{needed / explain_time:.2f}")
        for name, share in profile_shares(classifier, library, rows[:40]).items():
            line(f"profile, 40 inputs: {name}", f"{share:.0%}")
        print("\n3. --forward-dtype bfloat16 (autocast of the forward-only passes)")
        line("explain, bfloat16 forward passes", f"{per_fast:.3f} s/input")
        line("speed-up over float32 explain", f"{per_input / per_fast:.2f}x")
        line("speed-up over the reference-style loop", f"{per_loop / per_fast:.1f}x")
        for name, value in agreement(records, fast).items():
            line(name, f"{value:.3f}")
        predict = predictor(classifier, 64)
        for order in ("morf", "lerf"):
            full = per_input_aopc(records, predict, classifier.label_names, order)
            half = per_input_aopc(fast, predict, classifier.label_names, order)
            mean, low, high = paired_interval(half, full)
            line(f"{order.upper()} AOPC bfloat16 - float32 (paired 95% CI)", f"{mean:+.4f} [{low:+.4f}, {high:+.4f}]")

        print("\n4. throughput")
        line(f"build-refs (minilm-rt training split, {scanned} rows)", f"{scanned / build_time:.0f} rows/s")
        for forward_dtype in ("same", "bfloat16"):
            report, seconds = timed(lambda: cc.evaluate(classifier, records, forward_dtype=forward_dtype))
            name = "float32" if forward_dtype == "same" else forward_dtype
            line(f"evaluate, MoRF+LeRF, {name}", f"{len(records) / seconds:.1f} records/s")
        processes(available[: args.process_inputs], Path(folder) / "refs.h5")
    if args.long:
        long_inputs(args.long)


def processes(rows, library: Path) -> None:
    """The installed command on the same inputs: one process, and torchrun with two."""
    import os
    import subprocess
    import sys

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "in.jsonl"
        source.write_text("".join(json.dumps({"id": r.id, "text": r.text}) + "\n" for r in rows))
        # Batch 8: windows of 64 inputs, so each of two processes gets several windows.
        base = ["explain", str(source), "--refs", str(library), "--batch-size", "8", "-q"]
        exe = [sys.executable, "-m", "contrastcat_cli"]
        torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                    "-m", "contrastcat_cli"]
        runs = {
            "1 process, 2 threads": (exe, {}),
            "1 process, 1 thread": (exe, {"OMP_NUM_THREADS": "1"}),
            "torchrun, 2 processes x 1 thread": (torchrun, {"OMP_NUM_THREADS": "1"}),
        }
        print(f"\n5. processes: the command on {len(rows)} inputs, batch 8, model loading included (wall time)")
        outputs = {}
        for name, (command, env) in runs.items():
            out = Path(folder) / f"{len(outputs)}.jsonl"
            environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **env}
            _, seconds = timed(lambda: subprocess.run([*command, *base, "-o", str(out)], env=environment,
                                                      check=True, capture_output=True))
            outputs[name] = out.read_bytes()
            line(name, f"{seconds:.1f} s ({len(rows) / seconds:.2f} inputs/s)")
        names = list(outputs)
        line("torchrun output = 1 process, 1 thread (bytes)", str(outputs[names[2]] == outputs[names[1]]))


def long_inputs(count: int) -> None:
    classifier = cc.load_model("minilm-bbc")
    held = CORPORA["bbc-news"]().held_out
    texts = [e.text for e in held if len(classifier.tokenizer(e.text, verbose=False)["input_ids"]) > 512][:count]
    rows = [InputRow(line=i + 1, id=i, text=t) for i, t in enumerate(texts)]
    method = build_method("contrastcat", refs_used=REFS)
    with tempfile.TemporaryDirectory() as folder:
        library = cc.build_library(classifier, Path(folder) / "refs.h5", max_scan=300)
        print(f"\n6. long inputs: minilm-bbc, {len(rows)} BBC articles of more than 512 tokens, cut at T")
        previous = None
        for limit in (128, 256, 512):
            for forward_dtype in ("same", "bfloat16"):
                options = ExplainSettings(batch_size=8, max_length=limit, forward_dtype=forward_dtype)
                _, seconds = timed(lambda: list(explain(classifier, rows, method, library, options=options)))
                name = "float32" if forward_dtype == "same" else forward_dtype
                growth = f" ({seconds / previous:.1f}x the time at T/2)" if previous and forward_dtype == "same" else ""
                line(f"T = {limit}, {name}", f"{seconds / len(rows):.2f} s/input{growth}")
                if forward_dtype == "same":
                    previous = seconds


if __name__ == "__main__":
    main()
