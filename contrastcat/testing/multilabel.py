"""A multi-label task where each label's important tokens are known, and a tiny BERT trained on it.

Sentences are random filler words; each of three labels (``sports``, ``music``, ``food``) is
present, independently, in about half of them, and where it is, one or two of its own keywords are
planted. So an input carries none, one, two or all three labels, and the evidence for each is its
keywords only. The model is trained as transformers trains a multi-label classifier (one sigmoid
per label, binary cross-entropy; ``problem_type="multi_label_classification"`` in its config).
Used by the tests as a multi-label model that needs no download.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch

from . import toy
from .toy import FILLER, SPECIALS, Training, fit, save

LABELS = ("sports", "music", "food")
KEYWORDS = (
    ("football", "tennis", "goal", "match", "team"),
    ("guitar", "piano", "song", "concert", "melody"),
    ("pizza", "bread", "cheese", "soup", "pasta"),
)
VOCABULARY = SPECIALS + FILLER + tuple(word for words in KEYWORDS for word in words)


@dataclass(frozen=True)
class MultiLabelExample:
    text: str
    labels: tuple[int, ...]  # the labels present, in order
    keywords: dict[int, tuple[int, ...]]  # per label present: word positions (in ``text.split()``) of its keywords


def make_examples(count: int, seed: int, min_filler: int = 8, max_filler: int = 14) -> list[MultiLabelExample]:
    rng = random.Random(seed)
    examples = []
    for _ in range(count):
        words = [rng.choice(FILLER) for _ in range(rng.randint(min_filler, max_filler))]
        present = tuple(label for label in range(len(LABELS)) if rng.random() < 0.5)
        planted: list[tuple[int, int]] = []  # (position, label)
        for label in present:
            for _ in range(rng.randint(1, 2)):
                where = rng.randint(0, len(words))
                words.insert(where, rng.choice(KEYWORDS[label]))
                planted = [(p + 1 if p >= where else p, lab) for p, lab in planted] + [(where, label)]
        keywords = {label: tuple(sorted(p for p, lab in planted if lab == label)) for label in present}
        examples.append(MultiLabelExample(" ".join(words), present, keywords))
    return examples


def make_tokenizer():
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab={token: index for index, token in enumerate(VOCABULARY)}, do_lower_case=True)


def make_model(seed: int, hidden: int = 64, layers: int = 2, heads: int = 4):
    return toy.make_model(seed, hidden, layers, heads, vocab_size=len(VOCABULARY), labels=LABELS,
                          problem_type="multi_label_classification")


def train_multilabel_classifier(
    examples: list[MultiLabelExample], seed: int = 0, epochs: int = 6, batch_size: int = 32, lr: float = 1e-3
):
    """(model, tokenizer) trained on ``examples`` with transformers' multi-label loss (a float
    target per label); deterministic for a given seed."""
    tokenizer = make_tokenizer()
    model = make_model(seed)
    targets = torch.tensor([[float(label in e.labels) for label in range(len(LABELS))] for e in examples])
    return fit(model, tokenizer, [e.text for e in examples], targets, Training(seed, epochs, batch_size, lr)), tokenizer


def save_multilabel_model(directory: str | Path, examples: list[MultiLabelExample], seed: int = 0) -> Path:
    return save(*train_multilabel_classifier(examples, seed=seed), directory)
