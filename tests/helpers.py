"""What tests share, in one module (no test file imports another): running the CLI, the table of
every method, the toy model's library and hand-written records, models of no family row, a stub
classifier with probabilities set by hand, and the plain loops the engine is checked against."""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast
from typer.testing import CliRunner

from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
from contrastcat.records.data import LabelledData
from contrastcat.methods import METHODS
from contrastcat.models import wrap_classifier
from contrastcat.records.record import AttributionRecord
from contrastcat.testing import tiny, toy
from contrastcat_cli.app import app

# --- running the CLI ---------------------------------------------------------------

EXE = shutil.which("contrastcat") or os.path.join(os.path.dirname(sys.executable), "contrastcat")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
runner = CliRunner()


def invoke(*args, stdin=None):
    """The real Typer app, in this process."""
    return runner.invoke(app, [str(a) for a in args], input=stdin)


def assert_bad_input(call, *fragments):
    """``call()`` raises BadInput with a one-line message holding every fragment; returns the message."""
    from contrastcat.errors import BadInput

    with pytest.raises(BadInput) as caught:
        call()
    message = str(caught.value)
    assert message and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def assert_one_line_error(result, *fragments, code=2):
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    # An option is named as the command line spells it (``--min-tokens``), never as code below
    # the options writes a Python keyword (```min_tokens```): nothing rewrites messages on the way.
    assert not re.search(r"`[a-z_]+`", result.stderr), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def start(*args, **options) -> subprocess.Popen:
    """The installed console script in a child process, with a user's default Ctrl-C."""
    return subprocess.Popen(
        [EXE, *map(str, args)],
        stdout=options.pop("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **OFFLINE, **options.pop("env", {})},
        # A shell without job control starts background jobs with SIGINT ignored, and CI may
        # run us that way; a user's Ctrl-C arrives with the default disposition.
        preexec_fn=options.pop("preexec_fn", lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)),
        **options,
    )


def wait_for(condition, process: subprocess.Popen, timeout: float = 120.0, poll: float = 0.02) -> None:
    """Poll ``condition`` while ``process`` runs; fail if it ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(poll)


def handles_signal(pid: int, signum: int) -> bool:
    """Whether the process has installed a handler for ``signum`` (Linux: SigCgt in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signum - 1)))


