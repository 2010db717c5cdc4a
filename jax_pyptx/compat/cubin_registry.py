"""Hand-assembled launches of PTX text (the low-level half of ``pyptx.jax_support``), and
stand-alone TMA tensor maps. No JAX or torch here: ``jax_support`` and ``torch_support``
call these, and a launch runs as a kernel of the runtime (``record_kernel``).

A :class:`CubinRecord` is one PTX entry compiled for an arch (``compile_ptx_to_cubin``:
ptxas through the toolchain's disk cache, the cubin published where the C++ launcher looks
for it) plus what a launch needs that the PTX does not say: grid / block / cluster / shared
memory, extra scalar parameters (raw bytes) and tensor maps over buffer operands. A launch
of it is a kernel of the runtime (``record_kernel.record_kernel``; parameters in the order
pyptx passes them: input buffers, output buffers, scalars, tensor maps): the launcher's
``LaunchPlan`` comes from ``runtime.launch_plan.build_plan`` as for any kernel, and
:func:`run_on_host` runs it on the CPU interpreter (the one host launch).

A :class:`HostTensorMap` is one tensor map encoded by the launcher's driver table
(``cuTensorMapEncodeTiled`` of libcuda, or of the recording table under
``ffi_bridge.set_recording(True)``), with a 128-byte host copy and a device copy.
Registered with a record (``add_tma_spec``), it is re-encoded at every launch from the live
address of the buffer it covers: its geometry is what counts, not its placeholder address.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import NotSupportedError, PtxValueError, SpecializationError
from ..specialize.host import HostLaunch
from ..specialize.options import merge_options
from ..specialize.tensor_maps import map_spec
from ..specs import Layout, Tile, TmaDescriptorHandle
from ..types import PtxType, by_name
from ..runtime.ffi_plan import TENSORMAP_DTYPES, TmaSpec
from .record_kernel import record_kernel

__all__ = ["CubinRecord", "CubinRegistry", "get_cubin_registry", "HostTensorMap",
           "synthesize_tensor_map", "synthesize_tensor_map_3d", "tensor_map_at",
           "run_on_host", "as_ptx_type", "resolve_outputs"]

def as_ptx_type(dtype) -> PtxType:
    """A PTX type from a PtxType, its name, or a NumPy / torch / JAX dtype."""
    if isinstance(dtype, PtxType):
        return dtype
    if isinstance(dtype, str):
        try:
            return by_name(dtype)
        except Exception:
            pass
    from ..runtime.callspec import dtype_name

    name = str(dtype).removeprefix("torch.")
    try:
        name = dtype_name(np.dtype(name))
    except TypeError:
        pass
    return by_name(name)


# ----------------------------------------------------------------------------- tensor maps
class HostTensorMap:
    """One encoded tensor map: ``geometry`` (the launcher's ``TmaSpec``: per-dimension tuples
    innermost first, as ``cuTensorMapEncodeTiled`` takes them), the 128 encoded bytes
    (``data``, also at ``host_ptr``, 128-byte aligned) and ``device_ptr`` (a 128-byte device
    allocation holding them, 0 when none was made)."""

    def __init__(self, geometry: TmaSpec, address: int, data: bytes, device_ptr: int = 0):
        self.geometry = geometry
        self.address = int(address)
        self._buf = (ctypes.c_uint8 * 256)()
        base = ctypes.addressof(self._buf)
        self.host_ptr = (base + 127) // 128 * 128
        ctypes.memmove(self.host_ptr, data, 128)
        self.device_ptr = int(device_ptr)

    @property
    def data(self) -> bytes:
        return ctypes.string_at(self.host_ptr, 128)

    def __repr__(self):
        g = self.geometry
        return (f"<HostTensorMap {g.dtype} dims={g.global_dims} box={g.box} "
                f"swizzle={g.swizzle} host=0x{self.host_ptr:x} device=0x{self.device_ptr:x}>")

    def tma_spec(self, operand: int) -> TmaSpec:
        """The launcher's spec of this map over buffer ``operand`` (global mode)."""
        return replace(self.geometry, operand=int(operand), mode="global")


_maps: dict = {}                # host_ptr -> HostTensorMap (kept alive, as upstream does)
_maps_lock = threading.Lock()


