"""A synthetic task where the important tokens are known, and a tiny BERT trained on it.

Sentences are random filler words with planted keywords: positive keywords
make the label ``positive``, negative keywords ``negative``, and no keyword
``neutral``. Every class has its own evidence (a two-class version lets a
model learn one class as the default, and then that class's keywords do not
matter to it). Used by the test suite and by ``make demo`` as a model that
needs no download; it trains in seconds on a CPU.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch

LABELS = ("negative", "positive", "neutral")
POSITIVE = ("good", "great", "superb", "lovely", "brilliant")
NEGATIVE = ("bad", "awful", "boring", "dull", "terrible")
FILLER = tuple(
    """the a film movie story plot actor actress scene music script camera we
    they it was is this that with of and to in on for about some very quite
    really long short old new night day city house road car man woman child
    dog friend family year time place end start part character""".split()
)
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


@dataclass(frozen=True)
class ToyExample:
    text: str
    label: int
    keywords: tuple[int, ...]  # word positions (0-based, in ``text.split()``) of planted keywords


def make_examples(count: int, seed: int, min_filler: int = 8, max_filler: int = 16) -> list[ToyExample]:
    rng = random.Random(seed)
    examples = []
    for _ in range(count):
        label = rng.randrange(len(LABELS))
        words = [rng.choice(FILLER) for _ in range(rng.randint(min_filler, max_filler))]
        positions: list[int] = []
        if label != 2:
            pool = NEGATIVE if label == 0 else POSITIVE
            for _ in range(rng.randint(1, 2)):
                where = rng.randint(0, len(words))
                words.insert(where, rng.choice(pool))
                positions = [p + 1 if p >= where else p for p in positions] + [where]
        examples.append(ToyExample(" ".join(words), label, tuple(sorted(positions))))
    return examples


def make_tokenizer():
    from transformers import BertTokenizerFast

    vocab = {token: index for index, token in enumerate(SPECIALS + FILLER + POSITIVE + NEGATIVE)}
    return BertTokenizerFast(vocab=vocab, do_lower_case=True)


def make_model(seed: int, hidden: int = 64, layers: int = 2, heads: int = 4, vocab_size: int | None = None,
               labels: tuple[str, ...] = LABELS, **config_values):
    """A tiny BERT classifier of ``labels``, untrained (``config_values``: more of its config)."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size or len(SPECIALS + FILLER + POSITIVE + NEGATIVE),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden * 2,
        max_position_embeddings=64,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
        **config_values,
    )
    config._attn_implementation = "eager"
    return BertForSequenceClassification(config)


def train_toy_classifier(
    examples: list[ToyExample], seed: int = 0, epochs: int = 1, batch_size: int = 32, lr: float = 1e-3
):
    """(model, tokenizer) trained on ``examples``; deterministic for a given seed.

    One epoch on 2,000 sentences reaches 100 % held-out accuracy without
    saturating: longer training pushes probabilities to 0.999, where the
    signed first-order terms that CAT-style methods read turn negative at
    the keywords and every gradient x activation method loses them.
    """
    tokenizer = make_tokenizer()
    model = make_model(seed)
    return fit(model, tokenizer, [e.text for e in examples], torch.tensor([e.label for e in examples]),
               Training(seed, epochs, batch_size, lr)), tokenizer


@dataclass(frozen=True)
class Training:
    """How a test model is trained: seeded order, epochs, batch size and AdamW's learning rate."""

    seed: int = 0
    epochs: int = 1
    batch_size: int = 32
    lr: float = 1e-3


def fit(model, tokenizer, texts: list[str], labels: torch.Tensor, training: Training = Training()):
    """``model`` trained in place on ``texts`` and their ``labels`` (a row each: class indices, or
    a float per label for a multi-label model), in a seeded order; returned in eval mode."""
    generator = torch.Generator().manual_seed(training.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=training.lr)
    batch_size = training.batch_size
    model.train()
    for _ in range(training.epochs):
        order = torch.randperm(len(texts), generator=generator)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size].tolist()
            encoded = tokenizer([texts[i] for i in batch], padding=True, return_tensors="pt")
            loss = model(
                input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"], labels=labels[batch]
            ).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return model


def save(model, tokenizer, directory: str | Path) -> Path:
    """``model`` and ``tokenizer`` written to ``directory`` as a local model directory."""
    directory = Path(directory)
    from ..models.loading import quiet_transformers

    with quiet_transformers():
        model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_toy_model(directory: str | Path, examples: list[ToyExample], seed: int = 0) -> Path:
    return save(*train_toy_classifier(examples, seed=seed), directory)