def lines_in(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


# --- every method, cheaply -----------------------------------------------------------

# Inputs of very different lengths (1 to 15 words): batching them pads a lot.
TEXTS = [
    "good",
    "the film was great and the music was lovely too and the actor was superb",
    "a boring night",
    "we saw the city at night and it was a long road home with a friend",
    "the dog was awful",
    "it is a new story about an old man",
]

# Cheaper than the defaults, same code paths.
CHEAP = {"ig_steps": 8, "clusters": 8, "refs_used": 10, "candidates": 10}
VARIANTS: dict[str, list[dict]] = {
    "contrastcat": [
        {"refine": False}, {"attention": False}, {"layers": "1"}, {"rho": "mean"},
        {"test_steps": "2,5", "test_measure": "log-odds"},
    ],
    "contrastcat-plus": [{"refine_score": "morf", "top_maps": 3}, {"magnitude": True, "pool": "contrast"}],
    # test_steps 5: the cheap variant's deletion test (one late step), here with the log-odds drop too
    "contrastcat-lrp": [{"refine": False}, {"refs_used": 0}, {"test_steps": "5", "test_measure": "log-odds"}],
    "cat": [{"layers": "1"}],
    "integrated-gradients": [{"ig_baseline": "pad"}],
}


def method_cases() -> list[tuple[str, dict]]:
    cases = []
    for name, cls in METHODS.items():
        base = {key: value for key, value in CHEAP.items() if key in cls.Options.names()}
        cases.append((name, base))
        cases += [(name, {**base, **variant}) for variant in VARIANTS.get(name, [])]
    return cases


def case_id(case: tuple[str, dict]) -> str:
    name, options = case
    extra = [f"{key}={value}" for key, value in options.items() if key not in CHEAP]
    return " ".join([name, *extra])


CASES = method_cases()
IDS = [case_id(case) for case in CASES]


FULL_DISK_ROOM = 300_000  # bytes: a toy library or report does not fit, a probe file does (conftest's full_disk)


# --- the toy model's library and hand-written records -----------------------------------

def build_toy_library(classifier, examples, path, **options) -> RefLibrary:
    """A library over the toy training data; ``options`` go to BuildSettings."""
    build_library(
        classifier,
        LabelledData([e.text for e in examples], [e.label for e in examples], "toy"),
        path,
        BuildSettings(selection=SelectionSettings(), **options),
    )
    return RefLibrary(path)


KEYWORDS = set(toy.POSITIVE + toy.NEGATIVE)
PAIR_STYLES = ("bert", "roberta")  # the toy pair models' tokenizer styles (``pair_models`` in conftest)


def hand_scores(method: str, tokens: list[str], rng: random.Random) -> list[float]:
    if method in ("keyword", "attcat"):  # attcat: hand-made scores under a real method's name (for --kendall)
        return [1.0 if t in KEYWORDS else 0.5 * i / len(tokens) for i, t in enumerate(tokens)]
    if method == "position":
        return [1 - i / (len(tokens) - 1) for i in range(len(tokens))]
    return [round(rng.random(), 6) for _ in tokens]


INPUTS = 6  # of the 12 toy inputs: enough to separate the methods, and quick


@functools.cache
def fingerprint_of(model_dir: str) -> str:
    from contrastcat.models.resolve import load_classifier

    return load_classifier(model_dir, "cpu").fingerprint


def write_records(toy_dir, path, methods, with_special=True):
    """Records of ``methods`` for the toy inputs, interleaved: methods first appear in the given order.
    Written by hand as a user would for another tool's maps, with the model's fingerprint."""
    fingerprint = fingerprint_of(str(toy_dir / "model"))
    tokenizer = toy.make_tokenizer()
    rng = random.Random(0)
    texts = [json.loads(line)["text"] for line in (toy_dir / "inputs.jsonl").read_text().splitlines()[:INPUTS]]
    lines = []
    for index, text in enumerate(texts):
        ids = tokenizer(text)["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids)
        for method in methods if index % 2 == 0 else reversed(methods):
            record = {
                "id": index, "text": text, "tokens": tokens, "token_ids": ids, "scores": hand_scores(method, tokens, rng),
                "target": 0, "method": method, "model": str(toy_dir / "model"), "model_fingerprint": fingerprint,
            }
            if with_special:
                record["special"] = [t in tokenizer.all_special_tokens for t in tokens]
            lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


# --- models of no family row ------------------------------------------------------------

def fallback_model(kind: str):
    """Model types with no row: a RoBERTa clone (CamemBERT) and a decoder (GPT-NeoX)."""
    import transformers

    if kind == "camembert":
        tokenizer = tiny.make_tokenizer("roberta")
        config = transformers.CamembertConfig(
            vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=66, pad_token_id=1, type_vocab_size=1, num_labels=3,
        )
    elif kind == "bloom":
        tokenizer = tiny.make_tokenizer("gpt2")
        config = transformers.BloomConfig(
            vocab_size=len(tokenizer), hidden_size=32, n_layer=2, n_head=4, num_labels=3,
            bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
        )
    else:
        tokenizer = tiny.make_tokenizer("gpt2")
        config = transformers.GPTNeoXConfig(
            vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64, num_labels=3,
            bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
        )
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    return model.eval(), tokenizer


# --- a stub classifier whose probabilities are set by hand ----------------------------



PROBS = [
    [0.995, 0.004, 0.001],  # r0 label 0
    [0.980, 0.002, 0.018],  # r1 label 0
    [0.300, 0.600, 0.100],  # r2 label 0, misclassified
    [0.0005, 0.999, 0.0005],  # r3 label 1
    [0.001, 0.998, 0.001],  # r4 label 1, too short
    [0.009, 0.990, 0.001],  # r5 label 1
    [0.003, 0.0001, 0.9969],  # r6 label 2
    [0.020, 0.030, 0.950],  # r7 label 2
    [0.999, 0.0009, 0.0001],  # r8 label 0
]


LABELS = [0, 0, 0, 1, 1, 1, 2, 2, 0]


SHORT = {4}


NAMES = ("neg", "pos", "neutral")


class StubClassifier(BertForSequenceClassification):
    """A real tiny BERT underneath (so activations exist), with logits looked up per row."""

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        out = super().forward(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        table = torch.log(torch.tensor(PROBS, dtype=torch.float32))
        out.logits = table[input_ids[:, 1] - 5] + 0 * out.logits
        return out


def stub_classifier():
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"r{i}" for i in range(9)] + ["w"])}
    tokenizer = BertTokenizerFast(vocab=vocab)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, num_labels=3, id2label=dict(enumerate(NAMES)), label2id={n: i for i, n in enumerate(NAMES)},
    )
    return wrap_classifier(StubClassifier(config), tokenizer, name="stub")


