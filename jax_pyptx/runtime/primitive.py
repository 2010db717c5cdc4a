"""The JAX primitive ``pyptx_call``: one kernel launch as a first-class JAX operation.

Operands are the kernel's inputs in ``in_specs`` order (tensors, and runtime scalars as 0-d
arrays); results are its outputs in ``out_specs`` order. Everything static rides in one
hashable :class:`~jax_pyptx.runtime.callspec.CallSpec` parameter.

This module declares the primitive and registers every rule in one block at its end (the
shape of ``jax/_src/lax/fft.py``); the rules are plain functions in their own modules that
receive the primitive:

* abstract eval (here): output shapes and dtypes from the ``Tile`` specs and the shape
  variables; operands checked for rank, shape and dtype (``callspec.check_operands``); in
  explicit-sharding mode the outputs' shardings from the call's partition plan
  (``sharding.out_shardings``);
* lowering (``lowering.lower``, one dispatcher per platform): the FFI custom call on CUDA,
  the interpreter callback on CPU (or anywhere with ``interpret=True``), partitioned first
  under sharded ``jit``;
* batching (``batching.batch_rule``): the batch on the grid, or a loop;
* autodiff (``ad.no_jvp``): none; kernels pair with a backward through ``autodiff``.
"""
from __future__ import annotations

from functools import partial

import jax
from jax.extend.core import Primitive
from jax.interpreters import ad as jax_ad
from jax.interpreters import batching as jax_batching
from jax.interpreters import mlir

from . import ad, batching, lowering, sharding
from .callspec import CallSpec, check_operands
from .host_call import host_launch, interpreter_stats
from .lowering_host import original_error

__all__ = ["CallSpec", "pyptx_call_p", "bind", "host_launch", "interpreter_stats"]


def bind(spec: CallSpec, *operands):
    """``pyptx_call_p.bind(*operands, spec=spec)``: the outputs (a list)."""
    return pyptx_call_p.bind(*operands, spec=spec)


def _abstract_eval(*avals, spec: CallSpec):
    check_operands(spec, avals)
    shardings = sharding.out_shardings(spec, avals)
    if shardings is None:
        return [jax.core.ShapedArray(shape, dtype) for shape, dtype in spec.out_avals()]
    return [jax.core.ShapedArray(shape, dtype, sharding=sh)
            for (shape, dtype), sh in zip(spec.out_avals(), shardings)]


def _impl(prim, *args, spec: CallSpec):
    try:
        try:
            from jax._src import dispatch
        except ImportError:  # pragma: no cover - an older/newer JAX layout
            return jax.jit(lambda *xs: prim.bind(*xs, spec=spec))(*args)
        return dispatch.apply_primitive(prim, *args, spec=spec)
    except Exception as e:      # a Ctrl-C in the callback comes back as KeyboardInterrupt
        # an eager call raises the interpreter's own error (type and traceback), not the
        # JaxRuntimeError its host callback became
        orig = original_error(e)
        if orig is None:
            raise
        raise orig from None


# ----------------------------------------------------------------------------- registration
pyptx_call_p = Primitive("pyptx_call")
pyptx_call_p.multiple_results = True
pyptx_call_p.def_abstract_eval(_abstract_eval)
pyptx_call_p.def_impl(partial(_impl, pyptx_call_p))
mlir.register_lowering(pyptx_call_p, partial(lowering.lower, pyptx_call_p, "cuda"),
                       platform="cuda")
mlir.register_lowering(pyptx_call_p, partial(lowering.lower, pyptx_call_p, "cpu"),
                       platform="cpu")
mlir.register_lowering(pyptx_call_p, partial(lowering.lower, pyptx_call_p, None))
jax_batching.primitive_batchers[pyptx_call_p] = partial(batching.batch_rule, pyptx_call_p)
jax_ad.primitive_jvps[pyptx_call_p] = partial(ad.no_jvp, pyptx_call_p)
sharding.require_devices(pyptx_call_p)
