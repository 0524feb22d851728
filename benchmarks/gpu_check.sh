#!/usr/bin/env bash
# What a CUDA machine checks beyond the CPU suite: every method on the GPU against the CPU
# (the suite's CUDA test), the CLI end to end with --device cuda in float32, bfloat16 and float16,
# and evaluate/sanity on the GPU. Run from the repository root where python3 holds a CUDA torch.
set -uo pipefail
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
cc() { python3 -m cli "$@"; }
# The tests import the CLI under its installed name; a checkout has it as cli/.
python3 -c "import contrastcat_cli" 2>/dev/null || ln -sfn cli contrastcat_cli
python3 - <<'PY'
import torch, transformers
print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.get_device_name(),
      "cpu", torch.backends.cpu.get_cpu_capability())
PY
echo "== the suite's CUDA test and the precision tests"
python3 -m pytest -q -p no:cacheprovider -rs --durations=5 tests/methods/test_method_options.py tests/models/test_native_precision.py \
    tests/models/test_precision.py 2>&1 | tail -15
echo "== the CLI on the toy model, CPU against CUDA"
python3 - "$work" <<'PY'
import json, sys
from pathlib import Path
from contrastcat.testing import toy
work = Path(sys.argv[1])
train = toy.make_examples(2000, seed=1)
toy.save_toy_model(work / "model", train, seed=0)
with open(work / "train.jsonl", "w") as f:
    for i, e in enumerate(train):
        f.write(json.dumps({"id": i, "text": e.text, "label": e.label}) + "\n")
with open(work / "in.jsonl", "w") as f:
    for i, e in enumerate(toy.make_examples(24, seed=5)):
        f.write(json.dumps({"id": i, "text": e.text, "label": e.label}) + "\n")
PY
cc build-refs --data "$work/train.jsonl" --model "$work/model" --device cpu -o "$work/refs.h5" -q || echo "FAIL build-refs cpu"
for device in cpu cuda; do
    /usr/bin/time -f "explain all methods on $device: %e s" \
        python3 -m cli explain "$work/in.jsonl" --refs "$work/refs.h5" --method all --device $device -q -o "$work/$device.jsonl" \
        || echo "FAIL explain $device"
done
for dtype in bfloat16 float16; do
    cc build-refs --data "$work/train.jsonl" --model "$work/model" --device cuda --dtype $dtype -q -o "$work/refs-$dtype.h5" \
        || echo "FAIL build-refs cuda $dtype"
    cc explain "$work/in.jsonl" --refs "$work/refs-$dtype.h5" --method all --device cuda --dtype $dtype -q -o "$work/cuda-$dtype.jsonl" \
        || echo "FAIL explain cuda $dtype"
done
python3 - "$work" <<'PY'
import json, sys
import numpy as np
work = sys.argv[1]
def read(name):
    return [json.loads(line) for line in open(f"{work}/{name}.jsonl")]
cpu = read("cpu")
for name, tol in [("cuda", 1e-4), ("cuda-bfloat16", None), ("cuda-float16", None)]:
    try:
        other = read(name)
    except OSError:
        print(name, "missing"); continue
    worst, apart = {}, {}
    for a, b in zip(cpu, other):
        assert a["method"] == b["method"] and a["tokens"] == b["tokens"]
        d = float(np.max(np.abs(np.array(a["scores"]) - np.array(b["scores"])))) if a["scores"] else 0.0
        worst[a["method"]] = max(worst.get(a["method"], 0.0), d)
        apart[a["method"]] = apart.get(a["method"], 0) + (d > 1e-4)
    bad = {m: d for m, d in worst.items() if tol is not None and d > tol}
    print(name, "records", len(other), "largest |cpu - gpu| per method:",
          " ".join(f"{m}={d:.1e}" for m, d in sorted(worst.items())), "FAIL" if bad else "ok")
    print("  records over 1e-4 apart:", {m: n for m, n in apart.items() if n})
PY
cc evaluate "$work/cuda.jsonl" --model "$work/model" --device cuda -q -o "$work/eval.json" && echo "evaluate cuda ok" || echo "FAIL evaluate cuda"
head -n 57 "$work/cuda.jsonl" > "$work/few.jsonl"
cc sanity "$work/few.jsonl" --refs "$work/refs.h5" --device cuda -q -o "$work/sanity.json" && echo "sanity cuda ok" || echo "FAIL sanity cuda"
cp "$work"/eval.json "$work"/sanity.json "$out"/ 2>/dev/null || true
