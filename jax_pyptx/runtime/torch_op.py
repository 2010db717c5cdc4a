"""Calling kernels from PyTorch: one ``torch.library`` custom op per kernel family.

    from jax_pyptx.runtime.torch_op import to_torch        # also jax_pyptx.to_torch
    from examples.hopper.rms_norm import build_rms_norm

    f = to_torch(build_rms_norm(4, 64))     # template parameters by keyword: to_torch(k, T=...)
    y = f(x, w)                             # eager, or inside torch.compile(fullgraph=True)
    f.qualname                              # 'jax_pyptx::rms_norm_<8 hex digits>'

``to_torch(kernel, **template)`` registers the op ``jax_pyptx::<kernel name>_<hash>`` for
the kernel and those template parameters (shape variables bind from the tensors at each call,
so one op serves every shape; a shape variable that appears only in outputs is given here by
keyword too). Calling ``to_torch`` again with the same kernel and arguments returns the same
object. The op is functional (``mutates_args=()``) and has:

* a fake (meta) impl: output shapes and dtypes from the ``Tile`` specs and the shape
  variables bound from the inputs (symbolic under dynamic shapes); nothing is traced or run,
  so ``torch.compile(fullgraph=True)`` traces through it;
* a CPU impl: the CPU interpreter (the one host launch, ``host.host_launch``) on the
  tensors' NumPy views, returning new tensors (outputs start as 0xFF bytes, as in JAX);
* a CUDA impl: the launch plan the JAX CUDA lowering builds (``launch_plan.build_plan``),
  launched by the C++ launcher (``ffi_bridge.torch_launch``) on the tensors' ``data_ptr()``s
  and ``torch.cuda.current_stream()``. Outputs (and the TMA descriptor workspace, when the
  plan has one) are ``torch.empty`` on the inputs' device: uninitialized, as in JAX.

Inputs are bound like ``kernel(*arrays)`` in JAX (``Kernel.bind``): rank, dtype and
dim errors name the parameter, its spec and what was passed. Runtime scalars (a PTX type in
``in_specs``) are passed positionally as Python numbers or 0-d tensors; on CUDA a number or a
CPU tensor goes by value, a 0-d CUDA tensor by device pointer (no sync; the JAX runtime's
pointer trace). ``Layout.COL`` tensors are column-major in their last two dims: such an input
is made column-major (no copy when it already is), such an output is returned as the
column-major tensor the kernel wrote (``.stride()[-2:] == (1, rows)``), on every device.

``configure(kernel, covers=..., grid=...)`` options apply as in JAX; ``backward`` does not
(the op has no autograd formula: ``jax_pyptx.differentiable_kernel`` pairs a forward and a
backward for torch autograd). ``kernel(*tensors, **kw)`` calls the op of
``to_torch(kernel, **kw)`` (``torch_call``).

Importing this module imports torch but not JAX; the CPU and CUDA impls use the runtime's
JAX-free modules (``callspec``, ``options``, ``host``, ``launch_plan``), never JAX.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import threading

import numpy as np
import torch

from ..errors import SpecializationError
from ..specialize.binding import check_inputs
from ..specialize.empty import empty_outputs
from ..specs import Layout, Tile
from ..types import PtxType
from ..specialize.keys import exact_key
from ..scalars import check_dtype, number_value, scalar_value

__all__ = ["NAMESPACE", "TorchKernel", "to_torch", "family", "split_kw", "torch_dtype",
           "scalar_number_dtype"]

NAMESPACE = "jax_pyptx"

_lock = threading.RLock()
_families: dict = {}        # (kernel, template key) -> TorchKernel
_names: set = set()         # op names registered by this process
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_NP_INT_OF_SIZE = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}
_RESERVED_ARG_NAMES = ("self", "out")
_MAX_CACHED_PLANS = 256


# ----------------------------------------------------------------------------- dtypes
def torch_dtype(t: PtxType):
    """The torch dtype holding one value of PTX type ``t`` (None if torch has none)."""
    npd = t.np_dtype
    if npd is None:
        return None
    dt = getattr(torch, npd.name, None)
    return dt if isinstance(dt, torch.dtype) else None


def scalar_number_dtype(t: PtxType):
    """The dtype of the 0-d tensor a Python number for scalar ``t`` becomes (wide enough for
    any value of ``t``; the impls cast to ``t``)."""
    if t.kind == "pred":
        return torch.bool
    if t.is_float:
        dt = torch_dtype(t)
        return dt if dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64) \
            else torch.float32
    return torch.int64


def _scalar_device_dtype(t: PtxType):
    """The dtype of a scalar read through a device pointer: ``t``'s own bytes."""
    dt = torch_dtype(t)
    if t.is_float and dt is not None:
        return dt
    return {8: torch.uint8 if t.kind != "signed" else torch.int8, 16: torch.int16,
            32: torch.int32, 64: torch.int64}.get(t.bits, torch.int64)


