"""The static description of one kernel call (:class:`CallSpec`) and its shape / grid
arithmetic and checks. No JAX here: the PyTorch runtime uses it too.

A ``CallSpec`` is the JAX primitive's only parameter (hashable): the kernel, its template
parameters, the shape variables bound from the (per-item) shapes, the batch the call was
vmapped over and the call's options (``CallOptions``: aliasing, grid, the interpreter's
options, ...).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import SpecializationError
from ..specialize import ParamAbi
from ..specialize.binding import check_inputs
from ..specialize.dims import resolve_grid
from ..specialize.keys import exact_key
from ..specialize.options import AXES, DEFAULT, CallOptions
from ..specs import Tile
from ..types import PtxType

__all__ = ["CallSpec", "check_operands", "check_covers_shapes", "check_grid_covers",
           "check_aliases", "dtype_name", "AXES"]

@dataclass(frozen=True)
class CallSpec:
    """Static description of one call (the primitive's only parameter; hashable)."""

    kernel: object                  # jax_pyptx.Kernel (hashed by identity)
    # template, static_scalars and raw compare by type and exact value (``exact``): JAX
    # caches executables by this spec, and 1 == True, 0.0 == -0.0 must not share one
    template: tuple = field(compare=False)  # sorted (name, value) template parameters
    env: tuple                      # (symbol, value) shape variables, per batch item
    batch: tuple = ()               # leading batch sizes, outermost first (vmap on the grid)
    masks: tuple = ()               # per tensor (inputs then outputs): bool per batch level
    static_scalars: tuple = field(default=(), compare=False)   # per runtime scalar input:
                                    # its value when known, else None
    raw: tuple = field(default=(), compare=False)   # ((raw parameter name, NumPy scalar), ...)
    options: CallOptions = DEFAULT  # the call's options, checked (specialize.options)
    host_callback: object = None    # (internal) index of a host callback registered by the
                                    # enclosing module (partitioned interpreter calls)
    exact: tuple = field(init=False, repr=False)   # exact keys of template / scalars / raw

    def __post_init__(self):
        object.__setattr__(self, "exact", (exact_key(self.template),
                                           exact_key(self.static_scalars), exact_key(self.raw)))

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in self.env] + [f"{k}={v!r}" for k, v in self.template]
        if self.batch:
            parts.append(f"batch={self.batch}")
            parts.append("masks=" + ",".join("".join("1" if b else "0" for b in m)
                                             for m in self.masks))
        for f, shown in (("grid", "grid"), ("input_output_aliases", "aliases"),
                         ("interpret", "interpret"), ("independent", "independent"),
                         ("name", "name")):
            v = getattr(self.options, f)
            if v not in (None, ()):
                parts.append(f"{shown}={v!r}")
        if any(v is not None for v in self.static_scalars):
            parts.append(f"scalars={self.static_scalars}")
        if self.raw:
            parts.append("raw=" + ",".join(f"{n}={v}" for n, v in self.raw))
        if self.host_callback is not None:
            parts.append(f"host_callback={self.host_callback}")
        return f"{self.kernel.name}({', '.join(parts)})"

    # -- names
    @property
    def label(self) -> str:
        return self.options.name or self.kernel.name

    @property
    def env_dict(self) -> dict:
        return dict(self.env)

    @property
    def param_names(self) -> tuple:
        return self.kernel.param_names

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

    @property
    def tensor_tiles(self) -> list:
        """The Tile of each tensor (inputs then outputs)."""
        k = self.kernel
        return [k.in_specs[i] for i in self.tensor_inputs] + list(k.out_specs)

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

    def abi(self, scalar_ptrs=()) -> ParamAbi:
        """The parameter ABI of this call (batch on the grid, scalars by pointer)."""
        return ParamAbi.make(self.batch, self.masks, scalar_ptrs)

    def traced(self, scalar_ptrs=()):
        """The Traced specialization to launch (batched on the grid when ``batch``;
        ``scalar_ptrs``: runtime scalars passed by device pointer, for CUDA)."""
        return self.kernel.trace_for(self.abi(scalar_ptrs), **self.trace_kw())

    def traced_scalars(self) -> tuple:
        """Names of the runtime scalars whose value is not known at bind time."""
        names = self.param_names
        return tuple(names[i] for n, i in enumerate(self.scalar_inputs)
                     if n >= len(self.static_scalars) or self.static_scalars[n] is None)

    def unbatched(self) -> "CallSpec":
        return replace(self, batch=(), masks=())

    def item_grid(self, traced=None) -> tuple:
        """The grid of one batch item (the kernel's, or the ``grid=`` override)."""
        grid = self.options.grid
        if grid is None:
            return (traced or self.unbatched().traced()).grid
        return resolve_grid(grid, self.label, self.env_dict, dict(self.template))

    def launch_grid(self, traced=None) -> tuple:
        g = self.item_grid(None if self.batch else traced)
        if self.batch:
            return (g[0], g[1], g[2] * math.prod(self.batch))
        return g


