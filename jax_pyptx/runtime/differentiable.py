"""Autograd through a forward and a backward kernel, for PyTorch and JAX alike:
``differentiable_kernel(forward, backward)``.

    rms = differentiable_kernel(fwd, backward)     # fwd, backward: kernels or functions
    y = rms(x, w)                                  # torch tensors with requires_grad ...
    y.sum().backward()                             # ... x.grad, w.grad from the backward
    jax.grad(lambda x, w: rms(x, w).sum())(xj, wj) # JAX arrays: a jax.custom_vjp

The op picks the framework from its inputs (``dispatch.any_torch_tensors``). Neither torch nor
JAX is imported here: the first call imports the one it needs. JAX-only code can also use
``with_backward`` (``autodiff``) or ``configure(kernel, backward=...)``.
"""
from __future__ import annotations

import sys

from ..errors import SpecializationError
from .call_router import any_torch_tensors

__all__ = ["differentiable_kernel"]


def differentiable_kernel(forward_kernel, backward_kernel, *, save_for_backward=None,
                          num_grad_inputs=None):
    """A function ``op(*inputs)`` computing ``forward_kernel(*inputs)`` whose gradient is
    ``backward_kernel(*saved, *grad_outputs)``.

    ``saved`` are the inputs at the indices ``save_for_backward`` (all when None). The
    backward returns one gradient (or a tuple): it is padded with None up to
    ``num_grad_inputs`` (default: the number of inputs) and cut to that length; inputs
    beyond get None. Both may be kernels or functions calling kernels.

    On torch tensors the op is a ``torch.autograd.Function`` (the forward runs under
    ``no_grad``); on JAX arrays a ``jax.custom_vjp`` with the same contract.

    >>> op = differentiable_kernel(lambda x: x, lambda x, g: g)     # doctest: +SKIP

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> import jax, jax.numpy as jnp
        >>> from jax_pyptx import differentiable_kernel
        >>> op = differentiable_kernel(twice(), lambda x, g: g * 2.0)
        >>> jax.grad(lambda x: op(x).sum())(jnp.ones(32, jnp.float32))[:3]
        Array([2., 2., 2.], dtype=float32)
    """
    name = getattr(forward_kernel, "name", None) or getattr(forward_kernel, "__name__", "op")
    grads = _GradContract(name, save_for_backward, num_grad_inputs)
    state = {}

    def torch_function():
        fn = state.get("torch")
        if fn is None:
            fn = state["torch"] = _torch_autograd(forward_kernel, backward_kernel, grads)
        return fn

    if "torch" in sys.modules:          # build it now: torch.compile cannot trace a class
        torch_function()                 # statement, in case the first call is compiled

    def op(*inputs):
        if any_torch_tensors(inputs):
            return torch_function().apply(*inputs)
        return _jax_vjp(forward_kernel, backward_kernel, grads, inputs)

    op.__name__ = op.__qualname__ = str(name)
    op.__doc__ = (f"{name} with autograd: forward {name}, backward "
                  f"{getattr(backward_kernel, 'name', getattr(backward_kernel, '__name__', '?'))}"
                  f" (jax_pyptx.differentiable_kernel)")
    op.forward_kernel = forward_kernel
    op.backward_kernel = backward_kernel
    return op


class _GradContract:
    """``differentiable_kernel``'s contract with its backward: which inputs it saves, how
    many gradients it returns."""

    def __init__(self, name, save_for_backward, num_grad_inputs):
        if save_for_backward is not None:
            save_for_backward = tuple(int(i) for i in save_for_backward)
        if num_grad_inputs is not None and int(num_grad_inputs) < 0:
            raise SpecializationError(f"differentiable_kernel: num_grad_inputs must be >= 0, "
                                      f"got {num_grad_inputs!r}")
        self.name = name
        self.save_for_backward = save_for_backward
        self.num_grad_inputs = num_grad_inputs

    def saved_of(self, inputs) -> list:
        """The inputs the backward receives (all, or those at ``save_for_backward``)."""
        idx = range(len(inputs)) if self.save_for_backward is None else self.save_for_backward
        for i in idx:
            if not -len(inputs) <= i < len(inputs):
                raise SpecializationError(
                    f"differentiable_kernel({self.name}): save_for_backward index {i} is out "
                    f"of range for {len(inputs)} inputs")
        return [inputs[i] for i in idx]

    def grads_of(self, res, n_inputs: int) -> tuple:
        """The backward's result as one gradient (or None) per input."""
        if not isinstance(res, (tuple, list)):
            res = (res,)
        n = n_inputs if self.num_grad_inputs is None else int(self.num_grad_inputs)
        res = (tuple(res) + (None,) * n)[:n]
        return (res + (None,) * n_inputs)[:n_inputs]


def _torch_autograd(forward_kernel, backward_kernel, grads: _GradContract):
    """The ``torch.autograd.Function`` of a ``differentiable_kernel`` (forward under
    ``no_grad``; non-tensor saved inputs kept on the context as they are)."""
    import torch

    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            saved = grads.saved_of(inputs)
            is_t = [isinstance(s, torch.Tensor) for s in saved]
            ctx.save_for_backward(*[s for s, t in zip(saved, is_t) if t])
            ctx.others = [None if t else s for s, t in zip(saved, is_t)]
            ctx.n_inputs = len(inputs)
            with torch.no_grad():
                return forward_kernel(*inputs)

        @staticmethod
        def backward(ctx, *grad_outputs):
            tensors = iter(ctx.saved_tensors)
            saved = [next(tensors) if o is None else o for o in ctx.others]
            return grads.grads_of(backward_kernel(*saved, *grad_outputs), ctx.n_inputs)

    Function.__name__ = Function.__qualname__ = f"{grads.name}_autograd"
    return Function


def _jax_vjp(forward_kernel, backward_kernel, grads: _GradContract, inputs):
    """``differentiable_kernel`` on JAX arrays: a ``jax.custom_vjp`` of the pair."""
    from .ad import vjp_pair
    from .call import as_callable

    n = len(inputs)

    def bwd(*args):
        return grads.grads_of(backward_kernel(*grads.saved_of(args[:n]), *args[n:]), n)

    return vjp_pair(as_callable(forward_kernel), bwd, False, grads.name)(*inputs)