class _Aval:
    """What ``Kernel.bind`` reads from a tensor: a shape and a NumPy dtype name."""

    __slots__ = ("shape", "dtype")

    def __init__(self, t):
        self.shape = tuple(t.shape)
        self.dtype = str(t.dtype).removeprefix("torch.")


def _numpy_view(t: torch.Tensor, np_dtype) -> np.ndarray:
    """A NumPy view of a CPU tensor (bf16 / fp8 through an integer view of the same size)."""
    t = t.detach()
    npd = np.dtype(np_dtype)
    return t.view(_INT_OF_SIZE[t.element_size()]).numpy().view(npd)


def _from_numpy(a: np.ndarray, dtype) -> torch.Tensor:
    a = np.ascontiguousarray(a)
    return torch.from_numpy(a.view(_NP_INT_OF_SIZE[a.dtype.itemsize])).view(dtype)


def _is_col(spec: Tile) -> bool:
    return spec.layout is Layout.COL and len(spec.dims) >= 2


def _memory_shape(shape: tuple, spec: Tile) -> tuple:
    return shape[:-2] + (shape[-1], shape[-2]) if _is_col(spec) else tuple(shape)


def _to_memory(t: torch.Tensor, spec: Tile) -> torch.Tensor:
    """The buffer the kernel reads: C order, or the last two dims swapped for COL (no copy
    when the tensor is already laid out that way)."""
    return t.transpose(-1, -2).contiguous() if _is_col(spec) else t.contiguous()


def _from_memory(buf: torch.Tensor, spec: Tile) -> torch.Tensor:
    return buf.transpose(-1, -2) if _is_col(spec) else buf


