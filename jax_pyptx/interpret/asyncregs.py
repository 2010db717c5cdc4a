"""Registers written by asynchronous instructions: ``wgmma.mma_async`` accumulators (defined
when the ``wgmma.wait_group`` that retires their group completes) and ``tcgen05.ld``
destinations (defined at ``tcgen05.wait::ld`` by the ISA's letter).

An ``AsyncWrites`` domain keeps, per register and thread slot, the value the operation will
deliver and the tag of the group it belongs to; ``retire`` writes the values of every group up
to a tag into the registers. Until then the register keeps its old value, and with the sanitizer
on, any other instruction that reads or writes it is reported (``AsyncHazardError``) with both
the offending instruction and the asynchronous one. Registers an in-flight operation only
reads (wgmma's A fragment) may be read but not written.

An ``early`` domain (``tcgen05.ld``) delivers its values when the instruction issues, as the
hardware's register scoreboard does: a later instruction that touches the register waits for
the load, so reading it before ``tcgen05.wait::ld`` (LLVM schedules Triton's Blackwell code this
way) gives the loaded values. The sanitizer still tracks the registers until the wait, and a
touch before it is a ``SanitizerWarning`` (``AsyncHazardError`` under ``sanitize="strict"``).
"""
from __future__ import annotations

import numpy as np

from ..errors import AsyncHazardError
from .group import Group


