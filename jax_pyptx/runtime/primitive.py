"""The JAX primitive ``pyptx_call``: one kernel launch as a first-class JAX operation.

Operands are the kernel's inputs in ``in_specs`` order (tensors, and runtime scalars as 0-d
arrays); results are its outputs in ``out_specs`` order. Everything static rides in one
hashable :class:`CallSpec` parameter: the kernel, its template parameters, the shape
variables bound from the (per-item) shapes, the batch the call was vmapped over, aliasing and
the Pallas-style options.

* abstract eval: output shapes and dtypes from the ``Tile`` specs and the shape variables;
  inputs are checked for rank, shape and dtype (the message names the parameter, its spec
  and what was passed);
* lowering on CPU (and anywhere with ``interpret=True``): a host callback into the CPU
  interpreter (:func:`host_launch`);
* lowering on CUDA: the typed-FFI custom call ``jax_pyptx_launch`` (``lowering_cuda``);
* batching (``batching``), partitioning under ``jit`` (``sharding``), autodiff
  (``autodiff``) register themselves at the bottom of this module.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

import jax
from jax.extend.core import Primitive
from jax.interpreters import mlir

from ..errors import SpecializationError
from ..specs import Layout, Tile
from ..types import PtxType

__all__ = ["CallSpec", "pyptx_call_p", "bind", "host_launch"]


# ----------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class CallSpec:
    """Static description of one call (the primitive's only parameter; hashable)."""

    kernel: object                  # jax_pyptx.Kernel (hashed by identity)
    template: tuple                 # sorted (name, value) template parameters
    env: tuple                      # (symbol, value) shape variables, per batch item
    batch: tuple = ()               # leading batch sizes, outermost first (vmap on the grid)
    masks: tuple = ()               # per tensor (inputs then outputs): bool per batch level
    grid: object = None             # launch-grid override (tuple or callable of shape vars)
    aliases: tuple = ()             # ((input position, output index), ...)
    static_scalars: tuple = ()      # per runtime scalar input: its value when known, else None
    interpret: object = None        # None: by platform; True: interpreter everywhere;
                                    # False on CPU: the C++ launcher (recording table)
    name: str | None = None
    debug: bool = False
    independent: tuple = ()         # shape variables the kernel treats independently
    covers: tuple = ()              # ((symbol, grid axis, elements per block), ...)
    sanitize: bool = True           # the interpreter's sanitizer
    host_callback: object = None    # (internal) index of a host callback registered by the
                                    # enclosing module (partitioned interpreter calls)

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in self.env] + [f"{k}={v!r}" for k, v in self.template]
        if self.batch:
            parts.append(f"batch={self.batch}")
            parts.append("masks=" + ",".join("".join("1" if b else "0" for b in m)
                                             for m in self.masks))
        for f in ("grid", "aliases", "interpret", "independent", "name"):
            v = getattr(self, f)
            if v not in (None, ()):
                parts.append(f"{f}={v!r}")
        if any(v is not None for v in self.static_scalars):
            parts.append(f"scalars={self.static_scalars}")
        if self.host_callback is not None:
            parts.append(f"host_callback={self.host_callback}")
        return f"{self.kernel.name}({', '.join(parts)})"

    # -- names
    @property
    def label(self) -> str:
        return self.name or self.kernel.name

    @property
    def env_dict(self) -> dict:
        return dict(self.env)

    # -- kernel structure
    @property
    def n_in(self) -> int:
        return len(self.kernel.in_specs)

    @property
    def n_out(self) -> int:
        return len(self.kernel.out_specs)

    def is_scalar(self, i: int) -> bool:
        return isinstance(self.kernel.in_specs[i], PtxType)

    @property
    def tensor_inputs(self) -> tuple:
        """Input positions that are tensors (in order)."""
        return tuple(i for i in range(self.n_in) if not self.is_scalar(i))

    @property
    def scalar_inputs(self) -> tuple:
        return tuple(i for i in range(self.n_in) if self.is_scalar(i))

    def tensor_index(self, i: int) -> int:
        """Input position -> index among the kernel's tensors (inputs then outputs)."""
        return self.tensor_inputs.index(i)

    def mask(self, t: int) -> tuple:
        """Batch mask of tensor ``t`` (inputs then outputs)."""
        if not self.batch:
            return ()
        return self.masks[t]

    def batch_dims(self, t: int) -> tuple:
        return tuple(s for s, m in zip(self.batch, self.mask(t)) if m)

    # -- shapes
    def item_shape(self, spec: Tile) -> tuple:
        return spec.resolve(self.env_dict)

    def in_avals(self) -> list:
        """Expected (shape, dtype) per operand."""
        out = []
        for i, s in enumerate(self.kernel.in_specs):
            if isinstance(s, PtxType):
                out.append(((), s.np_dtype))
            else:
                t = self.tensor_index(i)
                out.append((self.batch_dims(t) + self.item_shape(s), s.dtype.np_dtype))
        return out

    def out_avals(self) -> list:
        n = len(self.tensor_inputs)
        return [(self.batch_dims(n + j) + self.item_shape(s), s.dtype.np_dtype)
                for j, s in enumerate(self.kernel.out_specs)]

    # -- tracing
    def trace_kw(self) -> dict:
        return {**dict(self.template), **self.env_dict}

    def traced(self, scalar_ptrs=()):
        """The Traced specialization to launch (batched on the grid when ``batch``;
        ``scalar_ptrs``: runtime scalars passed by device pointer, for CUDA)."""
        if self.batch or scalar_ptrs:
            return self.kernel._trace_batched((self.batch, self.masks), scalar_ptrs,
                                              **self.trace_kw())
        return self.kernel.trace(**self.trace_kw())

    def traced_scalars(self) -> tuple:
        """Names of the runtime scalars whose value is not known at bind time."""
        k = self.kernel
        return tuple(k._positional[i] for n, i in enumerate(self.scalar_inputs)
                     if n >= len(self.static_scalars) or self.static_scalars[n] is None)

    def unbatched(self) -> "CallSpec":
        return replace(self, batch=(), masks=())

    def item_grid(self, traced=None) -> tuple:
        """The grid of one batch item (the kernel's, or the ``grid=`` override)."""
        if self.grid is None:
            return (traced or self.unbatched().traced()).grid
        from ..dsl.trace_kernel import _grid

        class _K:  # the grid resolver reads .grid and .name only
            grid, name = self.grid, self.label
        return _grid(_K, self.env_dict, dict(self.template))

    def launch_grid(self, traced=None) -> tuple:
        g = self.item_grid(None if self.batch else traced)
        if self.batch:
            return (g[0], g[1], g[2] * math.prod(self.batch))
        return g


