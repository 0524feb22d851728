"""How far padding moves a decoder's results: max |batch-N - batch-1| per family.

    python benchmarks/padding_drift.py [--families gpt2,llama,mistral,qwen2] [--inputs 48]
        [--batch 16] [--methods all|contrastcat,attcat,...] [--dtype float32|float64]

Each decoder family's tiny random model (``contrastcat.testing.tiny.build``, seed 3,
weights' std 0.2, as tests/models/test_decoders.py builds it) scores ``--inputs`` toy
sentences (8 to 19 tokens) twice: in right-padded batches of ``--batch`` (and of 2, 4, 8)
and one at a time. Printed per family: the largest difference in the class
probabilities (``models.predictor``, float64 of float32 logits, not rounded) and, per
method, in the attribution scores, before the records' 6-decimal rounding ("raw") and
as records store them ("record"). The methods that read a library use a small one built
here from 300 other toy sentences.

``--dtype float64`` runs the models in float64 (the methods that read a library are
skipped: a library holds no float64). GPT-2's probabilities then move by 0 and its
scores only by the methods' own float32 (captured tensors are cast to float32); Llama,
Mistral and Qwen2 keep a float32 drift because HuggingFace computes their attention
softmax in float32 whatever the weights (with it in float64 their logits move by 9e-16). A real padding error (a wrong position, a pad
token attended, a pad pooled) would not shrink with the precision: this separates
"wrong" from "rounding" on any CPU.

The first lines name the CPU as the float32 kernels see it: torch's vector capability
(``ATEN_CPU_CAPABILITY=avx2`` emulates an AVX2-only CPU), whether bfloat16 is native
(/proc/cpuinfo flags avx512_bf16, amx_bf16), the threads and the float32 matmul
precision ("highest": no bfloat16 or TF32 inside float32 matmuls).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from contrastcat.attribution import pipeline
from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.methods import METHODS, build_method
from contrastcat.models import predictor, wrap_classifier
from contrastcat.models.families import DECODER, FAMILIES
from contrastcat.models.precision import describe_hardware
from contrastcat.records.inputs import InputRow
from contrastcat.testing import tiny, toy

DECODERS = [name for name in tiny.TINY if name in FAMILIES and FAMILIES[name].kind == DECODER]
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
ENV = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "OMP_NUM_THREADS")


def cpu_info() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo ("model name", "flags", ...); empty elsewhere."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_lines() -> list[str]:
    info = cpu_info()
    flags = set(info.get("flags", "").split())
    env = {key: os.environ[key] for key in ENV if key in os.environ}
    native = bool(flags & {"avx512_bf16", "amx_bf16"})
    return [
        f"cpu: {info.get('model name') or platform.processor() or 'unknown'}",
        f"torch {torch.__version__}: capability {torch.backends.cpu.get_cpu_capability()}, "
        f"{torch.get_num_threads()} threads, float32 matmul precision {torch.get_float32_matmul_precision()}",
        f"flags: {', '.join(f'{f}={int(f in flags)}' for f in FLAGS)}; bfloat16 {'native' if native else 'emulated'} "
        f"(contrastcat: {describe_hardware(torch.device('cpu'))})",
        f"env: {env or 'none of ' + ', '.join(ENV)}",
    ]


def method_for(name: str):
    return build_method(name, ig_steps=8) if name == "integrated-gradients" else build_method(name)


def library_for(classifier, folder: Path):
    from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
    from contrastcat.records.data import LabelledData

    examples = toy.make_examples(300, seed=11)
    path = folder / f"{classifier.name}.h5"
    build_library(
        classifier, LabelledData([e.text for e in examples], [e.label for e in examples], "toy"), path,
        BuildSettings(selection=SelectionSettings(k=30, keep=30)),
    )
    return RefLibrary(path)


def records(classifier, rows, method, library, batch: int) -> dict:
    return {r.id: r for r in explain(classifier, rows, method, library, options=ExplainSettings(batch_size=batch))}


def largest(first: dict, second: dict, field: str) -> float:
    return max(float(np.abs(np.asarray(getattr(first[k], field)) - np.asarray(getattr(second[k], field))).max())
               for k in first)


def run_family(model_type: str, texts: list[str], batch: int, names: list[str], dtype: torch.dtype, folder: Path):
    model, tokenizer = tiny.build(model_type, seed=3, init_range=0.2)
    classifier = wrap_classifier(model.to(dtype), tokenizer, name=f"tiny-{model_type}")
    rows = [InputRow(i + 1, i, text) for i, text in enumerate(texts)]
    sequences = [r.token_ids for r in explain(classifier, rows, build_method("random"))]
    alone = predictor(classifier, 1)(sequences)
    sizes = sorted({2, 4, 8, batch})
    drift = {size: float(np.abs(predictor(classifier, size)(sequences) - alone).max()) for size in sizes}
    lengths = [len(s) for s in sequences]
    print(f"\n{model_type} ({dtype}): {len(texts)} inputs of {min(lengths)}-{max(lengths)} tokens")
    print("  probabilities, max |batch-B - batch-1|: " + ", ".join(f"B={s}: {d:.1e}" for s, d in drift.items()))
    library = None
    worst = {"raw": 0.0, "record": 0.0, "probs": 0.0}
    for name in names:
        method = method_for(name)
        if method.uses_library and dtype == torch.float64:
            print(f"  {name:22s} skipped: a library holds float32, bfloat16 or float16 activations, not float64")
            continue
        if method.uses_library and library is None:
            library = library_for(classifier, folder)
        used = library if method.uses_library else None
        start = time.perf_counter()
        rounded = pipeline.rounded
        pipeline.rounded = lambda scores: [float(s) for s in scores]  # the raw scores, before the records' rounding
        try:
            batched, single = records(classifier, rows, method, used, batch), records(classifier, rows, method, used, 1)
        finally:
            pipeline.rounded = rounded
        raw = largest(batched, single, "scores")
        stored = max(
            float(np.abs(np.subtract(rounded(batched[k].scores), rounded(single[k].scores))).max()) for k in single
        )
        probs = largest(batched, single, "probs")  # the records' (6 significant digits)
        worst = {"raw": max(worst["raw"], raw), "record": max(worst["record"], stored),
                 "probs": max(worst["probs"], probs)}
        print(f"  {name:22s} scores raw {raw:.1e}  record {stored:.1e};  record probs {probs:.1e}"
              f"  ({time.perf_counter() - start:.1f} s)", flush=True)
    print(f"  {model_type}: worst over methods: scores raw {worst['raw']:.1e}, record {worst['record']:.1e}; "
          f"probabilities {max(drift.values()):.1e}")
    return drift, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default=",".join(DECODERS))
    parser.add_argument("--inputs", type=int, default=48)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--methods", default="all", help="comma-separated method names, or all")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--seed", type=int, default=5, help="seed of the toy sentences")
    args = parser.parse_args()
    names = list(METHODS) if args.methods == "all" else args.methods.split(",")
    for line in cpu_lines():
        print(line)
    texts = [e.text for e in toy.make_examples(args.inputs, seed=args.seed)]
    dtype = getattr(torch, args.dtype)
    summary = {}
    with tempfile.TemporaryDirectory() as folder:
        for model_type in args.families.split(","):
            summary[model_type] = run_family(model_type, texts, args.batch, names, dtype, Path(folder))
    capability = torch.backends.cpu.get_cpu_capability()
    print(f"\nsummary, batch {args.batch} against batch 1 ({args.dtype}, capability {capability}):")
    for model_type, (drift, worst) in summary.items():
        print(f"  {model_type:8s} probabilities {drift[args.batch]:.1e} (records {worst['probs']:.1e})  "
              f"scores raw {worst['raw']:.1e}  record {worst['record']:.1e}")


if __name__ == "__main__":
    main()
