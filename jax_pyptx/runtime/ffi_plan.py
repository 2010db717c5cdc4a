"""The launch plan: the contract between the Python runtimes and the C++ launcher.

A :class:`LaunchPlan` says everything the C++ side (``ffi/``) needs to launch one
kernel: the PTX text (a self-contained artifact: no process-local handles), the
launch geometry, the kernel parameters in ``.entry`` order and the TMA tensor
maps to build from the live buffer pointers. :func:`plan_to_attrs` turns it into
the attributes of the XLA custom call ``jax_pyptx_launch``::

    jax.ffi.ffi_call(FFI_TARGET, result_shapes)(*inputs, **plan_to_attrs(plan))

Buffers are numbered inputs first, then outputs. When ``plan.workspace_bytes > 0``
the caller appends one extra uint8 OUTPUT of that many bytes (the last result):
global-mode tensor maps are written there, on the stream, by a small built-in
kernel before the user's kernel runs (no shared descriptor slot, so concurrent
streams and CUDA graphs are safe).

Attribute schema (``plan_to_attrs``; the C++ decoder is ``ffi/plan.cc``; each
value's numpy type must match exactly):

==========================  ============  ==================================================
name                        type          meaning
==========================  ============  ==================================================
abi_version                 np.int64      schema version, 1
kernel_name                 str           the ``.entry`` name
ptx                         str           full PTX text
ptx_sha256                  str           hex sha256 of ``ptx``; module cache key (with the
                                          CUcontext) and cubin cache file prefix
arch                        str           e.g. ``sm_90a``
cubin_path                  str           optional (may be ""), see module loading below
grid, block, cluster        int64[3]      launch geometry (cluster 1x1x1: no cluster attr)
smem_bytes                  np.int64      dynamic shared memory; > 48 KiB sets
                                          MAX_DYNAMIC_SHARED_SIZE_BYTES once per function
workspace_bytes             np.int64      ``LaunchPlan.workspace_bytes`` (checked in C++)
param_kind                  int64[n]      0 buffer, 1 scalar, 2 tma
param_index                 int64[n]      buffer: operand; scalar: byte offset into
                                          ``param_data``; tma: index into the tma arrays
param_size                  int64[n]      bytes in the kernel's parameter list: buffer 8,
                                          scalar len(data), tma by_value 128, tma global 8
param_data                  uint8[m]      all scalar bytes, concatenated
tma_operand                 int64[t]      operand index the tensor map covers
tma_dtype                   int64[t]      CUtensorMapDataType (see ``TENSORMAP_DTYPES``)
tma_rank                    int64[t]      1..5
tma_interleave, tma_swizzle, tma_l2_promotion, tma_oob_fill
                            int64[t]      the CUtensorMap* enum values
tma_mode                    int64[t]      0 global (u64 param = workspace address of the
                                          descriptor), 1 by_value (128-byte param)
tma_batch, tma_batch_stride int64[t]      descriptor i over base + i*batch_stride bytes
tma_global_dims             int64[sum r]  per map, innermost first (concatenated)
tma_global_strides          int64[sum r-1] bytes, dims 1..r-1, innermost first
tma_box                     int64[sum r]  box dims, innermost first
tma_element_strides         int64[sum r]  innermost first
==========================  ============  ==================================================

Module loading, once per (``ptx_sha256``, CUcontext): the first of ``cubin_path``
(when set and readable), ``<cache>/<ptx_sha256>-<arch>{.,-}*.cubin`` (the
greatest name wins; cache dir ``$JAX_PYPTX_CACHE_DIR``, default
``~/.cache/jax_pyptx``) that the driver accepts, else ``cuModuleLoadDataEx(ptx)``
(JIT; its error log goes into the error message).

Global-mode descriptors sit in the workspace in ``plan.tma`` order, 128 bytes
each (a batched map takes ``batch`` consecutive slots); ``tma_workspace_offsets``
gives each map's byte offset.

This module depends only on the standard library, NumPy and ``specialize.tma`` (where
``TmaSpec`` lives, shared with the CPU interpreter's host launch).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..specialize.tensor_maps import TENSORMAP_DTYPES, TMA_DESCRIPTOR_BYTES, TmaSpec, _ints

__all__ = [
    "FFI_TARGET", "PLAN_ABI_VERSION", "TENSORMAP_DTYPES", "TMA_DESCRIPTOR_BYTES",
    "TmaSpec", "ParamSlot", "LaunchPlan", "plan_to_attrs", "ptx_sha256",
    "tma_workspace_offsets",
]

FFI_TARGET = "jax_pyptx_launch"
PLAN_ABI_VERSION = 1
_MODES = {"global": 0, "by_value": 1}
_KINDS = {"buffer": 0, "scalar": 1, "tma": 2}


def ptx_sha256(ptx: str) -> str:
    """Hex sha256 of the PTX text (UTF-8), the plan's ``ptx_sha256``."""
    return hashlib.sha256(ptx.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ParamSlot:
    """One kernel parameter, in ``.entry`` order.

    ``kind="buffer"``: the u64 address of operand ``index``; ``"scalar"``: the
    little-endian bytes ``data`` (1, 2, 4 or 8 of them); ``"tma"``: tensor map
    ``plan.tma[index]`` (128 bytes by value, or the u64 workspace address).
    """

    kind: str
    index: int = 0
    data: bytes = b""

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"ParamSlot: kind must be buffer/scalar/tma, got {self.kind!r}")
        if self.kind == "scalar" and len(self.data) not in (1, 2, 4, 8):
            raise ValueError(f"ParamSlot: a scalar is 1, 2, 4 or 8 bytes, got {len(self.data)}")
        if self.kind != "scalar" and int(self.index) < 0:
            raise ValueError("ParamSlot: negative index")

    @classmethod
    def buffer(cls, operand: int) -> "ParamSlot":
        return cls("buffer", operand)

    @classmethod
    def tma_param(cls, tma_index: int) -> "ParamSlot":
        return cls("tma", tma_index)

    @classmethod
    def scalar(cls, value: Any, dtype: Any = None) -> "ParamSlot":
        """A scalar from a value and a NumPy dtype (or a NumPy scalar alone)."""
        arr = np.asarray(value, dtype=dtype)
        if arr.shape != ():
            raise ValueError("ParamSlot.scalar needs a scalar")
        return cls("scalar", 0, arr.astype(arr.dtype.newbyteorder("<")).tobytes())


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to launch one kernel specialization (see module doc)."""

    kernel_name: str
    ptx: str
    ptx_sha256: str
    arch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)
    smem_bytes: int = 0
    params: tuple[ParamSlot, ...] = ()
    tma: tuple[TmaSpec, ...] = ()
    cubin_path: str = ""    # added field: a cubin built from ``ptx`` (e.g. toolchain.compile's
                            # cache entry); tried first, PTX JIT if absent or rejected

    def __post_init__(self):
        for name in ("grid", "block", "cluster"):
            v = _ints(name, getattr(self, name))
            if len(v) != 3 or min(v) < 1:
                raise ValueError(f"LaunchPlan: {name} must be 3 positive ints, got {v}")
            object.__setattr__(self, name, v)
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "tma", tuple(self.tma))
        if any(g % c for g, c in zip(self.grid, self.cluster)):
            raise ValueError(f"LaunchPlan: grid {self.grid} is not a multiple of cluster {self.cluster}")
        if not 0 <= int(self.smem_bytes) < 2**32:
            raise ValueError(f"LaunchPlan: smem_bytes out of range: {self.smem_bytes}")
        for i, p in enumerate(self.params):
            if p.kind == "tma" and not 0 <= p.index < len(self.tma):
                raise ValueError(f"LaunchPlan: param {i} names tma[{p.index}], plan has {len(self.tma)}")
        if len(self.ptx_sha256) != 64:
            raise ValueError("LaunchPlan: ptx_sha256 must be the 64-hex-digit sha256 of ptx")

    @classmethod
    def from_ptx(cls, kernel_name: str, ptx: str, arch: str, **kw: Any) -> "LaunchPlan":
        """Like the constructor, computing ``ptx_sha256``."""
        return cls(kernel_name=kernel_name, ptx=ptx, ptx_sha256=ptx_sha256(ptx), arch=arch, **kw)

    @property
    def workspace_bytes(self) -> int:
        """Bytes of the extra uint8 output holding global-mode descriptors (0: none)."""
        return TMA_DESCRIPTOR_BYTES * sum(int(t.batch) for t in self.tma if t.mode == "global")

    @property
    def num_operands(self) -> int:
        """1 + the largest operand index used (the workspace not counted)."""
        idx = [p.index for p in self.params if p.kind == "buffer"] + [t.operand for t in self.tma]
        return max(idx) + 1 if idx else 0


def tma_workspace_offsets(plan: LaunchPlan) -> tuple[int | None, ...]:
    """Byte offset of each global-mode map's first descriptor in the workspace."""
    out, at = [], 0
    for t in plan.tma:
        if t.mode == "global":
            out.append(at)
            at += TMA_DESCRIPTOR_BYTES * int(t.batch)
        else:
            out.append(None)
    return tuple(out)


