"""CUDA lowering of ``pyptx_call``: the XLA typed-FFI custom call ``jax_pyptx_launch``.

The call carries everything a launch needs as attributes (``ffi_plan.plan_to_attrs``): the
PTX text and its sha256, the arch, grid / block / cluster, dynamic shared memory, the kernel
parameters in ``.entry`` order (buffers by operand index, scalar bytes, TMA slots) and the TMA
tensor-map specs. No process-local handle is involved, so ``jax.export`` with
``platforms=["cuda"]`` gives a self-contained artifact.

Operands of the custom call are the kernel's tensor inputs; results its outputs, plus one
uint8 workspace (last) when global-mode TMA descriptors are used. ``Layout.COL`` tensors get a
column-major layout for their last two dims.

Lowering also fills the persistent cubin cache (``toolchain.compile_ptx``, keyed by the PTX,
arch and ptxas version) and publishes the cubin as ``<cache>/<ptx_sha256>-<arch>.cubin``, the
name the C++ launcher looks up; a second process lowering the same kernel finds it and runs
no ptxas. Set ``JAX_PYPTX_PRECOMPILE=0`` to skip (the driver then JITs the PTX).
"""
from __future__ import annotations

import functools

import math
import os
import threading
from dataclasses import replace

import numpy as np

import jax
from jax.interpreters import mlir

from ..errors import SpecializationError, ToolchainError
from ..specs import Layout
from .ffi_plan import FFI_TARGET, LaunchPlan, ParamSlot, TENSORMAP_DTYPES, TmaSpec, plan_to_attrs
from .primitive import CallSpec, _cpu_lowering, pyptx_call_p

__all__ = ["build_plan", "plan_for", "EXPORT_DISABLED_CHECKS", "compile_log"]

_SWIZZLE_ENUM = {0: 0, 32: 1, 64: 2, 128: 3}

# (ptx_sha256, arch, cached) per cubin this process prepared; read by tests and benchmarks
compile_log: list = []
_published: set = set()
_lock = threading.Lock()


def _allow_export() -> list:
    """``jax.export`` refuses custom calls it does not know to be stable. The plan's attribute
    schema is versioned (``abi_version``), so the target is added to the allow-list; the
    explicit form is ``disabled_checks=EXPORT_DISABLED_CHECKS``."""
    checks = []
    try:
        from jax import export as _export

        checks = [_export.DisabledSafetyCheck.custom_call(FFI_TARGET)]
        from jax._src.export import _export as _impl

        stable = getattr(_impl, "_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE", None)
        if isinstance(stable, set):
            stable.add(FFI_TARGET)
    except Exception:  # pragma: no cover - a JAX without jax.export internals
        pass
    return checks


EXPORT_DISABLED_CHECKS = _allow_export()


# ----------------------------------------------------------------------------- the plan
def _memory_shape(shape: tuple, layout) -> tuple:
    if layout is Layout.COL and len(shape) >= 2:
        return shape[:-2] + (shape[-1], shape[-2])
    return tuple(shape)


def _tma_spec(spec: CallSpec, handle) -> TmaSpec:
    k = spec.kernel
    if handle.dtype.name not in TENSORMAP_DTYPES:
        raise SpecializationError(
            f"kernel {spec.label!r}: TMA descriptor {handle.param!r}: dtype {handle.dtype.name} "
            f"has no CUtensorMapDataType; allowed: {', '.join(sorted(TENSORMAP_DTYPES))}")
    tspec = (k.in_specs + k.out_specs)[_spec_position(spec, handle.index)]
    layout = tspec.layout
    mem = _memory_shape(tuple(handle.shape), layout)
    box = _memory_shape(tuple(handle.box), layout)
    estr = _memory_shape(tuple(handle.element_strides or (1,) * len(mem)), layout)
    es = handle.dtype.nbytes
    dims = tuple(reversed(mem))                       # innermost first
    strides, acc = [], es
    for d in dims[:-1]:
        acc *= d
        strides.append(acc)
    batch, stride = 1, 0
    if spec.batch and any(spec.mask(handle.index)):
        batch = math.prod(spec.batch)
        stride = math.prod(mem) * es
    return TmaSpec(operand=handle.index, dtype=handle.dtype.name, global_dims=dims,
                   global_strides=tuple(strides), box=tuple(reversed(box)),
                   element_strides=tuple(reversed(estr)), interleave=handle.interleave,
                   swizzle=_SWIZZLE_ENUM[handle.swizzle], l2_promotion=handle.l2_promotion,
                   oob_fill=handle.oob_fill, mode=handle.mode, batch=batch,
                   batch_stride=stride)