# ----------------------------------------------------------------------------- the family
class TorchKernel:
    """A kernel (with fixed template parameters) as the custom op ``qualname``; call it."""

    def __init__(self, kernel, template: dict, fixed_env: dict, name: str, raw=None):
        self.kernel = kernel
        self.template = dict(template)
        self.fixed_env = dict(fixed_env)
        self.raw = dict(raw or {})          # raw parameter values given by keyword
        self.name = name
        self.qualname = f"{NAMESPACE}::{name}"
        k = kernel
        names = k.param_names
        self._template_key = tuple(sorted(self.template.items()))
        self._n_in = len(k.in_specs)
        self._out_dtypes = []
        for j, s in enumerate(k.out_specs):
            dt = torch_dtype(s.dtype)
            if dt is None:
                raise SpecializationError(
                    f"kernel {k.name!r}: output {names[self._n_in + j]} ({s}) has dtype "
                    f"{s.dtype.name}, which has no torch dtype")
            self._out_dtypes.append(dt)
        self._plans: dict = {}
        self.schema = self._schema()
        op = torch.library.custom_op(self.qualname, self._cpu_impl, mutates_args=(),
                                     device_types="cpu", schema=self.schema)
        op.register_kernel("cuda", self._cuda_impl)
        op.register_fake(self._fake_impl)
        self.op = op
        self._overload = getattr(getattr(torch.ops, NAMESPACE), name).default

    def __repr__(self):
        return f"<jax_pyptx.TorchKernel {self.qualname} {self.schema}>"

    def _schema(self) -> str:
        names = self.kernel.param_names[:self._n_in]
        args = ", ".join(f"Tensor {n}_" if n in _RESERVED_ARG_NAMES else f"Tensor {n}"
                         for n in names)
        n_out = len(self.kernel.out_specs)
        outs = "Tensor" if n_out == 1 else "(" + ", ".join(["Tensor"] * n_out) + ")"
        return f"({args}) -> {outs}"

    # ------------------------------------------------------------------ the call
    def __call__(self, *args):
        """Outputs of the kernel on ``args`` (one tensor, or a tuple for several outputs)."""
        k = self.kernel
        check_inputs(k, len(args))
        ops = []
        for name, a, s in zip(k.param_names, args, k.in_specs):
            if isinstance(s, PtxType) and not isinstance(a, torch.Tensor):
                # refused when lossy or out of range (jax_pyptx.scalars), never a string
                v = number_value(s, a, f"kernel {k.name!r}: runtime scalar {name}")
                a = torch.tensor(v, dtype=scalar_number_dtype(s))
            ops.append(a)
        return self._overload(*ops)

    def _ret(self, outs):
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ------------------------------------------------------------------ checks
    def _bind(self, args):
        """(shape variables, device) of a call; raises on bad ranks, dtypes, shapes."""
        k = self.kernel
        names = k.param_names
        device = where = None
        for i, (a, s) in enumerate(zip(args, k.in_specs)):
            if isinstance(s, PtxType):
                if a.dim() != 0:
                    raise SpecializationError(
                        f"kernel {k.name!r}: parameter {names[i]} is a runtime scalar "
                        f"({s.name}); got a tensor of shape {tuple(a.shape)}")
                check_dtype(s, a.dtype, f"kernel {k.name!r}: runtime scalar {names[i]}",
                            noun="tensor", fix="; cast it explicitly (t.to(torch.int64))")
                continue
            if device is None:
                device, where = a.device, names[i]
            elif a.device != device:
                raise SpecializationError(
                    f"kernel {k.name!r}: parameter {names[i]} is on {a.device} but {where} is "
                    f"on {device}; tensor inputs must be on one device")
        if device is None:
            device = args[0].device if args else torch.device("cpu")
        env = dict(k.bind(*[_Aval(a) for a in args], **self.template).env)
        for s, v in self.fixed_env.items():
            if s in env and env[s] != v:
                raise SpecializationError(
                    f"kernel {k.name!r}: shape variable {s}={v} (given to to_torch) conflicts "
                    f"with {env[s]} from the tensors")
            env[s] = v
        missing = [s for s in k.shape_vars if s not in env]
        if missing:
            raise SpecializationError(
                f"kernel {k.name!r}: shape variable {', '.join(missing)} appears only in "
                f"outputs; pass it to to_torch ({missing[0]}=...)")
        return env, device

    def _empty(self, env, device, j):
        s = self.kernel.out_specs[j]
        buf = torch.empty(_memory_shape(s.resolve(env), s), dtype=self._out_dtypes[j],
                          device=device)
        return _from_memory(buf, s)

    # ------------------------------------------------------------------ fake
    def _fake_impl(self, *args):
        env, device = self._bind(args)
        return self._ret([self._empty(env, device, j)
                          for j in range(len(self.kernel.out_specs))])

    # ------------------------------------------------------------------ CPU
    def _call_spec(self, env: dict, statics: tuple = ()):
        """The JAX runtime's CallSpec of this call (no JAX objects in it)."""
        from .callspec import CallSpec
        from .options import runtime_options

        from ..specialize.binding import raw_values
        from ..specialize.options import merge_options

        k = self.kernel
        raw = raw_values(k, self.raw, env, self.template) if k.raw_params else {}
        return CallSpec(kernel=k, template=self._template_key,
                        env=tuple((s, int(env[s])) for s in k.shape_vars),
                        static_scalars=tuple(statics), raw=tuple(raw.items()),
                        options=merge_options(runtime_options(k), {}))

    def _cpu_impl(self, *args):
        from .callspec import check_grid_covers
        from .host_call import host_launch

        env, _ = self._bind(args)
        if empty_outputs(self.kernel, env) is not None:     # an empty input: no launch
            return self._fake_impl(*args)
        spec = self._call_spec(env)
        check_grid_covers(spec, spec.traced())
        k = self.kernel
        arrays = []
        for a, s in zip(args, k.in_specs):
            if isinstance(s, PtxType):
                arrays.append(a.item())
            else:
                arrays.append(_numpy_view(a.cpu(), s.dtype.np_dtype))
        outs = host_launch(spec, *arrays)
        res = []
        for o, s, dt in zip(outs, k.out_specs, self._out_dtypes):
            t = _from_numpy(o, dt)
            if _is_col(s):          # the same strides as on CUDA (and in the fake impl)
                t = _from_memory(_to_memory(t, s), s)
            res.append(t)
        return self._ret(res)

    # ------------------------------------------------------------------ CUDA
    def _cuda_impl(self, *args):
        env, device = self._bind(args)
        if empty_outputs(self.kernel, env) is not None:     # an empty input: no launch
            return self._fake_impl(*args)
        if device.type != "cuda":   # CPU tensors with a CUDA 0-d scalar dispatch here
            return self._cpu_impl(*args)
        return self._ret(self._launch(env, device, args, None, None))

    def plan(self, *args, scalars_by_pointer=None):
        """``(traced, LaunchPlan, names of the scalars passed by pointer)`` of a CUDA call.

        ``scalars_by_pointer``: None (a 0-d tensor not on the CPU goes by device pointer,
        anything else by value), True (every 0-d tensor by pointer) or False.
        """
        env, _ = self._bind(args)
        return self._plan(env, args, scalars_by_pointer)[:3]

    def _plan(self, env, args, scalars_by_pointer):
        k = self.kernel
        names = k.param_names
        want_ptr = []
        for i, s in enumerate(k.in_specs):
            if isinstance(s, PtxType):
                a = args[i]
                want_ptr.append(a.device.type != "cpu" if scalars_by_pointer is None
                                else bool(scalars_by_pointer))
        if any(want_ptr):         # a kernel reading the parameter itself takes a value
            raw = self._call_spec(env).traced().raw_scalar_params
            scalar_names = [names[i] for i, s in enumerate(k.in_specs)
                            if isinstance(s, PtxType)]
            want_ptr = [w and n not in raw for w, n in zip(want_ptr, scalar_names)]
        statics, n = [], 0
        for i, s in enumerate(k.in_specs):
            if isinstance(s, PtxType):
                statics.append(None if want_ptr[n] else scalar_value(
                    s, args[i].item(), f"kernel {k.name!r}: runtime scalar {names[i]}"))
                n += 1
        key = (tuple(sorted(env.items())), exact_key(tuple(statics)))
        got = self._plans.get(key)
        if got is None:
            from .callspec import check_grid_covers
            from .launch_plan import build_plan, ensure_cubin, traced_for_cuda

            spec = self._call_spec(env, tuple(statics))
            t = traced_for_cuda(spec)
            check_grid_covers(spec, spec.unbatched().traced())
            plan = build_plan(spec, t)
            ensure_cubin(t)          # compile once and publish for the launcher (disk cache)
            by_ptr = tuple(p.name for p in t.params if p.kind == "scalar_ptr")
            got = (t, plan, by_ptr, spec)
            with _lock:
                if len(self._plans) >= _MAX_CACHED_PLANS:
                    self._plans.clear()
                self._plans[key] = got
        return got

    def launch(self, *args, stream=None, scalars_by_pointer=None):
        """The CUDA impl's launch: returns the outputs (a list), allocated on the inputs'
        device. Runs on any device's tensors: with ``ffi_bridge.set_recording(True)``, CPU
        tensors stand in for device memory and the recording driver table reads back what
        would have been launched. ``stream``: a CUstream as an int (default: torch's current
        stream on a CUDA device, else 0); with another stream than torch's current one, keep
        the inputs alive (and contiguous) until the kernel has run."""
        env, device = self._bind(args)
        return self._launch(env, device, args, stream, scalars_by_pointer)

    def _launch(self, env, device, args, stream, scalars_by_pointer):
        from . import ffi_bridge

        k = self.kernel
        names = k.param_names
        t, plan, by_ptr, spec = self._plan(env, args, scalars_by_pointer)
        bufs = [_to_memory(args[i], k.in_specs[i]) for i in spec.tensor_inputs]
        for name in by_ptr:
            i = names.index(name)
            bufs.append(args[i].to(device=device, dtype=_scalar_device_dtype(k.in_specs[i]))
                        .contiguous())
        outs = []
        for j, s in enumerate(k.out_specs):
            buf = torch.empty(_memory_shape(s.resolve(env), s), dtype=self._out_dtypes[j],
                              device=device)
            bufs.append(buf)
            outs.append(buf)
        if plan.workspace_bytes:
            bufs.append(torch.empty(plan.workspace_bytes, dtype=torch.uint8, device=device))
        cuda = device.type == "cuda"
        if stream is None:
            stream = torch.cuda.current_stream(device).cuda_stream if cuda else 0
        with torch.cuda.device(device) if cuda else contextlib.nullcontext():
            ffi_bridge.torch_launch(plan, [b.data_ptr() for b in bufs], stream,
                                    sizes=[b.numel() * b.element_size() for b in bufs])
        return [_from_memory(o, s) for o, s in zip(outs, k.out_specs)]