class AsyncWrites:
    """One kind of asynchronous register writer (``name``) retired by ``waiter``."""

    def __init__(self, ctx, name: str, waiter: str, early: bool = False):
        self.name, self.waiter = name, waiter
        self.early = early    # values delivered at issue; an early touch warns (module doc)
        self.N = ctx.N
        self.vals = {}        # key -> storage array (N,) of pending values
        self.tag = {}         # key -> int64 (N,): group tag, -1 = nothing pending
        self.rtag = {}        # key -> int64 (N,): read by an in-flight operation (write hazard)
        self.src = {}         # key -> Decoded of the last instruction that made it pending
        self.rsrc = {}        # key -> Decoded of the last in-flight instruction reading it
        self.sanitize = ctx.sanitize

    # ------------------------------------------------------------------ issue
    def pending(self, key, idx):
        """(mask over idx of slots with a pending value, the pending values at idx) or None."""
        t = self.tag.get(key)
        if t is None:
            return None
        m = t[idx] >= 0
        if not m.any():
            return None
        return m, self.vals[key][idx]

    def read_now(self, ctx, key, g):
        """The register's value for ``g`` as the next asynchronous operation in this domain sees
        it: the pending value where one is in flight (wgmma accumulator chaining), else the
        register itself."""
        p = self.pending(key, g.idx)
        hook = ctx.rhooks.pop(key, None)
        try:
            if p is not None and p[0].all():
                return p[1]
            cur = ctx.read(key, g)
            if p is None:
                return cur
            return np.where(p[0], p[1], cur)
        finally:
            if hook is not None:
                ctx.rhooks[key] = hook

    def set(self, ctx, key, g, values, tag, d):
        """Make ``key`` pending for the threads of ``g`` with ``values`` (tag: their group)."""
        info = ctx.prog.regs[key]
        if self.early:
            hook = ctx.rhooks.pop(key, None)          # a second load into it before the wait
            ctx.write(key, g, np.asarray(values).astype(info.sdt, copy=False) if info.bits != 1 else values)
            if not self.sanitize:
                return
            if hook is not None:
                ctx.rhooks[key] = hook
            t = self.tag.get(key)
            if t is None:
                t = self.tag[key] = np.full(self.N, -1, np.int64)
            t[g.idx] = tag
            self.src[key] = d
            ctx.rhooks[key] = self.hook
            return
        v = self.vals.get(key)
        if v is None:
            v = self.vals[key] = np.zeros(self.N, info.sdt)
            self.tag[key] = np.full(self.N, -1, np.int64)
        v[g.idx] = np.asarray(values).astype(info.sdt, copy=False) if info.bits != 1 else values
        self.tag[key][g.idx] = tag
        self.src[key] = d
        if self.sanitize:
            ctx.rhooks[key] = self.hook

    def reading(self, ctx, key, g, tag, d):
        """An in-flight operation (tag) reads ``key``: writing it before retirement is a hazard."""
        if not self.sanitize:
            return
        t = self.rtag.get(key)
        if t is None:
            t = self.rtag[key] = np.full(self.N, -1, np.int64)
        t[g.idx] = tag
        self.rsrc[key] = d
        ctx.rhooks[key] = self.hook

    # ------------------------------------------------------------------ retire
    def retire(self, ctx, idx, limit=None):
        """Deliver every pending value of the slots ``idx`` whose tag is <= ``limit`` (all when
        None; else one limit per slot) into its register."""
        lim = None if limit is None else np.broadcast_to(np.asarray(limit, np.int64), idx.shape)

        def due(t):
            tt = t[idx]
            return tt >= 0 if lim is None else (tt >= 0) & (tt <= lim)

        for key in list(self.tag):
            t = self.tag[key]
            m = due(t)
            if not m.any():
                continue
            sel = idx[m]
            ctx.rhooks.pop(key, None)
            if not self.early:
                ctx.write(key, Group(sel, 0, self.N), self.vals[key][sel])
            t[sel] = -1
            if not (t >= 0).any():
                del self.tag[key]
                self.vals.pop(key, None)
                self.src.pop(key, None)
        for key in list(self.rtag):
            t = self.rtag[key]
            m = due(t)
            if m.any():
                t[idx[m]] = -1
                if not (t >= 0).any():
                    del self.rtag[key]
                    self.rsrc.pop(key, None)
        for key in list(ctx.rhooks):
            if ctx.rhooks[key] == self.hook and key not in self.tag and key not in self.rtag:
                del ctx.rhooks[key]
        if self.sanitize:
            for key in list(self.tag) + list(self.rtag):
                ctx.rhooks[key] = self.hook

    def busy(self) -> bool:
        """Whether any value is still in flight."""
        return bool(self.tag)

    # ------------------------------------------------------------------ sanitizer
    def hook(self, ctx, key, g, write):
        t = self.tag.get(key)
        if t is not None:
            busy = t[g.idx] >= 0
            if busy.any():
                if self.early:
                    self._early(ctx, key, g, busy, write)
                    return
                self._report(ctx, key, g, int(np.argmax(busy)), "writes" if write else "reads", "writes")
        if write:
            r = self.rtag.get(key)
            if r is not None:
                rb = r[g.idx] >= 0
                if rb.any():
                    self._report(ctx, key, g, int(np.argmax(rb)), "writes", "reads")

    def _early(self, ctx, key, g, busy, write):
        """An instruction touches a register of an ``early`` domain before its wait: the hardware
        gives the delivered value (a warning); the register stops being tracked for those
        threads, so it is reported once."""
        src = self.src.get(key)
        ctx.warn(AsyncHazardError,
                 f"this instruction {'writes' if write else 'reads'} register {_name(key)} before {self.waiter} "
                 f"retires the {self.name}{_where(src)} that writes it (the ISA requires the wait; the "
                 f"hardware's scoreboard gives the loaded value, so the run goes on with it)",
                 g, int(np.argmax(busy)))
        t = self.tag[key]
        t[g.idx[busy]] = -1
        if not (t >= 0).any():
            del self.tag[key]
            self.src.pop(key, None)
            if key not in self.rtag:
                ctx.rhooks.pop(key, None)

    def _report(self, ctx, key, g, lane, verb, owner_verb):
        src = (self.src if owner_verb == "writes" else self.rsrc).get(key)
        raise ctx.error(
            AsyncHazardError,
            f"this instruction {verb} register {_name(key)} while the asynchronous {self.name}{_where(src)} that "
            f"{owner_verb} it is in flight; {self.waiter} must retire it first", g, lane)


def _name(key):
    return key.split("::")[-1].split("#")[0]


def _where(src):
    if src is None:
        return ""
    loc = getattr(src.ins, "loc", None)
    return f" ({loc}: {src.text})" if loc is not None else f" ({src.text}, {src.where()})"
