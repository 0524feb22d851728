"""Copies of a classifier whose weights are re-initialised cumulatively from the top: the model
randomisation of Adebayo et al. (2018), "Sanity Checks for Saliency Maps" (docs/cli.md, sanity).

The cascade: the classification head (every weight outside the layers and the embeddings: pooler,
final norm, classifier), then the layers from the last to the first, then the embeddings. Each
step re-initialises its weights as a fresh model would be (matrices from N(0, initializer_range),
biases 0, norm scales 1), from an explicit seed; the original is never touched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from .loading import Classifier, wrap_classifier

HEAD = "head"
EMBEDDINGS = "embeddings"
# Parameter names of the input embeddings across families (BERT's embeddings.*, GPT-2's wte/wpe,
# Llama's embed_tokens, DeBERTa's rel_embeddings).
_EMBEDDING_PARTS = ("embed", "wte", "wpe")


@dataclass(frozen=True)
class Step:
    name: str  # head, layer 6 ... layer 1, embeddings
    parameters: tuple[str, ...]  # the names re-initialised at this step (earlier steps' stay random)


def cascade_steps(classifier: Classifier) -> list[Step]:
    """The steps of the cascade, top first; every parameter of the model is in exactly one."""
    model = classifier.model
    in_layers: dict[int, int] = {}
    for index, layer in enumerate(classifier.adapter.layers):
        for parameter in layer.parameters():
            in_layers[id(parameter)] = index
    head, embeddings, layers = [], [], {}
    for name, parameter in model.named_parameters():
        if id(parameter) in in_layers:
            layers.setdefault(in_layers[id(parameter)], []).append(name)
        elif any(part in name for part in _EMBEDDING_PARTS):
            embeddings.append(name)
        else:
            head.append(name)
    steps = [Step(HEAD, tuple(head))]
    steps += [Step(f"layer {index + 1}", tuple(layers[index])) for index in sorted(layers, reverse=True)]
    steps.append(Step(EMBEDDINGS, tuple(embeddings)))
    return [step for step in steps if step.parameters]


def _reinitialise(model: torch.nn.Module, names: tuple[str, ...], generator: torch.Generator, std: float) -> None:
    wanted = set(names)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name not in wanted:
                continue
            if parameter.dim() >= 2:
                fresh = torch.randn(parameter.shape, generator=generator) * std
            elif name.endswith("bias") or name.endswith("beta"):
                fresh = torch.zeros(parameter.shape)
            else:  # a norm's scale
                fresh = torch.ones(parameter.shape)
            parameter.copy_(fresh.to(parameter.dtype))


def randomised(classifier: Classifier, seed: int = 0) -> Iterator[tuple[Step, Classifier]]:
    """Each step of the cascade with a classifier whose weights of that step and every earlier one
    are re-initialised (one copy of the model, randomised further at each step)."""
    model = copy.deepcopy(classifier.model).cpu()
    generator = torch.Generator().manual_seed(seed)
    std = float(getattr(model.config, "initializer_range", 0.02) or 0.02)
    for step in cascade_steps(classifier):
        _reinitialise(model, step.parameters, generator, std)
        yield step, wrap_classifier(
            model, classifier.tokenizer, name=f"{classifier.name} (randomised to {step.name})", source=classifier.source,
            device=classifier.device, label_names=classifier.label_names,
        )
