"""The interpreter lowering of ``pyptx_call``: a host callback into the CPU interpreter
(``host.host_launch``), on the CPU or on any platform with ``interpret=True``."""
from __future__ import annotations

from functools import partial

import numpy as np

import jax
from jax.interpreters import mlir

from .callspec import CallSpec
from .host import host_launch

__all__ = ["interpreter_lowering"]


def interpreter_lowering(ctx, args, spec: CallSpec):
    """Lower to a host callback into the interpreter."""
    if spec.host_callback is not None:
        return _prebound_callback(ctx, args, spec.host_callback)
    out_types = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ctx.avals_out]

    def run(*xs):
        return list(jax.pure_callback(partial(host_launch, spec), out_types, *xs))

    return mlir.lower_fun(run, multiple_results=True)(ctx, *args)


def _prebound_callback(ctx, args, index: int):
    """The host-callback custom call for a callback the *enclosing* module registered.

    Per-shard modules built by custom_partitioning's partition step are compiled into the
    outer executable, which only carries the outer module's host callbacks; a callback
    registered while lowering the per-shard module would be lost. ``sharding`` registers the
    callback on the outer module and the per-shard call refers to it by index.
    """
    from jax import ffi

    platform = ctx.module_context.platforms[0]
    device = "gpu" if platform in ("cuda", "rocm") else "cpu"
    rule = ffi.ffi_lowering(f"xla_ffi_python_{device}_callback", has_side_effect=False)
    return rule(ctx, *args, index=np.uint64(index))
