"""A ``compile_ptx_to_cubin`` handle as a kernel of the runtime: one launch description of a
:class:`~jax_pyptx.compat.cubin_registry.CubinRecord` (its PTX, launch geometry, scalars and
tensor maps, and the shapes of one call) in the shape the runtime takes from a ``Kernel``.

``call_kernel_via_ffi`` binds the ``pyptx_call`` primitive with a ``CallSpec`` whose kernel is a
:class:`RecordKernel`, so a hand-assembled launch gets what every kernel call gets: the CUDA
lowering (the launcher's custom call with the record's plan), the interpreter on the CPU, the
vmap rule and the sharding rules. The PyTorch CPU path runs it through the same host launch
(``specialize.host.HostLaunch``).

A record's PTX is not traced: its parameters are read from the ``.entry`` in order, buffers
first (inputs then outputs), then the record's scalars (raw values), then its tensor maps.
Hand-written PTX reads its buffer parameters itself, so it cannot be re-laid out for a batch
on the grid: under ``jax.vmap`` the call runs once per item (``batching``'s loop).

No JAX here.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import SpecializationError
from ..runtime.ffi_plan import ptx_sha256
from ..specialize.tensor_maps import TmaSpec, map_spec
from ..specialize.traced import ParamInfo, Traced
from ..specs import Layout, TensorSpec, Tile, TmaDescriptorHandle
from ..types import by_name

__all__ = ["RecordKernel", "record_kernel", "dim3", "parsed"]

_SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}


@dataclass
class _RecordTraced(Traced):
    """A ``Traced`` whose PTX is the record's text as given (its cubin is published under
    that text's sha256), not the text printed back from the parsed module."""

    text: str = ""

    @property
    def ptx(self) -> str:        # type: ignore[override]
        return self.text


@dataclass(frozen=True)
class RecordKernel:
    """What the runtime reads of a kernel (``name``, ``in_specs``, ``out_specs``,
    ``param_names``, ``trace_for``) for one launch description of a record. Compared by
    value: equal descriptions share JAX's compiled executables."""

    name: str
    arch: str
    ptx_sha256: str
    in_specs: tuple               # Tile of each input (its shape and dtype as called)
    out_specs: tuple              # Tile of each output
    grid: tuple
    block: tuple
    cluster: tuple
    smem: int
    scalars: tuple                # little-endian bytes per scalar parameter
    tma: tuple                    # (buffer operand, TmaSpec) per tensor map
    ptx: str = field(compare=False, repr=False)

    @functools.cached_property
    def _entry(self):
        return parsed(self.ptx).function(self.name)

    @property
    def param_names(self) -> tuple:
        """The ``.entry``'s parameter names, in order."""
        return tuple(p.name for p in self._entry.params)

    def raw_values(self) -> dict:
        """The scalar parameters' values by name (NumPy scalars of the parameter's type,
        or unsigned integers of the scalar's size when the sizes differ)."""
        params = self._entry.params[len(self.in_specs) + len(self.out_specs):]
        out = {}
        for p, raw in zip(params, self.scalars):
            npd = p.type.np_dtype
            if npd is None or np.dtype(npd).itemsize != len(raw):
                npd = np.dtype(f"u{len(raw)}")
            out[p.name] = np.frombuffer(raw, dtype=np.dtype(npd).newbyteorder("<"))[0]
        return out

    def trace_for(self, abi=None, **kw) -> Traced:
        """The launch as a ``Traced`` (``abi``: plain only; no template parameters)."""
        if kw or (abi is not None and not abi.plain):
            raise SpecializationError(
                f"kernel {self.name!r} (a compile_ptx_to_cubin handle) takes no template "
                f"parameters and cannot be batched on the grid or take scalars by pointer")
        return _traced(self)


@functools.lru_cache(maxsize=64)
def parsed(ptx: str):
    """The parsed module of PTX text (cached; the parser checks it as ptxas would)."""
    from ..text.parser import parse

    return parse(ptx)