# ----------------------------------------------------------------------------- checks
def check_operands(spec: CallSpec, avals) -> None:
    """Rank, shape and dtype of each operand against the specs (errors name the parameter)."""
    k = spec.kernel
    names = k._positional
    if len(avals) != spec.n_in:
        raise SpecializationError(
            f"kernel {spec.label!r} takes {spec.n_in} inputs ({', '.join(names[:spec.n_in])});"
            f" got {len(avals)}")
    for i, ((shape, dtype), a) in enumerate(zip(spec.in_avals(), avals)):
        s = k.in_specs[i]
        got_shape, got_dtype = tuple(a.shape), np.dtype(a.dtype)
        what = f"{_dtype_name(got_dtype)}{list(got_shape)}"
        if isinstance(s, PtxType):
            if got_shape != ():
                raise SpecializationError(
                    f"kernel {spec.label!r}: parameter {names[i]} is a runtime scalar "
                    f"({s.name}); got an array {what}")
            continue
        if len(got_shape) != len(shape):
            raise SpecializationError(
                f"kernel {spec.label!r}: parameter {names[i]} expects rank {len(shape)} "
                f"({_spec_text(spec, i)}), got {what}")
        if got_dtype != np.dtype(dtype):
            raise SpecializationError(
                f"kernel {spec.label!r}: parameter {names[i]} expects dtype {s.dtype.name} "
                f"({_spec_text(spec, i)}), got {what}")
        if got_shape != tuple(shape):
            raise SpecializationError(
                f"kernel {spec.label!r}: parameter {names[i]} expects shape {list(shape)} "
                f"({_spec_text(spec, i)}), got {what}")


def _spec_text(spec: CallSpec, i: int) -> str:
    s = spec.kernel.in_specs[i]
    t = spec.tensor_index(i)
    bd = spec.batch_dims(t)
    return (f"batch {list(bd)} + " if bd else "") + repr(s)