# ----------------------------------------------------------------------------- to_torch
def split_kw(kernel, kw: dict, unknown_error=None):
    """``(template with defaults, fixed shape variables, raw values, family key)`` of the
    keywords ``kw`` (a name is a shape variable, else a template parameter, else a raw
    parameter). ``unknown_error(names)``: the error for names that are none of those."""
    from ..specialize.binding import shape_value, valid_names
    from ..specialize.keys import exact_items

    template, fixed, raw, unknown = {}, {}, {}, []
    raw_names = {p.name for p in kernel.raw_params}
    for name, v in kw.items():
        if name in kernel.shape_vars:
            fixed[name] = shape_value(kernel, name, v, zero_ok=True)
        elif name in kernel.template_params:
            template[name] = v
        elif name in raw_names:
            raw[name] = v
        else:
            unknown.append(name)
    if unknown:
        if unknown_error is not None:
            raise unknown_error(unknown)
        raise SpecializationError(f"kernel {kernel.name!r}: unknown argument {unknown[0]!r}; "
                                  f"valid: {valid_names(kernel)}")
    for name, default in kernel.template_params.items():
        if name not in template:
            if default is inspect.Parameter.empty:
                raise SpecializationError(f"kernel {kernel.name!r}: template parameter "
                                          f"{name!r} has no default; pass {name}=...")
            template[name] = default
    # by type and exact value: alpha=1 and alpha=True, 0.0 and -0.0 are different ops
    key = (exact_items(template), tuple(sorted(fixed.items())))
    if raw:
        key += (exact_items(raw),)
    return template, fixed, raw, key


