"""Launching ``compile_ptx_to_cubin`` handles on PyTorch tensors (``pyptx.torch_support``'s
``call_kernel_via_torch`` / ``call_kernel_via_torch_compile``): the CPU interpreter for CPU
tensors, the C++ launcher for CUDA tensors, and one ``torch.library`` op per launch
description for ``torch.compile``."""
from __future__ import annotations

import threading

import torch

from ..errors import SpecializationError

__all__ = ["launch_handle", "handle_op_name", "call_handle_op"]


def _torch_out(shape, t, device):
    from ..runtime.torch_op import torch_dtype

    dt = torch_dtype(t)
    if dt is None:
        raise SpecializationError(f"output dtype {t.name} has no torch dtype")
    return torch.empty(tuple(shape), dtype=dt, device=device)


def launch_handle(inputs, cubin_handle, out_specs, out_shape_env, grid, block, cluster,
                  smem_bytes, interpret=None, stream=None) -> list:
    """The outputs (a list of tensors) of one launch of ``cubin_handle`` on ``inputs``."""
    from .cubin_registry import get_cubin_registry, resolve_outputs, run_on_host
    from ..runtime.torch_op import _from_numpy, _numpy_view, torch_dtype

    rec = get_cubin_registry().get(cubin_handle)
    outs = resolve_outputs(out_specs, out_shape_env)
    if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise SpecializationError(f"call_kernel_via_torch: inputs must be tensors, got "
                                  f"{[type(t).__name__ for t in inputs]}")
    device = inputs[0].device
    if device.type == "cpu" and interpret is not False:
        arrays = [_numpy_view(t.contiguous(), _numpy_dtype(t.dtype)) for t in inputs]
        got = run_on_host(rec, arrays, outs, grid, block, cluster, smem_bytes)
        return [_from_numpy(a, torch_dtype(t)) for a, (_, t) in zip(got, outs)]
    from ..runtime import ffi_bridge
    from ..runtime.callspec import CallSpec
    from ..runtime.launch_plan import build_plan
    from .cubin_registry import as_ptx_type
    from .record_kernel import record_kernel

    bufs = [t.contiguous() for t in inputs]
    res = [_torch_out(shape, t, device) for shape, t in outs]
    k = record_kernel(rec, [(tuple(t.shape), as_ptx_type(t.dtype)) for t in bufs], outs, grid,
                      block, cluster, smem_bytes)
    spec = CallSpec(kernel=k, template=(), env=(), raw=tuple(k.raw_values().items()))
    plan = build_plan(spec, k.trace_for())        # the plan the JAX CUDA lowering emits
    allb = bufs + res
    if plan.workspace_bytes:
        allb.append(torch.empty(plan.workspace_bytes, dtype=torch.uint8, device=device))
    cuda = device.type == "cuda"
    if stream is None:
        stream = torch.cuda.current_stream(device).cuda_stream if cuda else 0
    ffi_bridge.torch_launch(plan, [b.data_ptr() for b in allb], stream,
                            sizes=[b.numel() * b.element_size() for b in allb])
    return res


def _numpy_dtype(dtype):
    """The NumPy dtype of a torch dtype (bf16 / fp8 through ml_dtypes)."""
    from ..types import ALL_TYPES
    from ..runtime.torch_op import torch_dtype

    for t in ALL_TYPES:
        if t.np_dtype is not None and torch_dtype(t) == dtype:
            return t.np_dtype
    raise SpecializationError(f"torch dtype {dtype} has no PTX type")


def handle_op_name(key) -> str:
    """The ``jax_pyptx::ptx_<handle>_<n>`` op of one launch description ``(handle,
    out_specs, out_shape_env items, grid, block, cluster, smem)``, registered once."""
    with _handle_lock:
        got = _handle_ops.get(key)
        if got is not None:
            return got
        handle, out_keys, env_items, grid, block, cluster, smem = key
        out_specs = tuple(_tile_of(k) for k in out_keys)
        name = f"ptx_{handle}_{len(_handle_ops)}"
        kw = dict(cubin_handle=handle, out_specs=out_specs, out_shape_env=dict(env_items),
                  grid=grid, block=block, cluster=cluster, smem_bytes=smem)

        def impl(inputs):
            return launch_handle(list(inputs), **kw)

        def fake(inputs):
            from .cubin_registry import resolve_outputs

            return [_torch_out(shape, t, inputs[0].device)
                    for shape, t in resolve_outputs(out_specs, dict(env_items))]

        op = torch.library.custom_op(f"jax_pyptx::{name}", impl, mutates_args=(),
                                     schema="(Tensor[] inputs) -> Tensor[]")
        op.register_fake(fake)
        _handle_ops[key] = name
        return name


_handle_ops: dict = {}
_handle_lock = threading.Lock()


def _tile_key(t) -> tuple:
    """A Tile as plain constants (what ``torch.compile`` can pass to a constant lookup)."""
    from ..specs import Tile

    if not isinstance(t, Tile):
        raise SpecializationError(f"out_specs entries are Tile(...), got {t!r}")
    return (tuple(t.dims), t.dtype.name, t.layout.value)


def _tile_of(key):
    from ..specs import Layout, Tile
    from ..types import by_name

    dims, dtype, layout = key
    return Tile(*dims, by_name(dtype), Layout(layout))


@torch._dynamo.assume_constant_result
def _constant_op_name(key) -> str:
    return handle_op_name(key)


def call_handle_op(inputs, cubin_handle, out_specs, out_shape_env, grid, block, cluster,
                   smem_bytes):
    """The launch through its op: one tensor for a single output, else a tuple."""
    key = (cubin_handle, tuple(_tile_key(t) for t in out_specs),
           tuple(sorted(dict(out_shape_env).items())), tuple(grid), tuple(block),
           tuple(cluster), int(smem_bytes))
    res = getattr(torch.ops.jax_pyptx, _constant_op_name(key)).default(list(inputs))
    return res[0] if len(res) == 1 else tuple(res)
