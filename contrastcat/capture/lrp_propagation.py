"""The two propagation rules AttnLRP adds to the gradient (Achtibat et al., ICML 2024), as
autograd functions: the forward value is unchanged, the backward is the modified gradient
whose product with the value is the LRP relevance. Where they apply (which modules and
functions, which norms of which family) is :mod:`.lrp_rules`'.
"""

from __future__ import annotations

import torch

# Below this |x|, f(x)/x is taken as 0 instead of dividing by ~0 (lxt adds 1e-10 to x instead).
_TINY = 1e-12


class _Rerouted(torch.autograd.Function):
    """The value of ``value``; its gradient goes to ``source``, times ``factor``."""

    @staticmethod
    def forward(ctx, value, source, factor):
        ctx.save_for_backward(factor)
        return value.clone()  # not a view: models modify these in place (Falcon: scores /= sqrt(d))

    @staticmethod
    def backward(ctx, grad):
        (factor,) = ctx.saved_tensors
        return None, grad * factor, None


class _ScaledGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, value, scale: float):
        ctx.scale = scale
        return value.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


def identity_rule(source: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``value = f(source)`` element-wise; relevance passes unchanged (local gradient f(x)/x)."""
    if not source.requires_grad or source.shape != value.shape:
        return value
    x, y = source.detach(), value.detach()
    safe = torch.where(x.abs() < _TINY, torch.ones_like(x), x)
    factor = torch.where(x.abs() < _TINY, torch.zeros_like(y), y / safe)
    return _Rerouted.apply(value, source, factor)


def uniform_rule(value: torch.Tensor, operands: int) -> torch.Tensor:
    """A product of ``operands`` input-dependent tensors: each gets an equal share."""
    return _ScaledGradient.apply(value, 1.0 / operands)