def plan_to_attrs(plan: LaunchPlan) -> dict[str, Any]:
    """The ``ffi_call`` keyword attributes for ``plan`` (schema in the module doc)."""
    i64 = np.int64
    kinds, index, size, data = [], [], [], bytearray()
    for p in plan.params:
        kinds.append(_KINDS[p.kind])
        if p.kind == "scalar":
            index.append(len(data))
            size.append(len(p.data))
            data += p.data
        elif p.kind == "buffer":
            index.append(int(p.index))
            size.append(8)
        else:
            index.append(int(p.index))
            size.append(plan.tma[p.index].param_bytes)
    t = plan.tma

    def col(values):
        return np.asarray(list(values), dtype=i64).reshape(-1)

    return {
        "abi_version": i64(PLAN_ABI_VERSION),
        "kernel_name": str(plan.kernel_name),
        "ptx": str(plan.ptx),
        "ptx_sha256": str(plan.ptx_sha256),
        "arch": str(plan.arch),
        "cubin_path": str(plan.cubin_path),
        "grid": col(plan.grid),
        "block": col(plan.block),
        "cluster": col(plan.cluster),
        "smem_bytes": i64(plan.smem_bytes),
        "workspace_bytes": i64(plan.workspace_bytes),
        "param_kind": col(kinds),
        "param_index": col(index),
        "param_size": col(size),
        "param_data": np.frombuffer(bytes(data), dtype=np.uint8).copy(),
        "tma_operand": col(s.operand for s in t),
        "tma_dtype": col(s.data_type for s in t),
        "tma_rank": col(s.rank for s in t),
        "tma_interleave": col(s.interleave for s in t),
        "tma_swizzle": col(s.swizzle for s in t),
        "tma_l2_promotion": col(s.l2_promotion for s in t),
        "tma_oob_fill": col(s.oob_fill for s in t),
        "tma_mode": col(_MODES[s.mode] for s in t),
        "tma_batch": col(s.batch for s in t),
        "tma_batch_stride": col(s.batch_stride for s in t),
        "tma_global_dims": col(d for s in t for d in s.global_dims),
        "tma_global_strides": col(d for s in t for d in s.global_strides),
        "tma_box": col(d for s in t for d in s.box),
        "tma_element_strides": col(d for s in t for d in s.element_strides),
    }