def stub_texts():
    return [f"r{i} w w" if i in SHORT else f"r{i} " + " ".join(["w"] * 9) for i in range(len(PROBS))]


# --- results of other batches: equal within the documented tolerance ---------------------
# Byte-identity holds only for the same inputs in the same batches (a resumed run, shards
# merged, golden files, the same call twice). Inputs batched differently (another number of
# rows, a subset of a file, another batch size, one at a time) pad to other shapes, and the
# last bits of float32 differ with the shape and with the CPU's kernels (AMX, AVX-512,
# AVX-512 BF16, AVX2): a 6th decimal may round the other way (0.358622 against 0.358623).

BATCH_TOLERANCE = 1e-5  # docs/spec.md §1: a batched result equals the one-at-a-time result to 1e-5 (float32)


def assert_same_map(batched, single, atol: float = BATCH_TOLERANCE, raw_atol: float = 1e-6) -> None:
    """One input's map from two runs that batched it differently: the scaled scores within
    ``atol``. Occlusion's raw map is a difference of two float32 probabilities, each rounded as its
    batch's padding has it (about 1e-7); on a confident input its drops spread over 1e-4, and
    scaling magnifies that rounding by 1 / spread: its drops are held to ``raw_atol``, its scaled
    map to what that allows."""
    tolerance = atol
    if batched.method == "occlusion":
        raw = np.asarray(single.raw_scores)
        assert np.abs(np.asarray(batched.raw_scores) - raw).max() <= raw_atol, (batched.method, batched.id)
        tolerance += 2 * raw_atol / max(raw.max() - raw.min(), 1e-12)
    assert np.allclose(batched.scores, single.scores, atol=tolerance), (batched.method, batched.id)


def _as_record_dict(record) -> dict:
    if isinstance(record, (str, bytes)):
        return json.loads(record)
    if isinstance(record, dict):
        return record
    return record.to_dict()  # an AttributionRecord


def _assert_close(a, b, where: str, atol: float) -> None:
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, dict) and isinstance(b, dict):
            assert list(a) == list(b), f"{where}: fields {list(a)} != {list(b)}"
            for key in a:
                _assert_close(a[key], b[key], f"{where}.{key}", atol)
        elif isinstance(a, list) and isinstance(b, list):
            assert len(a) == len(b), f"{where}: {len(a)} items != {len(b)}"
            for index, (x, y) in enumerate(zip(a, b)):
                _assert_close(x, y, f"{where}[{index}]", atol)
        else:
            assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"
    elif isinstance(a, float) or isinstance(b, float):  # a measured value: scores, probs
        assert abs(a - b) <= atol, f"{where}: {a!r} and {b!r} differ by more than {atol}"
    else:  # ids, token ids, offsets, targets, refs kept: never a rounding
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def assert_records_close(found, expected, atol: float = BATCH_TOLERANCE) -> None:
    """Records of the same inputs explained in other batches (dicts, AttributionRecords or
    JSONL lines): the same records in the same order, with the same fields, every float (scores,
    probabilities) within ``atol`` and everything else exactly equal (ids, texts, tokens, token
    ids, offsets, special flags, targets and predictions, methods, settings, refs kept, model
    and library). Where the batches are the same, compare bytes instead."""
    found, expected = [_as_record_dict(r) for r in found], [_as_record_dict(r) for r in expected]
    assert len(found) == len(expected), f"{len(found)} records != {len(expected)}"
    for index, (a, b) in enumerate(zip(found, expected)):
        _assert_close(a, b, f"record {index} (id {b.get('id')!r}, {b.get('method')})", atol)