def _dtype_name(dt) -> str:
    return {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
            "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64", "int8": "s8",
            "uint8": "u8", "int16": "s16", "uint16": "u16", "bool": "pred"}.get(str(dt), str(dt))


# ----------------------------------------------------------------------------- primitive
pyptx_call_p = Primitive("pyptx_call")
pyptx_call_p.multiple_results = True


def bind(spec: CallSpec, *operands):
    return pyptx_call_p.bind(*operands, spec=spec)


def _abstract_eval(*avals, spec: CallSpec):
    check_operands(spec, avals)
    shardings = _out_shardings(spec, avals)
    if shardings is None:
        return [jax.core.ShapedArray(shape, dtype) for shape, dtype in spec.out_avals()]
    return [jax.core.ShapedArray(shape, dtype, sharding=sh)
            for (shape, dtype), sh in zip(spec.out_avals(), shardings)]


def _out_shardings(spec: CallSpec, avals):
    """Explicit-sharding mode: outputs are sharded like the inputs along independent dims
    (vmap batch dims and declared independent shape variables), replicated elsewhere."""
    mesh, specs = None, []
    for a in avals:
        sh = getattr(a, "sharding", None)
        m = getattr(sh, "mesh", None)
        if m is None or getattr(m, "empty", True) or not hasattr(sh, "spec"):
            specs.append(None)
            continue
        mesh = mesh or m
        specs.append(tuple(sh.spec))
    if mesh is None:
        return None
    from jax.sharding import NamedSharding, PartitionSpec

    from .sharding import factors

    per_tensor, indep = factors(spec)
    chosen, used = {}, set()
    for t, i in enumerate(spec.tensor_inputs):
        ps = specs[i]
        if ps is None:
            continue
        for f, entry in zip(per_tensor[t], ps):
            if entry is None or f not in indep or f in chosen:
                continue
            axes = (entry,) if isinstance(entry, str) else tuple(entry)
            if any(ax in used for ax in axes):
                continue
            chosen[f] = entry
            used.update(axes)
    n_tin = len(spec.tensor_inputs)
    return [NamedSharding(mesh, PartitionSpec(*[chosen.get(f) for f in per_tensor[n_tin + j]]))
            for j in range(spec.n_out)]


def _impl(*args, spec: CallSpec):
    try:
        from jax._src import dispatch

        return dispatch.apply_primitive(pyptx_call_p, *args, spec=spec)
    except ImportError:  # pragma: no cover - an older/newer JAX layout
        return jax.jit(partial(bind, spec))(*args)


pyptx_call_p.def_abstract_eval(_abstract_eval)
pyptx_call_p.def_impl(_impl)


# ----------------------------------------------------------------------------- interpreter
# launches run and seconds spent inside the interpreter (benchmarks subtract it)
interpreter_stats = {"launches": 0, "seconds": 0.0}
_stats_lock = threading.Lock()


class _HostPlan:
    """What ``host_launch`` needs for one spec, computed once."""

    __slots__ = ("traced", "grid", "inputs", "outputs", "params", "out_specs")

    def __init__(self, spec: CallSpec):
        k = spec.kernel
        t = self.traced = spec.traced()
        self.grid = spec.launch_grid(t)
        alias = {o: spec.tensor_index(i) for i, o in spec.aliases}
        self.inputs = [(i, k.in_specs[i]) for i in spec.tensor_inputs]
        self.outputs = [(shape, dtype, s, alias.get(j))
                        for j, ((shape, dtype), s) in enumerate(zip(spec.out_avals(),
                                                                    k.out_specs))]
        scalar_at = {k._positional[i]: i for i in spec.scalar_inputs}
        self.params = [(info.kind, info.index if info.kind == "tensor" else
                        scalar_at.get(info.name), info) for info in t.params]
        self.out_specs = k.out_specs


_host_plans: dict = {}


