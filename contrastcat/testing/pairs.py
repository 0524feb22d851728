"""A sentence-pair version of the planted-keyword task, and tiny pair classifiers trained on it.

Each input is two sentences of filler words. A positive or a negative keyword is
planted in one of them, the first or the second, chosen at random: the label is
its class, or ``neutral`` with none. So the evidence is known token by token, in
either segment, and a pair classifier must read both texts to get it right.

Two tokenizer styles, as pair classifiers come: BERT's (``[CLS] A [SEP] B [SEP]``
with token type ids, the second text typed 1) and RoBERTa's (``<s> A </s></s> B
</s>``, no token type ids). The models train through the package's own forward
pass (``models.forward.classify``) on the tokenizer's pair encodings, so what they
learn is what they are explained with.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from . import toy

STYLES = {"bert": "bert", "roberta": "roberta"}  # style -> the tiny family it is built from


@dataclass(frozen=True)
class PairExample:
    text: str
    pair: str
    label: int
    keyword: tuple[int, int] | None  # (segment 0 or 1, word position in that text) of the planted keyword


def make_pair_examples(count: int, seed: int, min_filler: int = 4, max_filler: int = 9) -> list[PairExample]:
    rng = random.Random(seed)
    examples = []
    for _ in range(count):
        label = rng.randrange(len(toy.LABELS))
        texts = [[rng.choice(toy.FILLER) for _ in range(rng.randint(min_filler, max_filler))] for _ in range(2)]
        keyword = None
        if label != 2:
            segment = rng.randrange(2)
            where = rng.randint(0, len(texts[segment]))
            texts[segment].insert(where, rng.choice(toy.NEGATIVE if label == 0 else toy.POSITIVE))
            keyword = (segment, where)
        examples.append(PairExample(" ".join(texts[0]), " ".join(texts[1]), label, keyword))
    return examples


def train_pair_classifier(style: str, examples: list[PairExample], seed: int = 0, epochs: int = 8, lr: float = 1e-3):
    """(model, tokenizer) of ``style`` (``bert`` or ``roberta``) trained on ``examples`` (deterministic per seed).

    Training stops after the first epoch that classifies 99 % of the first 300 examples right:
    some seeds need six epochs to find the keyword in both texts, and the others, trained that
    long, saturate (probabilities at 0.999, where the first-order terms CAT-style methods read
    turn negative at the keywords; see ``toy.train_toy_classifier``).
    """
    from ..models import classify, wrap_classifier
    from ..models.tokens import pad, tokenize
    from .tiny import build, train_epoch

    model, tokenizer = build(STYLES[style], seed=seed, hidden=64, layers=2, init_range=None)
    classifier = wrap_classifier(model, tokenizer, name=f"pair-{style}").paired()
    encoded = tokenize(tokenizer, [e.text for e in examples], classifier.max_length, (), [e.pair for e in examples])
    labels = torch.tensor([e.label for e in examples])
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    order = list(range(len(examples)))
    rng = random.Random(seed)
    model.train()
    for _ in range(epochs):
        rng.shuffle(order)
        train_epoch(classifier, [text.ids for text in encoded], labels, order, optimizer)
        model.eval()
        with torch.no_grad():
            check = list(range(min(300, len(examples))))
            ids, mask = pad([encoded[i].ids for i in check], classifier.pad_id, classifier.device)
            logits, _ = classify(classifier, mask, mask.sum(dim=1), input_ids=ids)
        if (logits.argmax(dim=-1) == labels[check]).float().mean() >= 0.99:
            break
        model.train()
    model.eval()
    return model, tokenizer


def save_pair_model(directory, style: str, examples: list[PairExample], seed: int = 0):
    """Train and save a pair classifier as a model directory ``explain --model`` loads."""
    from pathlib import Path

    from ..models.loading import quiet_transformers

    model, tokenizer = train_pair_classifier(style, examples, seed=seed)
    directory = Path(directory)
    with quiet_transformers():
        model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def keyword_token(text, example: PairExample) -> int | None:
    """The position, in a tokenized pair (``models.tokens.TokenizedText``), of the planted keyword's
    first token, found from its characters: None without a keyword."""
    if example.keyword is None:
        return None
    segment, word = example.keyword
    words = (example.text if segment == 0 else example.pair).split(" ")
    start = sum(len(w) + 1 for w in words[:word])
    for position, (span, where) in enumerate(zip(text.offsets, text.segments)):
        if where == segment and span[0] <= start < span[1]:
            return position
    return None