def _op_name(kernel, key) -> str:
    """``<kernel name>_<8 hex digits>``: the same in every process for the same kernel
    definition and arguments; a second kernel with the same digest gets ``_2``, ...."""
    fn = kernel.fn
    ident = "|".join(map(repr, (
        getattr(fn, "__module__", ""), getattr(fn, "__qualname__", kernel.name), kernel._arch,
        kernel.in_specs, kernel.out_specs, kernel.block, kernel.cluster, kernel.smem, key)))
    base = f"{kernel.name}_{hashlib.sha256(ident.encode()).hexdigest()[:8]}"
    name, n = base, 1
    while name in _names or hasattr(getattr(torch.ops, NAMESPACE), name):
        n += 1
        name = f"{base}_{n}"
    return name


def to_torch(kernel, **template) -> TorchKernel:
    """``kernel`` as a PyTorch op: returns a callable of the inputs (see the module doc).

    ``template``: template parameters (defaults filled in), optionally shape variables fixed
    for every call (needed for those that appear only in outputs), and raw parameter values.

    Examples:
        >>> import torch
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx import to_torch
        >>> f = to_torch(twice())
        >>> f(torch.ones(32))[:3]                       # CPU tensors run on the interpreter
        tensor([2., 2., 2.])
    """
    return family(kernel, template)


def family(kernel, kw: dict, unknown_error=None) -> TorchKernel:
    """The :class:`TorchKernel` of ``kernel`` and keywords ``kw`` (registered on first use)."""
    from ..kernel_def import Kernel

    if not isinstance(kernel, Kernel):
        raise SpecializationError(f"to_torch() takes a @kernel, got {kernel!r}")
    if not kernel.out_specs:
        raise SpecializationError(f"kernel {kernel.name!r} has no outputs (out_specs); a "
                                  f"PyTorch op returns the outputs it writes")
    tmpl, fixed, raw, key = split_kw(kernel, kw, unknown_error)
    with _lock:
        fam = _families.get((kernel, key))
        if fam is None:
            name = _op_name(kernel, key)
            fam = TorchKernel(kernel, tmpl, fixed, name, raw)
            _names.add(name)
            _families[(kernel, key)] = fam
    return fam