# ----------------------------------------------------------------------------- checks
def check_operands(spec: CallSpec, avals) -> None:
    """Rank, shape and dtype of each operand against the specs (errors name the parameter)."""
    k = spec.kernel
    names = spec.param_names
    check_inputs(k, len(avals), label=spec.label)
    for i, ((shape, dtype), a) in enumerate(zip(spec.in_avals(), avals)):
        s = k.in_specs[i]
        got_shape, got_dtype = tuple(a.shape), np.dtype(a.dtype)
        what = f"{dtype_name(got_dtype)}{list(got_shape)}"
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
    return (f"batch {list(bd)} + " if bd else "") + str(s)


_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
                "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64", "int8": "s8",
                "uint8": "u8", "int16": "s16", "uint16": "u16", "bool": "pred"}


def dtype_name(dt) -> str:
    """The PTX-style short name of a NumPy dtype (``float32`` -> ``f32``)."""
    return _DTYPE_NAMES.get(str(dt), str(dt))


def check_covers_shapes(spec: CallSpec) -> None:
    """Before tracing: a shape variable smaller than one block's share of a ``covers``
    declaration leaves the grid empty along that axis; say so in the declaration's terms."""
    env = spec.env_dict
    for sym, axis, per in spec.options.covers:
        n = env.get(sym)
        if n is not None and n < per:
            raise SpecializationError(
                f"kernel {spec.label!r}: {sym}={n} is less than one block's share: each block "
                f"along grid {AXES[axis]} handles {per} of {sym}, so {sym} must be a positive "
                f"multiple of {per} (with {sym}={n} the grid has no blocks along "
                f"{AXES[axis]})")


def check_grid_covers(spec: CallSpec, traced=None) -> None:
    """``covers`` declarations: each block along a grid axis handles a fixed number of
    elements of a shape variable; the shape must be a multiple and the grid must reach it."""
    if not spec.options.covers:
        return
    grid = spec.item_grid(traced)
    env = spec.env_dict
    for sym, axis, per in spec.options.covers:
        n = env[sym]
        g = grid[axis]
        if n % per:
            raise SpecializationError(
                f"kernel {spec.label!r}: the grid {grid} cannot cover {sym}={n}: each block "
                f"along grid {AXES[axis]} handles {per} of {sym}, so {sym} must be a multiple "
                f"of {per}")
        if g * per < n:
            raise SpecializationError(
                f"kernel {spec.label!r}: the grid {grid} cannot cover {sym}={n}: {g} blocks "
                f"along grid {AXES[axis]} handle {per} each, {g * per} in all")


def check_aliases(spec: CallSpec) -> None:
    k = spec.kernel
    names = spec.param_names
    ins = spec.in_avals()
    outs = spec.out_avals()
    seen = set()
    for i, o in spec.options.input_output_aliases:
        if not 0 <= i < spec.n_in:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: there is no input "
                f"{i} (the kernel has {spec.n_in})")
        if not 0 <= o < spec.n_out:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: there is no output "
                f"{o} (the kernel has {spec.n_out})")
        if spec.is_scalar(i):
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: input {i} "
                f"({names[i]}) is a runtime scalar; only tensors alias outputs")
        if o in seen:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases: output {o} is aliased twice")
        seen.add(o)
        (ishape, idt), (oshape, odt) = ins[i], outs[o]
        if tuple(ishape) != tuple(oshape) or np.dtype(idt) != np.dtype(odt) or \
                k.in_specs[i].layout is not k.out_specs[o].layout:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: input {i} "
                f"({names[i]}: {_fmt(idt, ishape)}) and output {o} "
                f"({names[spec.n_in + o]}: {_fmt(odt, oshape)}) must have the same shape, "
                f"dtype and layout")


def _fmt(dtype, shape) -> str:
    return f"{dtype_name(np.dtype(dtype))}{list(shape)}"
