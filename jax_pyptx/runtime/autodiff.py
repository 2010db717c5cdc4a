"""Autodiff: pair a forward kernel with a backward kernel (``jax.custom_vjp``).

    from jax_pyptx.runtime.autodiff import with_backward
    f = with_backward(fwd_kernel, bwd_kernel)                # a differentiable function
    # or, so that fwd_kernel(x, w) itself is differentiable:
    configure(fwd_kernel, backward=bwd_kernel)

The backward receives ``(*inputs, *cotangents)`` (with ``save_outputs=True``:
``(*inputs, *outputs, *cotangents)``) and returns one gradient per forward input, in order.
It is a ``Kernel`` (its outputs are the gradients) or any JAX function (which may call
kernels, e.g. a backward kernel that writes per-row partial sums followed by ``jnp.sum``);
``None`` stands for a zero gradient. Runtime scalars and integer inputs get zero gradients.

A kernel with no backward raises a clear error under ``jax.grad`` / ``jax.vjp`` / ``jvp``.
"""
from __future__ import annotations

from .ad import vjp_pair
from .call import as_callable

__all__ = ["with_backward"]


def with_backward(forward, backward, *, save_outputs: bool = False, **call_kw):
    """A function computing ``forward(*inputs)`` whose VJP is ``backward``.

    ``forward`` / ``backward``: Kernels or JAX functions. ``call_kw`` (interpret, debug,
    template parameters, ...) is passed to kernel calls.

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> import jax, jax.numpy as jnp
        >>> from jax_pyptx import with_backward
        >>> f = with_backward(twice(), lambda x, g: (g * 2.0,), interpret=True)
        >>> jax.grad(lambda x: f(x).sum())(jnp.ones(32, jnp.float32))[:3]
        Array([2., 2., 2.], dtype=float32)
    """
    fwd_fn = as_callable(forward, **call_kw)
    bwd_fn = as_callable(backward, **call_kw)
    return vjp_pair(fwd_fn, bwd_fn, save_outputs, getattr(forward, "name", "forward"))