@functools.lru_cache(maxsize=256)
def _traced(k: RecordKernel) -> Traced:
    entry = k._entry
    n_buf = len(k.in_specs) + len(k.out_specs)
    want = n_buf + len(k.scalars) + len(k.tma)
    if len(entry.params) != want:
        raise SpecializationError(
            f"kernel {k.name!r}: its .entry has {len(entry.params)} parameters, but the launch "
            f"passes {want}: {len(k.in_specs)} inputs and {len(k.out_specs)} outputs, "
            f"{len(k.scalars)} scalars (add_scalar_param_to_shim) and {len(k.tma)} tensor maps "
            f"(add_tma_spec_to_shim), in that order")
    tensors = [TensorSpec(entry.params[i].name, t.shape, t.dtype, Layout.ROW, index=i,
                          output=i >= len(k.in_specs))
               for i, t in enumerate(k.in_specs + k.out_specs)]
    params, handles = [], []
    for i, p in enumerate(entry.params):
        if i < n_buf:
            params.append(ParamInfo(p.name, "tensor", p.type, index=i))
        elif i < n_buf + len(k.scalars):
            params.append(ParamInfo(p.name, "raw", p.type))
        else:
            operand, g = k.tma[i - n_buf - len(k.scalars)]
            handles.append(_handle(k.name, p.name, operand, g, n_buf))
            params.append(ParamInfo(p.name, "tma", p.type))
    buffers = tuple(p.name for p in entry.params[:n_buf])
    return _RecordTraced(
        name=k.name, arch=k.arch, module=parsed(k.ptx), grid=k.grid, block=k.block,
        cluster=k.cluster, dynamic_smem=k.smem, static_smem=0, params=tuple(params),
        inputs=tuple(tensors[:len(k.in_specs)]), outputs=tuple(tensors[len(k.in_specs):]),
        scalars=(), env={}, template={}, tma=tuple(handles),
        # hand-written PTX reads its buffer parameters itself: no batch on the grid
        reads=lambda: (frozenset(), buffers, ()), text=k.ptx)


def _handle(kernel: str, param: str, operand: int, g: TmaSpec, n_buf: int):
    """The descriptor handle whose ``map_spec`` is the synthesized map ``g`` over buffer
    ``operand`` (outermost first, with its byte strides as a view)."""
    if not 0 <= operand < n_buf:
        raise SpecializationError(
            f"kernel {kernel!r}: a tensor map covers buffer {operand}, but the call has "
            f"{n_buf} buffers (inputs then outputs)")
    dtype = by_name(g.dtype)
    h = TmaDescriptorHandle(
        param, param=param, index=operand, dtype=dtype, shape=tuple(reversed(g.global_dims)),
        box=tuple(reversed(g.box)), swizzle=_SWIZZLE_BYTES[g.swizzle],
        element_strides=tuple(reversed(g.element_strides)), interleave=g.interleave,
        oob_fill=g.oob_fill, l2_promotion=g.l2_promotion, mode="global",
        strides=tuple(reversed((dtype.nbytes,) + tuple(g.global_strides))))
    if map_spec(h, operand=operand) != replace(g, operand=operand, mode="global"):
        raise AssertionError(f"tensor map {param!r}: handle does not reproduce {g}")
    return h


def dim3(v, default) -> tuple:
    """``v`` as a 3-tuple (an int is ``(v, 1, 1)``, short tuples padded with 1s); ``default``
    when ``v`` is None."""
    if v is None:
        return tuple(default)
    if isinstance(v, int):
        return (v, 1, 1)
    v = tuple(int(x) for x in v)
    return (v + (1, 1, 1))[:3]


def record_kernel(rec, inputs, outputs, grid=None, block=None, cluster=None,
                  smem_bytes=None) -> RecordKernel:
    """The :class:`RecordKernel` of one launch of ``rec``: ``inputs`` ``[(shape, PtxType)]``
    (shapes as called), ``outputs`` ``[(shape, PtxType)]``; geometry and shared memory
    default to the record's (``register_launch_config``)."""
    def tile(shape, t):
        return Tile(*(tuple(shape) or (1,)), t)      # a 0-d buffer is one element

    smem = rec.smem_bytes if smem_bytes is None else smem_bytes
    return RecordKernel(
        name=rec.kernel_name, arch=rec.arch, ptx_sha256=ptx_sha256(rec.ptx),
        in_specs=tuple(tile(s, t) for s, t in inputs),
        out_specs=tuple(tile(s, t) for s, t in outputs),
        grid=dim3(grid, rec.grid), block=dim3(block, rec.block),
        cluster=dim3(cluster, rec.cluster), smem=max(int(smem), int(rec.dynamic_smem_bytes)),
        scalars=tuple(rec.scalars), tma=tuple((op, m.tma_spec(op)) for op, m in rec.tma),
        ptx=rec.ptx)