def near_tie(values, atol: float = BATCH_TOLERANCE) -> bool:
    """Whether two of ``values`` lie within ``atol`` of each other: an order (a ranking, a top-k)
    drawn from them may differ between batches, where each may round the other way."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    return bool(len(ordered) > 1 and np.diff(ordered).min() <= atol)


def kept_choices(drops, tie: float = BATCH_TOLERANCE) -> list[np.ndarray]:
    """Which maps a deletion test may keep (S >= mean + std; none passing keeps all) when its S
    values were measured in batches of another shape than ``drops`` (a plain loop's): a map whose
    S lies within ``tie`` of the threshold may fall on either side, the others cannot, and maps of
    the same S (the same deletion inputs) fall together. Each choice is a bool mask; with no map
    that close there is one, the plain rule's."""
    drops = np.asarray(drops, dtype=np.float64)
    threshold = drops.mean() + drops.std()
    margin = 1e-12 * max(1.0, abs(threshold))  # the pipeline's own TIE_MARGIN
    surely = drops >= threshold + tie if tie > 0 else drops >= threshold - margin
    doubtful = sorted(set(drops[~surely & (drops > threshold - tie - margin)].tolist()))
    assert len(doubtful) <= 10, f"{len(doubtful)} maps within {tie} of the threshold: too many to try"
    choices = []
    for size in range(len(doubtful) + 1):
        for chosen in itertools.combinations(doubtful, size):
            kept = surely | np.isin(drops, chosen)
            kept = kept if kept.any() else np.ones_like(kept)
            if not any(np.array_equal(kept, other) for other in choices):
                choices.append(kept)
    return choices


# --- plain loops: the reference the engine is checked against --------------------------



def forward(model, ids):
    return model(input_ids=torch.tensor([ids]), output_hidden_states=True, output_attentions=True)


def minmax(values):
    low, high = min(values), max(values)
    span = high - low if high != low else 1e-6
    return [(v - low) / span for v in values]


def probability(model, ids, target):
    with torch.no_grad():
        return torch.softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)[target].item()


# --- the hand-worked stub of the evaluation tests ----------------------------------------
# Two classes: p1(x) = 0.1 + the weights of the tokens present (t1..t5 weigh 0.4, 0.2, 0.1, 0.05,
# 0.05; t6..t10 nothing; each [MASK] 0.01), so the whole input has p1 = 0.9; record()'s map ranks
# t1 > t2 > ... > t10.

CLS, SEP, MASK = 2, 3, 4
WEIGHTS = {10: 0.4, 11: 0.2, 12: 0.1, 13: 0.05, 14: 0.05}  # t1..t5; t6..t10 are ids 15..19
STUB_IDS = [CLS] + list(range(10, 20)) + [SEP]


def stub_predict(sequences):
    out = []
    for ids in sequences:
        assert ids[0] == CLS and ids[-1] == SEP  # special tokens are never perturbed
        p1 = 0.1 + sum(WEIGHTS.get(t, 0.0) for t in ids) + 0.01 * sum(t == MASK for t in ids)
        out.append([1 - p1, p1])
    return np.array(out)


def record(scores=None, **overrides):
    scores = scores or [0.5] + [1 - i / 10 for i in range(10)] + [0.5]
    values = {
        "id": 1, "text": "", "tokens": [str(i) for i in STUB_IDS], "token_ids": STUB_IDS, "offsets": [[0, 0]] * 12,
        "special": [True] + [False] * 10 + [True], "scores": scores, "target": 1, "target_name": "pos",
        "probs": [0.1, 0.9], "predicted": 1, "label": 1, "method": "m", "model": "stub", "model_fingerprint": "",
        "library": None,
    }
    values.update(overrides)
    return AttributionRecord(**values)


def word_piece_record(**overrides):
    """A record of "unbelievably dull" in word pieces, made by hand (no model needed)."""
    values = dict(
        id="a", text="unbelievably dull", tokens=["[CLS]", "un", "##bel", "##ievably", "dull", "[SEP]"],
        token_ids=[2, 5, 6, 7, 8, 3], offsets=[[0, 0], [0, 2], [2, 5], [5, 12], [13, 17], [0, 0]],
        special=[True, False, False, False, False, True], scores=[0.3, 0.2, 0.9, 0.1, 1.0, 0.0],
        target=0, target_name="negative", probs=[0.97, 0.03], predicted=0, label=None, method="contrastcat",
        model="m", model_fingerprint="f", library="l", refs_kept=5, refs_total=30, settings={"refs_used": 30},
    )
    values.update(overrides)
    return AttributionRecord(**values)


# --- the planted-keyword benchmark: every method against the tokens known to matter ------------
# (tests/methods/test_finds_what_matters.py and test_finds_what_matters_plus.py, which say what it measures)

