"""Pointer provenance (part of the sanitizer): the buffer every global address came from.

Bounds checks alone accept an address computed from parameter ``X`` that lands inside
parameter ``W``'s buffer: it is inside *an* allocation. So, under the sanitizer, each 64-bit
register carries, per thread, the allocation its value was derived from (``ctx.ptag``: register
key -> int32 per slot, 0 for none, else the global allocation's index + 1):

* a 64-bit ``ld.param`` (a kernel's pointer parameter, or a device function's) tags its
  destination with the global allocation that contains the loaded value;
* an instruction that moves or offsets a pointer (``add``, ``sub``, ``mad``, ``mov``, ``cvta``,
  ``cvt``, ``and``, ``or``, ``selp``, ``min``, ``max``) gives its 64-bit destination the tag of
  its tagged sources; two different tags (``ptrA - ptrB``, ``selp`` between two buffers) give
  the *mixed* tag, which stays mixed through later arithmetic (``x + (w - x)`` is never checked
  against ``x``), so nothing is ever checked against the wrong buffer; any other instruction,
  and every destination narrower than 64 bits, clears the tag;
* ``ld`` / ``st`` / ``atom`` / ``red`` / ``cp.async`` (global or generic) through a tagged
  register check that every accessed byte lies in that allocation. An address in another
  allocation is a ``ProvenanceError`` naming both buffers; one outside every allocation is left
  to the bounds check, whose report names the nearest buffer.

``jax.vmap`` batched on the grid puts every batch item of a tensor into one buffer. The launch
knows which item each CTA works on (``Allocation.items``: item bytes and the item per
``%ctaid.z``), so an access through a pointer of that tensor must also stay inside the CTA's
item: one element past item 0 is not item 1's first.

Pointers that went through memory (a table of pointers in global memory) carry no tag and are
only bounds-checked. Without the sanitizer no tag is ever made, so the hooks in
``machine.Context.read`` / ``write`` cost one empty-dict test.
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Addr, Reg

#: opcodes whose 64-bit destination keeps the provenance of its pointer source
PTR_OPS = frozenset({"add", "sub", "mad", "mov", "cvta", "cvt", "and", "or", "selp", "min", "max"})


def addr_key(prog, op, scope):
    """The register key of the base of address operand ``op``, or None (a symbol, a constant)."""
    if not isinstance(op, Addr) or not isinstance(op.base, Reg):
        return None
    name = op.base.name
    if not prog.has_reg(name, scope):
        return None
    return prog.reg(name, scope).key


def _ptr_pcs(prog) -> frozenset:
    pcs = prog.ptr_pcs
    if pcs is None:
        pcs = prog.ptr_pcs = frozenset(d.pc for d in prog.code if d.ins.opcode in PTR_OPS)
    return pcs


class ProvenanceMixin:
    """Pointer tags for ``scheduler.context.Context`` (see the module doc)."""

    def _init_provenance(self):
        self.ptag = {}            # register key -> int32 (N,): allocation index + 1, 0: none,
        #                           -1: mixed (derived from two buffers: never checked); a
        #                           read-only array is shared (_pt_uniform), never written in place
        self._pt_d = None         # Decoded whose tagged sources are in _pt (reset per instruction)
        self._pt_g = None         # the group they were read for
        self._pt = None           # int32 (g.n,): the sources' tag, combined
        self._pt_pcs = _ptr_pcs(self.prog)

    def _pt_uniform(self, tag):
        """The read-only tag array of every thread tagged ``tag``: shared by the registers that
        hold it and the batches of the launch (``LaunchState.pt_one``), copied before a partial
        write (``_pt_own``)."""
        one = self.launch.pt_one
        a = one.get((self.N, tag))
        if a is None:
            a = one[self.N, tag] = np.full(self.N, tag, np.int32)
            a.flags.writeable = False
        return a

    def _pt_own(self, key):
        """Register ``key``'s tag array, writable (a new zero one, or a shared one copied)."""
        a = self.ptag.get(key)
        if a is None:
            a = self.ptag[key] = np.zeros(self.N, np.int32)
        elif not a.flags.writeable:
            a = self.ptag[key] = a.copy()
        return a

    def _pt_read(self, key, g):
        """A tagged register is read: remember its tag if the instruction propagates it."""
        d = self.cur
        if d is None or d.pc not in self._pt_pcs:
            return
        t = self.ptag[key]
        tg = t if g.full else t[g.idx]
        if self._pt_d is not d or self._pt_g is not g:
            self._pt_d, self._pt_g, self._pt = d, g, tg
            return
        cur = self._pt
        self._pt = np.where(cur == 0, tg, np.where((tg == 0) | (tg == cur), cur, -1))

    def _pt_write(self, key, g):
        """Register ``key`` is written for ``g``: it takes the sources' tag or loses its own."""
        if self._pt_d is self.cur and self._pt_g is g and self.prog.regs[key].bits == 64:
            tg = self._pt
            if g.full and not tg.flags.writeable:     # one tag for every thread: shared
                self.ptag[key] = tg
                return
            if tg.any():
                if g.full:
                    self.ptag[key] = tg.copy()
                    return
                self._pt_own(key)[g.idx] = tg
                return
        if key in self.ptag:
            if g.full:
                del self.ptag[key]
            else:
                self._pt_own(key)[g.idx] = 0

    def tag_loaded(self, key, g, values, same=False):
        """``ld.param`` loaded 64-bit ``values`` into ``key``: tag each with the global allocation
        that contains it. ``same``: every thread loaded one address (so one value)."""
        gs = self.mem.gspace
        if not gs.allocs:
            return
        v = np.asarray(values).view(np.uint64)
        v0 = int(v[0])
        if same or (v == v0).all():   # a kernel parameter: one value for every thread
            tag = self.launch.pt_one.get(v0)          # the launch's allocations never move
            if tag is None:
                al = gs.find(v0)
                tag = self.launch.pt_one[v0] = 0 if al is None else al.index + 1
            if not tag:
                return
            if g.full:
                self.ptag[key] = self._pt_uniform(tag)
                return
            self._pt_own(key)[g.idx] = tag
            return
        k = np.searchsorted(gs._bases, v, "right").astype(np.int64) - 1
        kk = np.maximum(k, 0)
        ok = (k >= 0) & (v < gs._ends[kk])
        if not ok.any():
            return
        self._pt_own(key)[g.idx] = np.where(ok, kk + 1, 0)


