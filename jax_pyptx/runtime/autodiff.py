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

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad

from ..errors import SpecializationError
from .primitive import CallSpec, pyptx_call_p

__all__ = ["with_backward"]


def _no_jvp(primals, tangents, *, spec: CallSpec):
    raise SpecializationError(
        f"kernel {spec.label!r} has no backward: jax_pyptx kernels are opaque to autodiff. "
        f"Pair it with a backward kernel: jax_pyptx.runtime.autodiff.with_backward(fwd, bwd) "
        f"or jax_pyptx.runtime.call.configure(kernel, backward=bwd)")


ad.primitive_jvps[pyptx_call_p] = _no_jvp


def _as_callable(f, **call_kw):
    from ..kernel import Kernel

    if isinstance(f, Kernel):
        from .call import call_kernel

        return lambda *a: call_kernel(f, *a, **call_kw)
    return f


def with_backward(forward, backward, *, save_outputs: bool = False, **call_kw):
    """A function computing ``forward(*inputs)`` whose VJP is ``backward``.

    ``forward`` / ``backward``: Kernels or JAX functions. ``call_kw`` (interpret, debug,
    template parameters, ...) is passed to kernel calls.
    """
    fwd_fn = _as_callable(forward, **call_kw)
    bwd_fn = _as_callable(backward, **call_kw)
    return _vjp_pair(fwd_fn, bwd_fn, save_outputs, getattr(forward, "name", "forward"))


def _vjp_pair(fwd_fn, bwd_fn, save_outputs: bool, label: str):
    def f(*inputs):
        return fwd_fn(*inputs)

    f.__name__ = f.__qualname__ = str(label)
    f = jax.custom_vjp(f)

    def f_fwd(*inputs):
        out = fwd_fn(*inputs)
        return out, (inputs, out if save_outputs else None)

    def f_bwd(res, ct):
        inputs, out = res
        cts = ct if isinstance(ct, (tuple, list)) else (ct,)
        outs = () if out is None else (out if isinstance(out, (tuple, list)) else (out,))
        grads = bwd_fn(*inputs, *outs, *cts)
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        grads = tuple(grads)
        if len(grads) != len(inputs):
            raise SpecializationError(
                f"backward of {label!r} returned {len(grads)} gradients for {len(inputs)} "
                f"inputs; return one per forward input (None for none)")
        fixed = []
        for g, x in zip(grads, inputs):
            x_dtype = np.dtype(jnp.result_type(x))
            if not jnp.issubdtype(x_dtype, jnp.inexact):
                fixed.append(None)
            elif g is None:
                fixed.append(None)
            else:
                g = jnp.asarray(g)
                if g.shape != jnp.shape(x) or g.dtype != x_dtype:
                    raise SpecializationError(
                        f"backward of {label!r}: gradient {len(fixed)} is "
                        f"{g.dtype}{list(g.shape)}, the input is {x_dtype}{list(jnp.shape(x))}")
                fixed.append(g)
        return tuple(fixed)

    f.defvjp(f_fwd, f_bwd)
    return f
