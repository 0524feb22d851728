"""Where AttnLRP's propagation rules apply (Achtibat et al., ICML 2024), for one forward and backward pass.

Inside ``lrp_rules(model)`` the backward pass of the model computes, instead of
the gradient, a *modified* gradient g such that value × g is the LRP relevance
at every tensor (the "gradient × input" form of LRP that the ``lxt`` library
uses). What changes, and where:

- **Linear layers** (``nn.Linear``, GPT-2's ``Conv1D``, embeddings, additions,
  the residual stream): unchanged. The gradient through ``z = Wx + b`` is the
  ε-rule with ε → 0 (LRP-0): ``x_i Σ_j W_ji R_j / z_j``; the bias keeps its
  share ``b_j R_j / z_j`` (so do position and token-type embeddings).
- **Element-wise non-linearities with f(0) = 0** (the activation modules of
  ``torch.nn`` and ``transformers.activations``, also those made inside a
  forward, and a family's own parameter-free module named like one, e.g.
  BLOOM's ``BloomGelu``, each tried on a 0 first: sigmoid-like ones keep
  their gradient; ``tanh``, ``gelu``, ``silu``, ``relu``, ``mish``, ``elu``,
  ``leaky_relu`` called as functions, e.g. RoBERTa's head): *identity rule*,
  relevance passes through unchanged: the local gradient is f(x)/x.
- **Products of two input-dependent tensors** (``matmul``, ``bmm``, ``einsum``,
  ``*``, the product inside ``baddbmm``/``addmm``: the attention's Q·Kᵀ and A·V,
  BLOOM's ALiBi scores, gated MLPs): *uniform rule*, each of the
  n operands gets 1/n of the product's relevance: the product's gradient is
  divided by n. A product with a weight or a constant (rotary cos/sin, a
  norm's weight, DeBERTa's relative-position keys, which come from weights
  only) is linear and unchanged. "Input-dependent" is decided by autograd:
  the model's parameters are frozen for the pass, so only tensors computed
  from the input embeddings require grad.
- **LayerNorm / RMSNorm**: the normaliser (standard deviation, root mean
  square) is held constant, so the norm is linear in its input (AttnLRP's
  identity rule on the division; the mean subtraction is linear); the
  LayerNorm bias keeps its share. Which modules are norms, and of which
  kind, is the family's row (``models.families``: ``Family.norms``).
- **Softmax**: the plain gradient. AttnLRP's softmax rule,
  ``R_in = x ⊙ (R_out − s Σ R_out)``, is exactly input × gradient: the rule
  is not conservative (the softmax absorbs relevance, AttnLRP §3.3).
- Dropout is off (the model is in eval mode).

Nothing is patched: the rules are forward hooks on the norm modules, a
module-call hook for activations and a ``TorchFunctionMode`` for the
functional calls (both of this thread only), all removed,
and every parameter's ``requires_grad`` restored, when the ``with`` block
ends (even by an exception). Forward values are exactly the model's own (the
hooks return the module's output; only its backward changes).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.module import register_module_forward_hook
from torch.overrides import TorchFunctionMode

from ..errors import BadInput
from ..models.families import LAYER_NORM, RMS_NORM, TORCH_LAYER_NORM, Family
from .lrp_propagation import identity_rule, uniform_rule

# Functions whose operands, when two or more depend on the input, share the product's relevance.
PRODUCTS = frozenset({
    torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.Tensor.__rmatmul__,
    torch.bmm, torch.Tensor.bmm, torch.einsum,
    torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__,
})
# input + alpha · (b1 @ b2): the product of b1 and b2 takes the uniform rule (BLOOM's baddbmm).
FUSED_PRODUCTS = frozenset({
    torch.baddbmm, torch.Tensor.baddbmm, torch.addmm, torch.Tensor.addmm, torch.addbmm, torch.Tensor.addbmm,
})
# Element-wise non-linear functions of one input-dependent tensor with f(0) = 0: the identity
# rule passes relevance unchanged only where f(x)/x exists (a sigmoid, 0.5 at 0, keeps its gradient).
ELEMENTWISE = frozenset({
    torch.tanh, torch.Tensor.tanh, F.tanh,
    F.gelu, F.silu, F.relu, torch.relu, torch.Tensor.relu, F.mish, F.elu, F.leaky_relu,
})
_NOT_ELEMENTWISE = (
    "Softmax", "Softmin", "LogSoftmax", "MultiheadAttention", "GLU", "Threshold", "Sigmoid", "LogSigmoid", "Softplus",
)
# A family's own activation module (BLOOM's BloomGelu): parameter-free, childless, named like one.
_ACTIVATION_NAMES = ("gelu", "silu", "swish", "relu", "tanh", "mish", "activation")
def _is_activation(module: nn.Module) -> bool:
    kind = type(module)
    if any(kind.__name__.startswith(name) for name in _NOT_ELEMENTWISE):
        return False
    if kind.__module__ in ("torch.nn.modules.activation", "transformers.activations"):
        return True
    # Written inline (x * 0.5 * (1 + tanh(...))), such a module would otherwise be taken
    # for a product of two input-dependent tensors.
    bare = next(module.parameters(), None) is None and next(module.children(), None) is None
    return bare and any(name in kind.__name__.lower() for name in _ACTIVATION_NAMES)


def _input_dependent(args, output) -> torch.Tensor | None:
    source = args[0] if args else None
    if not isinstance(source, torch.Tensor) or not source.requires_grad or not isinstance(output, torch.Tensor):
        return None
    return source


def _layer_norm_hook(module: nn.Module, args, output):
    """y = w (x − mean) / std + b with std held constant: the gradient of w (x − mean) / std.
    The value stays the module's own output (+ an exact zero); only the graph is new."""
    source = _input_dependent(args, output)
    if source is None:
        return None
    eps = getattr(module, "eps", getattr(module, "variance_epsilon", 1e-12))
    x = source.float()
    centred = x - x.mean(dim=-1, keepdim=True)
    std = (centred.pow(2).mean(dim=-1, keepdim=True) + eps).sqrt().detach()
    linear = centred / std
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor):
        linear = linear * weight.detach().float()
    return output.detach() + (linear - linear.detach()).to(output.dtype)


