"""The launch plan of a call for the C++ launcher (``ffi_plan.LaunchPlan``), and the cubin
cache it points at. No JAX here: the JAX CUDA lowering puts the plan into the custom call's
attributes, the PyTorch CUDA impl hands it to the launcher directly.

Lowering (or the first PyTorch launch) fills the persistent cubin cache
(``toolchain.compile_ptx``, keyed by the PTX, arch and ptxas version) and publishes the cubin
as ``<cache>/<ptx_sha256>-<arch>.cubin``, the name the C++ launcher looks up; a second
process launching the same kernel finds it and runs no ptxas. Set
``JAX_PYPTX_PRECOMPILE=0`` to skip (the driver then JITs the PTX).
"""
from __future__ import annotations

import os
import threading
from dataclasses import replace

from ..errors import SpecializationError, ToolchainError
from ..specialize.dims import check_cluster_grid
from ..specialize.tensor_maps import tma_spec as _tma_spec
from .callspec import CallSpec
from .ffi_plan import LaunchPlan, ParamSlot

__all__ = ["build_plan", "plan_for", "traced_for_cuda", "ensure_cubin", "compile_log"]

# (ptx_sha256, arch, cached) per cubin this process prepared; read by tests and benchmarks
compile_log: list = []
_published: set = set()
_lock = threading.Lock()


def build_plan(spec: CallSpec, traced=None) -> LaunchPlan:
    """The LaunchPlan of one call. Operands: the tensor inputs, then the runtime scalars
    passed by device pointer (``traced.params`` kind ``scalar_ptr``), then the outputs."""
    t = traced or spec.traced()
    names = spec.param_names
    scalar_pos = {names[i]: n for n, i in enumerate(spec.scalar_inputs)}
    by_ptr = [p.name for p in t.params if p.kind == "scalar_ptr"]
    n_tin = len(spec.tensor_inputs)

    def operand(tensor_index: int) -> int:
        return tensor_index if tensor_index < n_tin else tensor_index + len(by_ptr)

    params, tma = [], []
    for info in t.params:
        if info.kind == "tensor":
            params.append(ParamSlot.buffer(operand(info.index)))
        elif info.kind == "scalar_ptr":
            params.append(ParamSlot.buffer(n_tin + by_ptr.index(info.name)))
        elif info.kind == "scalar":
            n = scalar_pos[info.name]
            value = spec.static_scalars[n] if n < len(spec.static_scalars) else None
            if value is None:      # build_plan(spec) with a traced scalar and no pointer trace
                raise SpecializationError(
                    f"kernel {spec.label!r}: runtime scalar {info.name} ({info.type.name}) is "
                    f"a traced value; it is passed by device pointer "
                    f"(spec.traced(scalar_ptrs=...))")
            params.append(ParamSlot.scalar(value, info.type.np_dtype))
        elif info.kind == "tma":
            handle = next(h for h in t.tma if h.param == info.name)
            ts = _tma_spec(spec, handle)
            tma.append(replace(ts, operand=operand(handle.index)))
            params.append(ParamSlot.tma_param(len(tma) - 1))
        else:
            raw = dict(spec.raw)
            if info.name not in raw:
                raise SpecializationError(
                    f"kernel {spec.label!r}: raw parameter {info.name!r} has no value; pass "
                    f"it by keyword to the call ({info.name}=...)")
            v = raw[info.name]
            params.append(ParamSlot.scalar(v, getattr(v, "dtype", None)))
    check_cluster_grid(spec.label, spec.launch_grid(t), t.cluster)
    return LaunchPlan(kernel_name=t.name, ptx=t.ptx, ptx_sha256=t.sha256, arch=t.arch,
                      grid=spec.launch_grid(t), block=t.block, cluster=t.cluster,
                      smem_bytes=t.dynamic_smem, params=tuple(params), tma=tuple(tma))


def traced_for_cuda(spec: CallSpec):
    """The trace to launch on CUDA: runtime scalars known at bind time go by value (launch
    attribute bytes), traced ones by device pointer (one more buffer operand each)."""
    by_ptr = spec.traced_scalars()
    if by_ptr:
        base = spec.unbatched().traced()
        raw = [n for n in by_ptr if n in base.raw_scalar_params]
        if raw:
            raise SpecializationError(
                f"kernel {spec.label!r}: runtime scalar {raw[0]} is a traced value and the "
                f"kernel reads its parameter directly (ptx.param), so it cannot be passed by "
                f"pointer; pass a Python or NumPy number")
    return spec.traced(scalar_ptrs=by_ptr)


def plan_for(spec: CallSpec) -> LaunchPlan:
    """The plan the CUDA lowering emits for ``spec``."""
    return build_plan(spec, traced_for_cuda(spec))


def ensure_cubin(traced) -> bool | None:
    """Compile (disk-cached) and publish ``<cache>/<sha256>-<arch>.cubin``.

    Returns whether ptxas was skipped (cache hit), or None when no ptxas is available or
    ``JAX_PYPTX_PRECOMPILE=0``.
    """
    if os.environ.get("JAX_PYPTX_PRECOMPILE", "1") in ("0", "false", "no"):
        return None
    key = (traced.sha256, traced.arch)
    with _lock:
        from ..toolchain import cache_dir, compile_ptx
        from ..toolchain.find import find_tool

        path = os.path.join(cache_dir(), f"{traced.sha256}-{traced.arch}.cubin")
        if key in _published and os.path.exists(path):
            return True
        try:
            find_tool("ptxas")
        except ToolchainError:
            return None
        try:
            res = compile_ptx(traced.ptx, traced.arch, module=traced.module)
        except ToolchainError as e:   # e.g. an older local ptxas: the driver may still JIT it
            import warnings

            warnings.warn(f"jax_pyptx: kernel {traced.name!r}: no cubin for the cache, the "
                          f"launcher will JIT the PTX: {e}", stacklevel=2)
            return None
        if not os.path.exists(path):
            from ..toolchain.cache import atomic_write

            atomic_write(path, res.cubin)
        _published.add(key)
        compile_log.append((traced.sha256, traced.arch, res.cached))
        return res.cached
