"""The FFI lowering of ``pyptx_call``: the XLA typed-FFI custom call ``jax_pyptx_launch``.

The call carries everything a launch needs as attributes (``ffi_plan.plan_to_attrs`` of the
call's ``launch_plan.build_plan``): the PTX text and its sha256, the arch, grid / block /
cluster, dynamic shared memory, the kernel parameters in ``.entry`` order (buffers by operand
index, scalar bytes, TMA slots) and the TMA tensor-map specs. No process-local handle is
involved, so ``jax.export`` with ``platforms=["cuda"]`` gives a self-contained artifact.

Operands of the custom call are the kernel's tensor inputs (then the runtime scalars passed
by device pointer); results its outputs, plus one uint8 workspace (last) when global-mode TMA
descriptors are used. ``Layout.COL`` tensors get a column-major layout for their last two
dims. Which lowering a call gets is decided in ``lowering``.
"""
from __future__ import annotations

import functools

import numpy as np

import jax
from jax.interpreters import mlir

from ..specs import Layout
from .callspec import CallSpec
from .ffi_plan import FFI_TARGET, plan_to_attrs
from .launch_plan import (build_plan, compile_log, ensure_cubin, plan_for,
                          traced_for_cuda)

__all__ = ["ffi_lowering", "has_cuda_backend", "build_plan", "plan_for", "traced_for_cuda",
           "ensure_cubin", "EXPORT_DISABLED_CHECKS", "compile_log"]


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


@functools.lru_cache(maxsize=None)
def has_cuda_backend() -> bool:
    """True when this process's jaxlib has CUDA devices."""
    try:
        return bool(jax.devices("cuda"))
    except RuntimeError:
        return False


def _layout(shape: tuple, layout):
    """ffi_call layout (major-to-minor) of an operand/result: None (row major) or COL's
    (the last two dims swapped in memory)."""
    r = len(shape)
    if layout is not Layout.COL or r < 2:
        return None
    return tuple(range(r - 2)) + (r - 1, r - 2)


def ffi_lowering(ctx, args, spec: CallSpec, register: bool = False):
    """The ``jax_pyptx_launch`` custom call of ``spec``. ``register``: register the FFI
    handler first (a process that will execute the call)."""
    if register:
        from .ffi_bridge import ensure_registered

        ensure_registered()
    t = traced_for_cuda(spec)
    plan = build_plan(spec, t)
    ensure_cubin(t)
    attrs = plan_to_attrs(plan)
    k = spec.kernel
    names = spec.param_names
    out_avals = list(ctx.avals_out)
    results = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in out_avals]
    if plan.workspace_bytes:
        results.append(jax.ShapeDtypeStruct((plan.workspace_bytes,), np.uint8))
    by_ptr = {p.name for p in t.params if p.kind == "scalar_ptr"}
    scalar_ops = [i for i in spec.scalar_inputs if names[i] in by_ptr]
    in_layouts = [_layout(ctx.avals_in[i].shape, k.in_specs[i].layout)
                  for i in spec.tensor_inputs] + [None] * len(scalar_ops)
    out_layouts = [_layout(a.shape, s.layout) for a, s in zip(out_avals, k.out_specs)]
    if plan.workspace_bytes:
        out_layouts.append(None)
    aliases = {spec.tensor_index(i): j for i, j in spec.options.input_output_aliases}
    if spec.options.debug:
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