def check(ctx, g, key, addrs, nbytes, write=False, span=None):
    """Every access of ``nbytes`` at ``addrs`` through register ``key`` (for the threads of
    ``g``) lies in the allocation (and vmap item) its pointer came from (``span``: a
    ``memory.Span`` of ``addrs``, whose bounds it reuses)."""
    t = ctx.ptag.get(key)
    if t is None:
        return
    one = not t.flags.writeable          # one tag for every thread (ProvenanceMixin._pt_uniform)
    tg = t if g.full or one else t[g.idx]
    gs = ctx.mem.gspace
    t0 = int(tg[0])
    if t0 > 0 and (gs.item_mask is None or not gs.item_mask[t0 - 1]) and (one or (tg == t0).all()):
        # one buffer for every thread (the common case): two reductions
        al = gs.allocs[t0 - 1]
        if write:
            al.last_store = ctx.cur
        lo, hi = span.bounds() if span is not None else (int(addrs.min()), int(addrs.max()))
        if lo >= al.base and hi + (nbytes if type(nbytes) is int else int(np.max(nbytes))) <= al.end:
            return
    if one and not g.full:
        tg = t[g.idx]
    sel = tg > 0
    if not sel.any():
        return
    k = np.where(sel, tg - 1, 0)
    lo = gs._bases[k]
    hi = gs._ends[k]
    if gs.item_mask is not None:
        lo, hi = _item_bounds(ctx, g, gs, k, sel, lo, hi)
    a = np.asarray(addrs, np.uint64)
    bad = sel & ((a < lo) | (a + np.asarray(nbytes, np.uint64) > hi))
    if write:
        j = int(np.argmax(sel))
        gs.allocs[int(k[j])].last_store = ctx.cur
    if not bad.any():
        return
    from ..state.memory import MemoryFault

    j = int(np.argmax(bad))
    src = gs.allocs[int(k[j])]
    adr = int(a[j])
    n = int(np.broadcast_to(nbytes, a.shape)[j])
    dst = gs.find(adr)
    if src.items is not None and dst is src:
        isz, item_of_z = src.items
        z = int(ctx.special("%ctaid.z")[g.idx[j]])
        own = int(item_of_z[z])
        start = src.base + own * isz
        got = (adr - src.base) // isz
        if got == own and own + 1 >= src.size // isz:
            return               # past the end of the buffer: the bounds check reports it
        if got == own:
            where = (f"the {n}-byte access at address {adr:#x} runs {adr + n - start - isz} bytes past "
                     f"the end of its batch item {own} of {src.describe()}, into item {own + 1}")
        else:
            where = (f"address {adr:#x} is in batch item {got} of {src.describe()}, "
                     f"{_past(adr, n, start, isz)} of batch item {own}")
        raise MemoryFault("provenance", j, adr,
                          f"{where}; this CTA (%ctaid.z = {z}) works on item {own} ({isz} bytes at "
                          f"{start:#x}): under jax.vmap each batch item is its own buffer", "global")
    if dst is None or dst is src:
        return                   # outside every allocation: the bounds check reports it
    raise MemoryFault("provenance", j, adr,
                      f"address {adr:#x} was computed from the pointer to {src.describe()} but lands "
                      f"{_past(adr, n, src.base, src.size)} of it, inside {dst.describe()} "
                      f"(byte {adr - dst.base}): an access through the wrong pointer, or an index past "
                      f"the end of its buffer", "global")


def _past(adr, nbytes, base, size) -> str:
    if adr < base:
        return f"{base - adr} bytes before the start"
    return f"{adr + nbytes - (base + size)} bytes past the end"


def _item_bounds(ctx, g, gs, k, sel, lo, hi):
    """Narrow ``[lo, hi)`` to the CTA's item for lanes whose allocation is split into vmap items."""
    has = gs.item_mask[k] & sel
    if not has.any():
        return lo, hi
    lo, hi = lo.copy(), hi.copy()
    z = ctx.special("%ctaid.z")
    zs = z if g.full else z[g.idx]
    for x in np.unique(k[has]):
        al = gs.allocs[int(x)]
        isz, item_of_z = al.items
        m = has & (k == x)
        start = np.uint64(al.base) + item_of_z[zs[m].astype(np.int64)].astype(np.uint64) * np.uint64(isz)
        lo[m] = start
        hi[m] = start + np.uint64(isz)
    return lo, hi
