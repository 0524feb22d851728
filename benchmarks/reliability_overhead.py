"""What the integrity checks cost, measured on a real model and library.

    python benchmarks/reliability_overhead.py [--model minilm-rt] [--refs build/demo/refs.h5]

Each line pairs a safeguard with the same work done without it, timed in one
run (best of --repeat), and prints the ratio:

1. opening a library: the content fingerprint recomputed (everything but the
   activations is read and hashed) vs reading the same attributes and entries;
2. loading every reference's activations: checksum, shape and NaN checks vs
   plain reads;
3. tokenizing long texts: counting the tokens a cut drops vs the plain
   truncating tokenizer call;
4. explain to a file: the --resume checkpoint (a flush per record, a lock,
   the records checked on resume) vs the plain atomic output.

The model and library default to those of ``make demo``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import h5py
import torch


def best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def line(what: str, guarded: float, plain: float) -> None:
    print(f"{what:<44} {guarded * 1000:9.1f} ms  vs {plain * 1000:9.1f} ms  ({guarded / plain:5.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="minilm-rt")
    parser.add_argument("--refs", default="build/demo/refs.h5")
    parser.add_argument("--inputs", type=int, default=256, help="long texts tokenized in step 3")
    parser.add_argument("--explain-inputs", type=int, default=32, help="held-out texts explained in step 4")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from typer.testing import CliRunner

    from contrastcat.library import RefLibrary
    from contrastcat.library.reader import RefLibrary as Schema
    from contrastcat.models.precision import describe_hardware
    from contrastcat.models.resolve import load_classifier
    from contrastcat.models.tokens import tokenize
    from contrastcat.records.corpora import CORPORA
    from contrastcat_cli.app import app

    print(f"torch {torch.__version__}, {describe_hardware(torch.device('cpu'))}, {torch.get_num_threads()} threads, model {args.model}, library {args.refs}")
    library = RefLibrary(args.refs)

    def plain_open() -> None:
        with h5py.File(args.refs, "r") as file:
            dict(file.attrs)
            for name, group in file["classes"].items():
                Schema._read_entries(group)

    line("1. open a library (fingerprint verified)", best(lambda: RefLibrary(args.refs), args.repeat),
         best(plain_open, args.repeat))

    classes = range(len(library.info.label_names))
    counts = {c: library.pool_size("contrast", c) for c in classes}

    def verified_load() -> None:
        fresh = RefLibrary(args.refs)
        for c in classes:
            fresh.references(c, counts[c], torch.device("cpu"))

    def plain_load() -> None:
        with h5py.File(args.refs, "r") as file:
            for c in classes:
                for i in range(counts[c]):
                    file[f"classes/{c}/activations/{i}"][()]

    line("2. load all activations (checksums, NaN)", best(verified_load, args.repeat), best(plain_load, args.repeat))

    classifier = load_classifier(args.model, "cpu")
    corpus = CORPORA["bbc-news"]()  # long articles: most are cut at any limit
    long_texts = [e.text for e in corpus.held_out[: args.inputs]]
    limit = classifier.max_length

    def plain_tokenize() -> None:
        classifier.tokenizer(long_texts, truncation=True, max_length=limit, return_offsets_mapping=True,
                             return_special_tokens_mask=True)

    cut = sum(t.truncated for t in tokenize(classifier.tokenizer, long_texts, limit))
    line(f"3. tokenize {len(long_texts)} long texts ({cut} cut at {limit})",
         best(lambda: tokenize(classifier.tokenizer, long_texts, limit), args.repeat),
         best(plain_tokenize, args.repeat))

    rows = CORPORA["rotten-tomatoes"]().held_out[: args.explain_inputs]
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "in.jsonl"
        source.write_text("".join(json.dumps({"id": i, "text": e.text}) + "\n" for i, e in enumerate(rows)))

        def run(*extra: str) -> None:
            out = Path(folder) / "out.jsonl"
            out.unlink(missing_ok=True)
            result = runner.invoke(app, ["explain", str(source), "--refs", args.refs, "-o", str(out), "-q", *extra])
            assert result.exit_code == 0, result.output

        resumed, plain = [], []
        for _ in range(args.repeat - 1 or 1):  # interleaved: a slow spell of the machine hits both
            resumed.append(best(lambda: run("--resume"), 1))
            plain.append(best(lambda: run(), 1))
        line(f"4. explain {len(rows)} inputs, contrastcat (--resume)", min(resumed), min(plain))
    print("ratios above 1 are the cost of the check; compare ratios, not absolute times, across runs")


if __name__ == "__main__":
    main()
