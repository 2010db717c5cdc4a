"""The one lowering of ``pyptx_call``, per platform (``primitive`` registers it for "cuda",
"cpu" and every other platform with the platform bound).

=================================  ==========================================================
call                               lowering
=================================  ==========================================================
CUDA                               the ``jax_pyptx_launch`` FFI custom call (``lowering_cuda``)
CPU                                a host callback into the interpreter (``lowering_host``)
CPU, ``interpret=False``           the FFI custom call on the C++ CPU handler (its recording
                                   driver table: what would be launched, nothing computed)
any platform, ``interpret=True``   the interpreter callback
anything else                      ``NotSupportedError`` naming the ways that work
=================================  ==========================================================

Either way a call with independent dims (or a vmap batch) on more than one device is
partitioned first (``sharding``); each shard lowers through here again.
"""
from __future__ import annotations

from ..errors import NotSupportedError
from .callspec import CallSpec
from . import lowering_cuda
from .lowering_host import interpreter_lowering
from .sharding import maybe_partitioned_lowering

__all__ = ["lower"]


def lower(prim, platform, ctx, *args, spec: CallSpec):
    """Lower one ``prim`` call for ``platform`` ("cuda", "cpu" or None: any other)."""
    if spec.options.interpret:
        how = "host"
    elif platform == "cuda":
        how = "ffi"
    elif platform == "cpu":
        how = "ffi" if spec.options.interpret is False else "host"
    else:
        platforms = ", ".join(ctx.module_context.platforms)
        raise NotSupportedError(
            f"kernel {spec.label!r}: no lowering for platform {platforms}; jax_pyptx launches "
            f"on CUDA, runs on the CPU interpreter, or pass interpret=True to run the "
            f"interpreter on any platform")
    got = maybe_partitioned_lowering(prim, ctx, args, spec, host=how == "host")
    if got is not None:
        return got
    if how == "host":
        return interpreter_lowering(ctx, args, spec)
    # a process with a CUDA backend will execute a CUDA call: its handler must be registered
    # (a CPU-only jaxlib only lowers for CUDA, e.g. for jax.export, and needs nothing); the
    # CPU handler always runs
    register = platform == "cpu" or lowering_cuda.has_cuda_backend()
    return lowering_cuda.ffi_lowering(ctx, args, spec, register=register)