def _rms_norm_hook(module: nn.Module, args, output):
    """y = w ⊙ x / rms with rms held constant (Llama, Mistral, Qwen2, Gemma's 1 + w) is diagonal
    in x, with local gradient y / x."""
    source = _input_dependent(args, output)
    return None if source is None else identity_rule(source, output)


NORM_HOOKS = {LAYER_NORM: _layer_norm_hook, RMS_NORM: _rms_norm_hook}


def _keeps_zero(module: nn.Module) -> bool:
    """f(0) = 0: where the identity rule is defined (a Hardsigmoid or a Laplace CDF is 0.5 at 0)."""
    try:
        with torch.no_grad():
            value = module.forward(torch.zeros(1))
        return isinstance(value, torch.Tensor) and value.numel() == 1 and float(value) == 0.0
    except Exception:  # noqa: BLE001 - a module that cannot take a lone zero is left alone
        return False


def _activation_hook(thread: int, zero_keeping: dict):
    """A hook for every module call of this thread while the rules are on: activation modules
    made inside a forward (DeBERTa's pooler calls ``ACT2FN[name](x)``) are not in ``model.modules()``."""

    def hook(module: nn.Module, args, output):
        if threading.get_ident() != thread or not _is_activation(module):
            return None
        if not (args and isinstance(args[0], torch.Tensor) and isinstance(output, torch.Tensor)):
            return None
        kind = type(module)
        if kind not in zero_keeping:
            zero_keeping[kind] = _keeps_zero(module)
        return identity_rule(args[0], output) if zero_keeping[kind] else None

    return hook


class _FunctionRules(TorchFunctionMode):
    """The rules for functional calls (matmul in eager attention, ``torch.tanh`` in a head)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.scaled_dot_product_attention and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args[:3]
        ):
            # A fused kernel: its products and softmax cannot take the rules.
            raise BadInput(
                "the LRP methods need eager attention (attn_implementation='eager'); "
                "this model computed attention with scaled_dot_product_attention"
            )
        result = func(*args, **kwargs)  # the mode is off while its handler runs
        if func in PRODUCTS:
            operands = args[1:] if func is torch.einsum else args
            if func is torch.einsum and len(operands) == 1 and isinstance(operands[0], (list, tuple)):
                operands = operands[0]
            dependent = sum(isinstance(a, torch.Tensor) and a.requires_grad for a in operands)
            if dependent >= 2 and isinstance(result, torch.Tensor):
                return uniform_rule(result, dependent)
        elif func in FUSED_PRODUCTS:
            return _fused_product(func, result, args, kwargs)
        elif func in ELEMENTWISE and args and isinstance(args[0], torch.Tensor) and isinstance(result, torch.Tensor):
            return identity_rule(args[0], result)
        return result


def _fused_product(func, result: torch.Tensor, args, kwargs) -> torch.Tensor:
    """``beta · input + alpha · (b1 @ b2)``, its value exact, its gradient with b1 @ b2 halved."""
    named = [kwargs.get("input"), kwargs.get("batch1", kwargs.get("mat1")), kwargs.get("batch2", kwargs.get("mat2"))]
    source, first, second = (list(args) + named[len(args):])[:3]
    if not all(isinstance(t, torch.Tensor) and t.requires_grad for t in (first, second)):
        return result
    product = torch.matmul(first, second)
    if func in (torch.addbmm, torch.Tensor.addbmm):
        product = product.sum(dim=0)
    surrogate = kwargs.get("alpha", 1) * uniform_rule(product, 2)
    if isinstance(source, torch.Tensor) and source.requires_grad:
        surrogate = surrogate + kwargs.get("beta", 1) * source
    return result.detach() + (surrogate - surrogate.detach())


@contextlib.contextmanager
def lrp_rules(model: nn.Module, family: Family | None = None) -> Iterator[None]:
    """While inside, ``model``'s backward pass propagates AttnLRP relevance (see the module docstring).
    ``family``: its row (``models.families``), which names the classes of its norms and their kind
    (None: torch's ``LayerNorm`` only, for a bare module).

    Not for a model that another thread runs at the same time: its parameters are frozen and
    its norms hooked for the duration (the function mode and the activation hook are this
    thread's only)."""
    frozen = [p for p in model.parameters() if p.requires_grad]
    handles = []
    try:
        for p in frozen:
            p.requires_grad_(False)
        kinds = dict(family.norms if family is not None else TORCH_LAYER_NORM)
        for module in model.modules():
            kind = kinds.get(type(module).__name__)
            if kind is not None:
                handles.append(module.register_forward_hook(NORM_HOOKS[kind]))
        handles.append(register_module_forward_hook(_activation_hook(threading.get_ident(), {})))
        with _FunctionRules():
            yield
    finally:
        for handle in handles:
            handle.remove()
        for p in frozen:
            p.requires_grad_(True)
