"""Running a model the caller holds (``contrastcat.load_model(model, tokenizer)``) without changing it.

contrastcat needs eager attention (the only implementation that returns attention
probabilities) and eval mode (no dropout). A model it loads itself is set up so once; a
model it is lent is switched for each pass and then given back its own attention setting
and its modules' training flags, so the caller's notebook goes on as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def eager_eval(model: torch.nn.Module) -> Iterator[None]:
    """``model`` with eager attention and in eval mode inside, as it was after."""
    configs = _configs(model.config)
    attention = [getattr(config, "_attn_implementation_internal", None) for config in configs]
    training = [module for module in model.modules() if module.training]
    model.config._attn_implementation = "eager"  # the setter sets the sub-configs' too
    model.eval()
    try:
        yield
    finally:
        for config, value in zip(configs, attention):
            config._attn_implementation_internal = value
        for module in training:
            module.train()


def _configs(config) -> list:
    """A config and its sub-configs, each of which holds its own attention setting."""
    found = [config]
    for key in getattr(config, "sub_configs", {}) or {}:
        sub = getattr(config, key, None)
        if sub is not None:
            found += _configs(sub)
    return found


def attention_setting(model: torch.nn.Module) -> str | None:
    """The attention implementation the model's config names (what :func:`eager_eval` puts back)."""
    return getattr(model.config, "_attn_implementation_internal", None)