def keyword_first(records, examples) -> float:
    """Share of inputs with keywords whose top non-special token is a keyword."""
    hits = total = 0
    for record, example in zip(records, examples):
        if not example.keywords:
            continue
        scores = np.where(record.special, -np.inf, record.scores)
        hits += record.tokens[int(np.argmax(scores))] in KEYWORDS
        total += 1
    return hits / total


def planted_keyword_results(classifier, library, held_out, names, curves, kendall, printed: bool) -> dict:
    """Per method of ``names``, explained in one run over ``held_out``: (keyword first, the
    perturbation report or None, the Kendall-τ report over the first 60 records or None, those
    60 records). ``curves`` and ``kendall``: the methods measured on those (``printed``: all of
    them, and the table printed)."""
    from contrastcat.attribution.pipeline import explain, prepare_reattribution
    from contrastcat.evaluation.curves import EvalSettings
    from contrastcat.usecases.evaluate_records import kendall_for_records, perturbation_curves
    from contrastcat.methods import build_method
    from contrastcat.models import predictor
    from contrastcat.records.inputs import InputRow

    rows = [InputRow(line=i + 1, id=i, text=e.text, label=e.label) for i, e in enumerate(held_out)]
    predict = predictor(classifier, 64)
    methods = [build_method(name) for name in names]
    records = list(explain(classifier, rows, methods, library))
    found = {}
    for method in methods:
        mine = [r for r in records if r.method == method.name]
        found[method.name] = (
            keyword_first(mine, held_out),
            perturbation_curves(mine, predict, EvalSettings(), classifier.label_names)
            if printed or method.name in curves else None,
            kendall_for_records(
                mine[:60],
                classifier.num_classes,
                lambda recs, targets: prepare_reattribution(classifier, recs, library).scores(
                    classifier, recs, targets, library),
            ) if printed or method.name in kendall else None,
            mine[:60],  # the records Kendall-τ explained again
        )
    for name, (first, report, tau_report, _) in found.items():
        morf, lerf = (f"{report.curves[order].aopc_mean:.3f}" if report else "-" for order in ("morf", "lerf"))
        tau = f"{tau_report.tau_index:.3f}" if tau_report else "-"
        print(f"{name:20s} keyword-first {first:.3f}  MoRF AOPC {morf}  LeRF AOPC {lerf}  Kendall index tau {tau}")
    return found


# --- trained tiny families find the planted keyword (tests/models/test_family_keywords*.py) -----

# The two seeds whose rates were lowest for some family (tests/models/test_family_keywords.py says
# why two keep the test's power): a third trained each family once more for no more evidence.
FAMILY_SEEDS = (0, 2)


def keyword_first_by_characters(records, examples) -> float:
    """Share of inputs with keywords whose top non-special token is a keyword (by its characters)."""
    hits = total = 0
    for record, example in zip(records, examples):
        if not example.keywords:
            continue
        top = int(np.argmax(np.where(record.special, -np.inf, record.scores)))
        start, end = record.offsets[top]
        hits += record.text[start:end].strip() in KEYWORDS
        total += 1
    return hits / total


def assert_family_finds_the_keyword(model_type: str, folder) -> None:
    """The family trained with each seed of FAMILY_SEEDS (``tiny.trained_classifier_and_library``,
    its library in ``folder``) classifies 150 held-out sentences right, and Contrast-CAT ranks
    the planted keyword first at least 0.2 more often than random for every seed, 0.25 on the mean."""
    from contrastcat.attribution.pipeline import explain
    from contrastcat.methods import build_method
    from contrastcat.records.inputs import InputRow

    held_out = toy.make_examples(150, seed=2)
    rows = [InputRow(i + 1, i, e.text, e.label) for i, e in enumerate(held_out)]
    contrast, chance = [], []
    for seed in FAMILY_SEEDS:
        classifier, library = tiny.trained_classifier_and_library(model_type, seed, folder / f"{seed}.h5")
        records = list(explain(classifier, rows, [build_method("contrastcat"), build_method("random")], library))
        accuracy = np.mean([r.predicted == e.label for r, e in zip(records[::2], held_out)])
        assert accuracy > 0.95, (model_type, seed, accuracy)
        contrast.append(keyword_first_by_characters(records[::2], held_out))
        chance.append(keyword_first_by_characters(records[1::2], held_out))
        assert contrast[-1] > chance[-1] + 0.2, (model_type, seed, contrast[-1], chance[-1])
    print(model_type, "contrastcat", contrast, "random", chance)
    assert np.mean(contrast) > np.mean(chance) + 0.25
