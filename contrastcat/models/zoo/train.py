"""Fine-tuning a packaged encoder into a classifier, fast on a CPU.

Two stages:
1. ``fine_tune``: the whole model, length-sorted batches (little padding),
   bfloat16 autocast only where the hardware runs it natively (elsewhere it is
   emulated: a step measured 3-14x slower than float32, ``models.precision``), AdamW with
   linear decay and a higher learning rate for the freshly initialised head
   (pooler + classifier).
2. ``sharpen_head``: the encoder frozen, its [CLS] features computed once in
   fp32, the head trained further on them. Fine-tuned BERT-base models end up
   near-certain on their training data (f_c < 1e-3 for many rows), which is
   what Contrast-CAT's references need; a small encoder after one epoch does
   not (its lowest other-class probability was about 0.03). Training the head
   on fixed features raises the logit margins without touching the encoder.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ...spec import Progress
from ...errors import BadInput
from ..loading import choose_pad_id
from ..precision import DTYPES, native
from ..tokens import length_batches, pad



@dataclass(frozen=True)
class Recipe:
    seed: int = 0
    epochs: int = 1
    batch_size: int = 32
    max_length: int = 64
    lr: float = 5e-5
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    precision: str = "auto"  # of fine_tune's passes: auto (bfloat16 where native, else float32), float32, bfloat16
    sharpen_steps: int = 1000  # at most
    sharpen_lr: float = 1e-3
    sharpen_target: int = 100  # stop once every class has this many references below gamma
    gamma: float = 1e-3
    check_every: int = 25

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise BadInput(f"Recipe.precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")

    def as_dict(self) -> dict:
        return asdict(self)

    def training_dtype(self, device: torch.device) -> torch.dtype:
        """What ``fine_tune`` computes in on ``device``."""
        if self.precision == "auto":
            return torch.bfloat16 if native(torch.bfloat16, device) else torch.float32
        return DTYPES[self.precision]


PRECISIONS = ("auto", "float32", "bfloat16")


def _batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Batches of similar length, in random order (shuffled within equal lengths first)."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def _head_parameters(model) -> list[torch.nn.Parameter]:
    return [p for name, p in model.named_parameters() if "pooler" in name or "classifier" in name]


def _device_of(model) -> torch.device:
    return next(model.parameters()).device


def _adamw(groups: list[dict], weight_decay: float) -> torch.optim.AdamW:
    """AdamW in one fused kernel where this torch has it (2.4 and later, on a CPU too): measured
    0.017 s against 0.097 s per step of all-MiniLM-L6-v2 here (AVX2 kernels), an eighth of a training step."""
    try:
        return torch.optim.AdamW(groups, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(groups, weight_decay=weight_decay)


def fine_tune(
    model,
    tokenizer,
    texts: Sequence[str],
    labels: Sequence[int],
    recipe: Recipe,
    progress: Progress | None = None,
):
    """Train the whole model in place, on the device it is on, in ``recipe.training_dtype``."""
    torch.manual_seed(recipe.seed)
    device = _device_of(model)
    dtype = recipe.training_dtype(device)
    rng = random.Random(recipe.seed)
    encoded = tokenizer(list(texts), truncation=True, max_length=recipe.max_length)["input_ids"]
    lengths = [len(ids) for ids in encoded]
    target = torch.as_tensor(list(labels), device=device)
    head = _head_parameters(model)
    head_ids = {id(p) for p in head}
    body = [p for p in model.parameters() if id(p) not in head_ids]
    groups = [{"params": body, "lr": recipe.lr}, {"params": head, "lr": recipe.head_lr}]
    optimizer = _adamw(groups, recipe.weight_decay)
    steps = recipe.epochs * -(-len(encoded) // recipe.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1 - step / steps))
    pad_id = choose_pad_id(tokenizer, model.config)
    model.train()
    done = 0
    for _ in range(recipe.epochs):
        for batch in _batches(lengths, recipe.batch_size, rng):
            ids, mask = pad([encoded[i] for i in batch], pad_id, device)
            with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
                loss = model(input_ids=ids, attention_mask=mask, labels=target[batch]).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            done += 1
            if progress:
                progress("fine-tuning", done, steps)
    model.eval()
    return model


FEATURE_BATCH = 64  # texts per forward pass of the frozen encoder (no gradients kept)


@torch.no_grad()
def cls_features(
    model, tokenizer, texts: Sequence[str], max_length: int, progress: Progress | None = None, phase: str = "features",
) -> torch.Tensor:
    """The encoder's last hidden state at [CLS], fp32, eval mode: what the head sees at inference."""
    model.eval()
    device = _device_of(model)
    encoded = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
    out = torch.zeros(len(encoded), model.config.hidden_size, device=device)
    base = getattr(model, model.base_model_prefix)
    done = 0
    for batch in length_batches([len(ids) for ids in encoded], FEATURE_BATCH):
        ids, mask = pad([encoded[i] for i in batch], choose_pad_id(tokenizer, model.config), device)
        out[batch] = base(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0].float()
        done += len(batch)
        if progress:
            progress(phase, done, len(encoded))
    return out


def head_logits(model, features: torch.Tensor) -> torch.Tensor:
    """Pooler + classifier on [CLS] features (BERT-family heads)."""
    pooler = getattr(model, model.base_model_prefix).pooler
    pooled = pooler.activation(pooler.dense(features))
    return model.classifier(pooled)


@dataclass(frozen=True)
class Sharpened:
    steps: int
    confident: list[int]  # per class: reference candidates with f_c < gamma after sharpening


def sharpen_head(
    model,
    features: torch.Tensor,
    labels: Sequence[int],
    recipe: Recipe,
    progress: Progress | None = None,
) -> Sharpened:
    """Train pooler + classifier on fixed features until every class has enough confident references.

    Full batch, class-balanced cross-entropy (otherwise the majority class gets
    all the confidence), no dropout, no weight decay. Every ``check_every``
    steps the training rows are scored; it stops once each class c has
    ``sharpen_target`` correctly classified rows of other classes with
    f_c < ``gamma``, or after ``sharpen_steps``.
    """
    torch.manual_seed(recipe.seed)
    target = torch.as_tensor(list(labels), device=features.device)
    counts = torch.bincount(target, minlength=model.config.num_labels).clamp(min=1).float()
    weight = len(target) / (len(counts) * counts)
    optimizer = torch.optim.Adam(_head_parameters(model), lr=recipe.sharpen_lr)
    step, confident = 0, _confident(model, features, target, recipe.gamma)
    while min(confident) < recipe.sharpen_target and step < recipe.sharpen_steps:
        for _ in range(recipe.check_every):
            with torch.enable_grad():
                loss = torch.nn.functional.cross_entropy(head_logits(model, features), target, weight=weight)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            step += 1
        confident = _confident(model, features, target, recipe.gamma)
        if progress:
            progress("sharpening", step, recipe.sharpen_steps)
    return Sharpened(steps=step, confident=confident)


@torch.no_grad()
def _confident(model, features: torch.Tensor, target: torch.Tensor, gamma: float) -> list[int]:
    probs = torch.softmax(head_logits(model, features).double(), dim=-1).cpu().numpy()
    return confident_counts(probs, target.cpu().numpy(), gamma)


def confident_counts(probs: np.ndarray, labels: np.ndarray, gamma: float) -> list[int]:
    """Per class c: correctly classified rows of other classes with f_c < gamma (reference candidates)."""
    correct = probs.argmax(axis=1) == labels
    return [int(((labels != c) & correct & (probs[:, c] < gamma)).sum()) for c in range(probs.shape[1])]
