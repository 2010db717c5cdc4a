"""Autodiff rules of ``pyptx_call`` and the forward/backward pairing (``jax.custom_vjp``).

The primitive itself has no derivative: :func:`no_jvp` (registered by ``primitive``) raises
``NotSupportedError`` naming the fix. A kernel paired with a backward goes through
:func:`vjp_pair` (``autodiff.with_backward``, ``configure(kernel, backward=...)``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import NotSupportedError, SpecializationError
from .callspec import CallSpec

__all__ = ["no_jvp", "vjp_pair"]


def no_jvp(prim, primals, tangents, *, spec: CallSpec):
    """The JVP rule of ``prim``: kernels are opaque to autodiff. JAX asks for it in both
    modes (``jax.grad`` linearizes through it too), so the message says what each needs."""
    raise NotSupportedError(
        f"kernel {spec.label!r} has no derivative: jax_pyptx kernels are opaque to autodiff. "
        f"Reverse mode (jax.grad, jax.vjp) needs a backward kernel paired with it: "
        f"jax_pyptx.runtime.autodiff.with_backward(fwd, bwd) or "
        f"jax_pyptx.configure(kernel, backward=bwd). Forward mode (jax.jvp, jax.jacfwd) needs "
        f"a JVP, which a backward kernel does not give: wrap the call in jax.custom_jvp and "
        f"compute the tangent yourself (with another kernel or jax.numpy)")


def vjp_pair(fwd_fn, bwd_fn, save_outputs: bool, label: str):
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