def _driver_call(what: str, fn, *args):
    from ..runtime import ffi_bridge

    try:
        ext = ffi_bridge.extension()
    except ImportError as e:
        raise NotSupportedError(f"{what}: {e}") from None
    if not hasattr(ext, fn):
        raise NotSupportedError(f"{what}: the C++ launcher jax_pyptx._ffi predates {fn}; "
                                f"rebuild it (pip install -e .)")
    try:
        return getattr(ext, fn)(*args)
    except RuntimeError as e:
        hint = ("" if ext.recording_enabled() else
                "; without a GPU, jax_pyptx.runtime.ffi_bridge.set_recording(True) routes "
                "driver calls to the recording table")
        raise NotSupportedError(f"{what}: {e}{hint}") from None


def _encode(tile: Tile, placeholder_ptr: int, what: str) -> HostTensorMap:
    """Encode the tensor map ``tile`` describes for a tensor of its (concrete) shape: the
    derivation kernel calls use (``Tile.tma_view``, ``specialize.tma.map_spec``)."""
    if tile.dtype.name not in TENSORMAP_DTYPES:
        raise NotSupportedError(f"{what}: dtype {tile.dtype.name} has no CUtensorMapDataType; "
                                f"allowed: {', '.join(sorted(TENSORMAP_DTYPES))}")
    try:
        shape, box, strides = tile.tma_view(tile.shape, {})
    except PtxValueError as e:
        raise PtxValueError(f"{what}: {e.message}") from None
    if any(not 0 < b <= 256 for b in box):
        raise PtxValueError(f"{what}: box {box} (outermost first): each entry must be in "
                            f"1..256")
    g = map_spec(TmaDescriptorHandle(what, dtype=tile.dtype, shape=shape, box=box,
                                     swizzle=tile.tma_swizzle, strides=strides))
    data = _driver_call(what, "encode_tensor_map", g.data_type, list(g.global_dims),
                        list(g.global_strides), list(g.box), list(g.element_strides),
                        g.interleave, g.swizzle, g.l2_promotion, g.oob_fill,
                        int(placeholder_ptr))
    device = _driver_call(what, "mem_alloc", 128)
    _driver_call(what, "memcpy_htod", device, data)
    m = HostTensorMap(g, placeholder_ptr, data, device)
    with _maps_lock:
        _maps[m.host_ptr] = m
    return m


def synthesize_tensor_map(shape, dtype, layout=Layout.ROW, box_shape=None,
                          placeholder_ptr: int = 0) -> HostTensorMap:
    """The rank-2 tensor map of a row-major ``(rows, cols)`` tensor (box ``(rows, cols)``,
    default 128 rows by one swizzle span, swizzle from ``layout``), encoded over
    ``placeholder_ptr``: the map ``X.tma_desc()`` builds for
    ``Tile(rows, cols, dtype, layout, tma_box=box_shape)``."""
    shape = tuple(int(d) for d in shape)
    if len(shape) != 2:
        raise NotSupportedError(f"synthesize_tma_descriptor: rank {len(shape)} (shape "
                                f"{shape}); only rank 2 is supported (rank 3 stripes: "
                                f"synthesize_tma_descriptor_3d)")
    if not isinstance(layout, Layout):
        layout = Layout(layout)
    box = None if box_shape is None else tuple(int(b) for b in box_shape)
    return _encode(Tile(*shape, as_ptx_type(dtype), layout, tma_box=box), placeholder_ptr,
                   "synthesize_tma_descriptor")


def synthesize_tensor_map_3d(height, width, dtype, box_major, box_minor, *,
                             swizzle_128b=True, padding=False,
                             placeholder_ptr: int = 0) -> HostTensorMap:
    """The rank-3 "64-column stripe" tensor map of a ``(height, width)`` tensor: the map
    ``X.tma_desc()`` builds for ``Tile(height, width, dtype, Layout.TMA_128B (or ROW),
    tma_box=(box_major, box_minor), tma_rank=3, tma_padding=padding)``."""
    what = "synthesize_tma_descriptor_3d"
    height, width = int(height), int(width)
    if width % 64:
        raise PtxValueError(f"{what}: the stripe tensor map needs a width that is a multiple "
                            f"of 64, got {width}")
    layout = Layout.TMA_128B if swizzle_128b else Layout.ROW
    tile = Tile(height, width, as_ptx_type(dtype), layout,
                tma_box=(int(box_major), int(box_minor)), tma_rank=3,
                tma_padding=bool(padding))
    return _encode(tile, placeholder_ptr, what)