def host_launch(spec: CallSpec, *arrays):
    """Run the call on the CPU interpreter: NumPy in, NumPy outputs out."""
    from ..interpret import launch

    plan = _host_plans.get(spec)
    if plan is None:
        plan = _host_plans[spec] = _HostPlan(spec)
    t = plan.traced
    bufs = [_to_memory(np.array(arrays[i], copy=True), s) for i, s in plan.inputs]
    outs = []
    for shape, dtype, s, src in plan.outputs:
        # an aliased output is the input's buffer, as on the GPU
        buf = bufs[src] if src is not None else _to_memory(np.zeros(shape, dtype=dtype), s)
        bufs.append(buf)
        outs.append(buf)
    args = []
    for kind, where, info in plan.params:
        if kind == "tensor":
            args.append(bufs[where])
        elif kind == "scalar":
            args.append(np.asarray(arrays[where], dtype=info.type.np_dtype)[()])
        else:
            args.append(_interp_special_param(spec, t, info, bufs))
    if spec.debug:
        print(f"[jax_pyptx] interpret {spec.label}: grid={plan.grid} block={t.block} "
              f"cluster={t.cluster} smem={t.dynamic_smem} batch={spec.batch}")
    t0 = time.perf_counter()
    launch(t.module, t.name, args, grid=plan.grid, block=t.block, cluster=t.cluster,
           smem=t.dynamic_smem, sanitize=spec.sanitize)
    dt = time.perf_counter() - t0
    with _stats_lock:
        interpreter_stats["launches"] += 1
        interpreter_stats["seconds"] += dt
    return tuple(_from_memory(o, s) for o, s in zip(outs, plan.out_specs))


def _to_memory(a: np.ndarray, spec: Tile) -> np.ndarray:
    """The buffer the kernel sees: C order, or the last two dims swapped for Layout.COL."""
    if spec.layout is Layout.COL and a.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(a, -1, -2))
    return np.ascontiguousarray(a)


def _from_memory(buf: np.ndarray, spec: Tile) -> np.ndarray:
    if spec.layout is Layout.COL and buf.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(buf, -1, -2))
    return buf


def _interp_special_param(spec: CallSpec, t, info, bufs):
    """TMA descriptor slots and raw params for the interpreter."""
    if info.kind == "tma":
        handle = next(h for h in t.tma if h.param == info.name)
        try:   # the seam for an interpreter-side tensor-map model, when there is one
            from ..interpret import tma_descriptor
        except ImportError:
            raise SpecializationError(
                f"kernel {spec.label!r}: TMA descriptor {info.name!r}: the CPU interpreter "
                f"path has no tensor-map model yet; lower for CUDA, or launch the PTX by hand "
                f"with jax_pyptx.interpret.launch") from None
        n = math.prod(spec.batch) if spec.batch and any(spec.mask(handle.index)) else 1
        return tma_descriptor(handle, bufs[handle.index], batch=n)
    raise SpecializationError(
        f"kernel {spec.label!r}: raw parameter {info.name!r} has no value when called from "
        f"JAX; raw_params are for kernel.interpret(..., {info.name}=...) and hand launches")


def _interpreter_lowering(ctx, *args, spec: CallSpec):
    """Lower to a host callback into the interpreter (CPU; any platform with interpret)."""
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


def _cpu_lowering(ctx, *args, spec: CallSpec):
    if spec.interpret is False and "cpu" in ctx.module_context.platforms:
        # interpret=False on CPU: the C++ launcher's CPU handler (recording driver table;
        # it records what would be launched and computes nothing). For testing the launch.
        from .lowering_cuda import _ffi_lowering

        return _ffi_lowering(ctx, *args, spec=spec, register=True)
    from .sharding import maybe_partitioned_lowering

    got = maybe_partitioned_lowering(ctx, args, spec)
    if got is not None:
        return got
    return _interpreter_lowering(ctx, *args, spec=spec)


mlir.register_lowering(pyptx_call_p, _cpu_lowering, platform="cpu")


def _default_lowering(ctx, *args, spec: CallSpec):
    if spec.interpret:
        return _cpu_lowering(ctx, *args, spec=spec)
    platforms = ", ".join(ctx.module_context.platforms)
    raise SpecializationError(
        f"kernel {spec.label!r}: no lowering for platform {platforms}; jax_pyptx launches on "
        f"CUDA, runs on the CPU interpreter, or pass interpret=True")


mlir.register_lowering(pyptx_call_p, _default_lowering)

# rules registered by the other runtime modules (they import this one)
from . import autodiff, batching, lowering_cuda, sharding  # noqa: E402,F401
