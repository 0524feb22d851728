"""Per-architecture facts, kept as data.

Capture needs one thing from an architecture: the list of transformer layers,
whose *inputs* are the activations A^l of SPEC §1. Everything else (attention
probabilities, logits) comes through the HuggingFace API. New families are a
row in ``LAYER_PATHS``; the fallback finds the ModuleList whose length is
``config.num_hidden_layers``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..errors import BadInput

LAYER_PATHS: dict[str, str] = {
    "bert": "encoder.layer",
    "roberta": "encoder.layer",
    "xlm-roberta": "encoder.layer",
    "electra": "encoder.layer",
    "distilbert": "transformer.layer",
}

SUPPORTED_FAMILIES = ("bert", "distilbert")

# Families whose position ids start after the padding index: that many
# positions of ``max_position_embeddings`` can never hold a token.
POSITION_OFFSETS: dict[str, int] = {
    "roberta": 2,
    "xlm-roberta": 2,
}


def position_limit(config) -> int:
    """The most tokens (special ones included) the model's position embeddings take."""
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    return int(positions) - POSITION_OFFSETS.get(getattr(config, "model_type", ""), 0)


@dataclass(frozen=True)
class Adapter:
    """How to reach the transformer layers of one loaded model."""

    model_type: str
    layers: nn.ModuleList

    @property
    def num_layers(self) -> int:
        return len(self.layers)


def _attribute_path(root: nn.Module, dotted: str) -> nn.Module | None:
    node: object = root
    for part in dotted.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node if isinstance(node, nn.Module) else None


def adapter_for(model: nn.Module) -> Adapter:
    config = model.config
    model_type = getattr(config, "model_type", "unknown")
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    layers = None
    if model_type in LAYER_PATHS:
        layers = _attribute_path(base, LAYER_PATHS[model_type])
    if layers is None:
        expected = getattr(config, "num_hidden_layers", None)
        candidates = [
            module
            for module in base.modules()
            if isinstance(module, nn.ModuleList) and len(module) == expected
        ]
        layers = candidates[0] if len(candidates) == 1 else None
    if model_type not in SUPPORTED_FAMILIES or layers is None:
        raise BadInput(
            f"model type {model_type!r} is not supported yet "
            f"(supported: {', '.join(SUPPORTED_FAMILIES)})"
        )
    return Adapter(model_type=model_type, layers=layers)


def layer_input(args: tuple, kwargs: dict) -> torch.Tensor:
    """The hidden-state tensor a layer was called with, whatever its signature."""
    if args and isinstance(args[0], torch.Tensor):
        return args[0]
    for key in ("hidden_states", "x", "hidden_state"):
        if isinstance(kwargs.get(key), torch.Tensor):
            return kwargs[key]
    raise RuntimeError("could not find the hidden states among a layer's inputs")