def _spec_position(spec: CallSpec, tensor_index: int) -> int:
    """Tensor index (inputs then outputs) -> position in in_specs + out_specs."""
    n_tin = len(spec.tensor_inputs)
    if tensor_index < n_tin:
        return spec.tensor_inputs[tensor_index]
    return spec.n_in + tensor_index - n_tin


def build_plan(spec: CallSpec, traced=None) -> LaunchPlan:
    """The LaunchPlan of one call. Operands: the tensor inputs, then the runtime scalars
    passed by device pointer (``traced.params`` kind ``scalar_ptr``), then the outputs."""
    t = traced or spec.traced()
    k = spec.kernel
    scalar_pos = {k._positional[i]: n for n, i in enumerate(spec.scalar_inputs)}
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
            raise SpecializationError(
                f"kernel {spec.label!r}: raw parameter {info.name!r} has no value when called "
                f"from JAX; raw_params are for hand launches")
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


# ----------------------------------------------------------------------------- cubin cache
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
            res = compile_ptx(traced.ptx, traced.arch)
        except ToolchainError as e:   # e.g. an older local ptxas: the driver may still JIT it
            import warnings

            warnings.warn(f"jax_pyptx: kernel {traced.name!r}: no cubin for the cache, the "
                          f"launcher will JIT the PTX: {e}", stacklevel=2)
            return None
        if not os.path.exists(path):
            from ..toolchain.cubin import _atomic_write

            _atomic_write(path, res.cubin)
        _published.add(key)
        compile_log.append((traced.sha256, traced.arch, res.cached))
        return res.cached


# ----------------------------------------------------------------------------- lowering
def _layout(shape: tuple, layout):
    """ffi_call layout (major-to-minor) of an operand/result: None (row major) or COL's
    (the last two dims swapped in memory)."""
    r = len(shape)
    if layout is not Layout.COL or r < 2:
        return None
    return tuple(range(r - 2)) + (r - 1, r - 2)


def _cuda_lowering(ctx, *args, spec: CallSpec):
    if spec.interpret:
        return _cpu_lowering(ctx, *args, spec=spec)
    # a process with a CUDA backend will execute the call: its handler must be registered
    # (a CPU-only jaxlib only lowers for CUDA, e.g. for jax.export, and needs nothing)
    return _ffi_lowering(ctx, *args, spec=spec, register=has_cuda_backend())


@functools.lru_cache(maxsize=None)
def has_cuda_backend() -> bool:
    """True when this process's jaxlib has CUDA devices."""
    try:
        return bool(jax.devices("cuda"))
    except RuntimeError:
        return False


def _ffi_lowering(ctx, *args, spec: CallSpec, register: bool = False):
    from .sharding import maybe_partitioned_lowering

    got = maybe_partitioned_lowering(ctx, args, spec)
    if got is not None:
        return got
    if register:
        from .ffi_bridge import ensure_registered

        ensure_registered()
    t = traced_for_cuda(spec)
    plan = build_plan(spec, t)
    ensure_cubin(t)
    attrs = plan_to_attrs(plan)
    k = spec.kernel
    out_avals = list(ctx.avals_out)
    results = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in out_avals]
    if plan.workspace_bytes:
        results.append(jax.ShapeDtypeStruct((plan.workspace_bytes,), np.uint8))
    scalar_ops = [i for i in spec.scalar_inputs if k._positional[i] in
                  {p.name for p in t.params if p.kind == "scalar_ptr"}]
    in_layouts = [_layout(ctx.avals_in[i].shape, k.in_specs[i].layout)
                  for i in spec.tensor_inputs] + [None] * len(scalar_ops)
    out_layouts = [_layout(a.shape, s.layout) for a, s in zip(out_avals, k.out_specs)]
    if plan.workspace_bytes:
        out_layouts.append(None)
    aliases = {spec.tensor_index(i): j for i, j in spec.aliases}
    if spec.debug:
        print(f"[jax_pyptx] lower {spec.label} for CUDA: grid={plan.grid} block={plan.block} "
              f"cluster={plan.cluster} smem={plan.smem_bytes} params={len(plan.params)} "
              f"tma={len(plan.tma)} workspace={plan.workspace_bytes} sha256={plan.ptx_sha256}")
        print(plan.ptx)
    call = jax.ffi.ffi_call(
        FFI_TARGET, results, input_output_aliases=aliases or None,
        input_layouts=in_layouts if any(x is not None for x in in_layouts) else None,
        output_layouts=out_layouts if any(x is not None for x in out_layouts) else None)
    n_out = len(out_avals)
    operands = tuple(spec.tensor_inputs) + tuple(scalar_ops)

    def run(*xs):
        res = call(*(xs[i] for i in operands), **attrs)
        return list(res[:n_out])

    return mlir.lower_fun(run, multiple_results=True)(ctx, *args)


mlir.register_lowering(pyptx_call_p, _cuda_lowering, platform="cuda")