def tensor_map_at(host_ptr: int) -> HostTensorMap:
    """The tensor map synthesized at ``host_ptr`` (its ``host_blob_ptr``)."""
    m = _maps.get(int(host_ptr))
    if m is None:
        raise SpecializationError(
            f"no tensor map was synthesized at host address 0x{int(host_ptr):x}; pass the "
            f"host_blob_ptr that synthesize_tma_descriptor returned")
    return m


# ----------------------------------------------------------------------------- records
@dataclass
class CubinRecord:
    """One PTX entry compiled for ``arch``, and its launch configuration."""

    handle: int
    ptx: str
    arch: str
    kernel_name: str
    cubin: bytes | None = None
    cubin_path: str = ""
    dynamic_smem_bytes: int = 0
    cu_function: object = None        # kept as given; the launcher loads its own per context
    grid: tuple = (1, 1, 1)
    block: tuple = (1, 1, 1)
    cluster: tuple = (1, 1, 1)
    smem_bytes: int = 0
    scalars: list = field(default_factory=list)   # little-endian bytes, in order
    tma: list = field(default_factory=list)       # (buffer operand, HostTensorMap)


class CubinRegistry:
    """Records by handle (ints from 1), thread-safe."""

    def __init__(self):
        self._records: dict = {}
        self._next = itertools.count(1)
        self._lock = threading.Lock()

    def register(self, **fields) -> CubinRecord:
        with self._lock:
            rec = CubinRecord(handle=next(self._next), **fields)
            self._records[rec.handle] = rec
        return rec

    def get(self, handle) -> CubinRecord:
        """The record of ``handle`` (``SpecializationError`` naming the known ones)."""
        rec = self._records.get(handle)
        if rec is None:
            raise SpecializationError(
                f"no compiled kernel has handle {handle!r}; handles come from "
                f"compile_ptx_to_cubin (known: {sorted(self._records) or 'none'})")
        return rec

    def __contains__(self, handle) -> bool:
        return handle in self._records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self):
        return iter(list(self._records.values()))


_registry = CubinRegistry()


def get_cubin_registry() -> CubinRegistry:
    """The process's :class:`CubinRegistry`."""
    return _registry


def resolve_outputs(out_specs, out_shape_env) -> list:
    """``[(shape, PtxType)]`` of ``out_specs`` (Tiles) under shape variables
    ``out_shape_env``."""
    env = dict(out_shape_env or {})
    out = []
    for j, s in enumerate(out_specs):
        if not isinstance(s, Tile):
            raise SpecializationError(f"out_specs[{j}] is {s!r}; out_specs are Tile(...)")
        missing = [d for d in s.symbols if d not in env]
        if missing:
            raise SpecializationError(f"out_specs[{j}] {s}: shape variable "
                                      f"{', '.join(missing)} is not in out_shape_env "
                                      f"{env!r}")
        out.append((s.resolve(env), s.dtype))
    return out


def run_on_host(rec: CubinRecord, inputs, outputs, grid=None, block=None, cluster=None,
                smem_bytes=None, sanitize: bool = True) -> list:
    """Run ``rec`` on the CPU interpreter through the one host launch (``HostLaunch`` of its
    :func:`~jax_pyptx.compat.record_kernel.record_kernel`): ``inputs`` (NumPy arrays,
    copied), ``outputs`` (``[(shape, PtxType)]``: new arrays, uninitialized for the sanitizer
    as on the JAX and torch paths, so a kernel that reads an output before writing it, or
    leaves part of it unwritten, is reported; a store into an input is too). Returns the
    output arrays."""
    arrays = [np.asarray(a) for a in inputs]
    k = record_kernel(rec, [(a.shape, as_ptx_type(a.dtype)) for a in arrays], outputs, grid,
                      block, cluster, smem_bytes)
    launch = HostLaunch(k.trace_for(), label=rec.kernel_name)
    got = launch([a.reshape(t.shape) for a, t in zip(arrays, k.in_specs)], (), k.raw_values(),
                 merge_options({}, {"sanitize": sanitize}))
    return [g.reshape(shape) for g, (shape, _) in zip(got, outputs)]
