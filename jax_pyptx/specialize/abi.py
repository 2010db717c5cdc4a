"""The parameter ABI of a specialization: how each kernel parameter reaches the kernel.

* a tensor is a plain pointer (``.param .u64``, ``cvta.to.global`` once per trace), offset
  to its batch item when the ABI is *batched on the grid*: the grid's z is the linear batch
  index over ``batch`` (outermost first) and each tensor carries the levels in its mask;
* a runtime scalar is passed by value (``.param .<type>``), or *by pointer* (``.param .u64``
  holding its device address, loaded once in the prologue) when named in ``scalar_ptrs``;
* a global-mode TMA descriptor of a batched tensor is one 128-byte descriptor per batch item.

A :class:`ParamAbi` is hashable: the trace cache key is (template parameters, shape
variables, ABI). :meth:`ParamAbi.binder` gives the per-trace object that declares the
parameters and emits the prologue (``X.ptr()`` and ``X.tma_desc()`` end up there).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dsl import tensor_access as ta
from ..dsl.context import user_loc
from ..dsl.ptx.params import param_value
from ..ir.nodes import Param
from ..types import u64

__all__ = ["ParamAbi", "PLAIN", "TraceParams"]


@dataclass(frozen=True)
class ParamAbi:
    """How parameters are passed: batch on the grid (``batch``, ``masks``) and runtime
    scalars by device pointer (``scalar_ptrs``). ``ParamAbi()`` is the plain ABI."""

    batch: tuple = ()          # leading batch sizes, outermost first
    masks: tuple = ()          # per tensor (inputs then outputs): a bool per batch level
    scalar_ptrs: tuple = ()    # names of runtime scalars passed by device pointer

    @classmethod
    def make(cls, batch=(), masks=(), scalar_ptrs=()) -> "ParamAbi":
        """Normalized (ints, bool tuples, a tuple of names)."""
        batch = tuple(int(s) for s in batch)
        masks = tuple(tuple(bool(b) for b in m) for m in masks) if batch else ()
        return cls(batch, masks, tuple(scalar_ptrs))

    @property
    def plain(self) -> bool:
        return not self.batch and not self.scalar_ptrs

    @property
    def batch_size(self) -> int:
        return math.prod(self.batch) if self.batch else 1

    def mask(self, tensor_index: int) -> tuple:
        return self.masks[tensor_index] if self.batch else ()

    def launch_grid(self, grid: tuple) -> tuple:
        """The grid of one launch for every batch item (the batch on z)."""
        if self.batch_size > 1:
            return (grid[0], grid[1], grid[2] * self.batch_size)
        return tuple(grid)

    def scalar_param(self, name: str, t) -> tuple:
        """``(Param, kind)`` of runtime scalar ``name`` of PTX type ``t``."""
        if name in self.scalar_ptrs:
            return Param(name, u64), "scalar_ptr"
        return Param(name, t), "scalar"

    def binder(self, tr) -> "TraceParams":
        return TraceParams(self, tr)


PLAIN = ParamAbi()


class TraceParams:
    """The ABI inside one trace: emits the prologue loads and remembers which instructions
    are its own (so a scan of the kernel can tell them from the user's direct reads)."""

    def __init__(self, abi: ParamAbi, tr):
        self.abi, self.tr = abi, tr
        self.own_loads: set = set()     # id() of the ld.param instructions emitted here
        self._ptrs: dict = {}            # tensor name -> register
        self._z = None                   # %ctaid.z, read once

    def _batch_z(self, loc):
        if self._z is None:
            self._z = ta.ctaid_z(self.tr, loc)
        return self._z

    # -- runtime scalars (loaded before the kernel body runs)
    def scalar(self, name: str, t):
        """The register holding runtime scalar ``name``."""
        if name in self.abi.scalar_ptrs:
            v, ld = ta.scalar_by_pointer(self.tr, name, t)
        else:
            v = param_value(name)
            ld = self.tr.prologue[-1]
        self.own_loads.add(id(ld))
        return v

    # -- tensors (loaded on first use)
    def ptr(self, spec):
        tr = ta.check_owner(spec, "ptr")
        got = self._ptrs.get(spec.name)
        if got is None:
            loc = user_loc(3)
            got, ld = ta.global_pointer(tr, spec.name, loc)
            self.own_loads.add(id(ld))
            mask = self.abi.mask(spec.index)
            if any(mask):
                got = ta.add_batch_offset(tr, got, self._batch_z(loc), self.abi.batch, mask,
                                          spec.nbytes, loc)
            self._ptrs[spec.name] = got
        return got

    def tma_desc(self, spec, box=None, swizzle: int | None = None, **kw):
        from ..dsl import context

        tr = context.current(f"{spec.name}.tma_desc()")
        loc = user_loc(3)
        r, handle, cached = ta.declare_tma_desc(tr, spec, box, swizzle, loc=loc, **kw)
        if cached:
            return r
        if handle.mode == "global" and any(self.abi.mask(spec.index)):
            # one 128-byte descriptor per batch item, in order; the runtime broadcasts a TMA
            # tensor to every batch level first
            batch = self.abi.batch
            r = ta.add_batch_offset(tr, r, self._batch_z(loc), batch, (True,) * len(batch),
                                    128, loc)
        tr.tma_regs[handle.param] = r
        return r
