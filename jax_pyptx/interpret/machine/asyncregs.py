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
The registers of one such load (``set_all``) share one tag array until one of them is set,
touched or retired apart (``tshare``).

A register group that an operation always writes whole (a wgmma accumulator) keeps its pending
values as one *tile block* (``tile_set`` / ``tile_read``): the matrix itself, ``rows`` x
``cols`` elements per warp, and one tag array shared by its registers, so that chaining
``mma_async`` on the same accumulator reads and writes the tile with no register permutation.
Per-thread register values are made from the tile (``TileLayout.regs``) only where a register
is delivered (``retire``) or looked at on its own (``pending``); every register of a block is
still tracked as itself (``tag[key]`` is the shared tag array), so hooks and reports see exactly
what they would see for registers set one by one. A register set on its own leaves its block,
which then dissolves into per-register arrays.
"""
from __future__ import annotations

import numpy as np

from ...errors import AsyncHazardError
from ..state.arith import ARITH
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
        self.rgroup = {}      # tuple of keys -> the rtag array they share (reading_all)
        self.blocks = {}      # tuple of keys -> _Block (module doc)
        self.member = {}      # key -> the tuple of keys of its block
        self.tgroup = {}      # tuple of keys -> the tag array they share (set_all, early domains)
        self.tshare = {}      # key -> the tuple of keys whose tag array it shares
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
        keys = self.member.get(key)
        if keys is not None:
            b = self.blocks[keys]
            return m, self._block_regs(b, np.asarray(idx))[:, keys.index(key)]
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

    def tile_read(self, keys, g, warps):
        """The pending tile (len(warps), rows, cols) of block ``keys`` for the whole warps
        ``warps`` that ``g`` is made of, if every thread of ``g`` has its value pending there;
        else None (read the registers: ``read_now``)."""
        b = self.blocks.get(keys)
        if b is None or np.count_nonzero(b.tag[g.idx] < 0):
            return None
        if b.dense is not None and _same(b.dense[0], warps):
            return b.dense[1]
        return b.full()[warps]

    def tile_set(self, ctx, keys, g, warps, tile, tag, d, layout):
        """Make the registers ``keys`` pending for the threads of ``g`` (the whole warps
        ``warps``) with the values ``tile`` (len(warps), rows, cols) holds in ``layout``."""
        b = self.blocks.get(keys)
        if b is None and not self.early and not any(k in self.tag for k in keys):
            b = self.blocks[keys] = _Block(layout, (self.N // 32,) + tile.shape[1:], np.full(self.N, -1, np.int64))
            for k in keys:
                self.member[k] = keys
                self.tag[k] = b.tag
        if b is None or b.layout is not layout:
            vals = layout.regs(tile, np.arange(32 * len(warps)) % 32, np.repeat(np.arange(len(warps)), 32))
            for j, k in enumerate(keys):
                self.set(ctx, k, g, vals[:, j], tag, d)
            return
        b.put(warps, tile)
        b.tag[g.idx] = tag
        self.src.update(dict.fromkeys(keys, d))
        if self.sanitize:
            ctx.rhooks.update(dict.fromkeys(keys, self.hook))

    def owner(self, keys):
        """``(True, tag)`` when the registers ``keys`` have one owner: the tag array of the block
        they make up, or None (nothing of them pending); else ``(False, None)``."""
        b = self.blocks.get(keys)
        if b is not None:
            return True, b.tag
        tag = self.tag
        if not tag or not any(k in tag for k in keys):
            return True, None
        t0 = tag.get(keys[0])
        return all(tag.get(k) is t0 for k in keys), t0

    def _block_regs(self, b, slots):
        """(len(slots), k) register values of block ``b`` at ``slots``."""
        return b.layout.regs(b.full(), slots % 32, slots // 32)

    def _warps_tile(self, b, slots):
        """Block ``b``'s tile of the whole warps the slots ``slots`` are, in order, made of;
        None when they are not whole warps."""
        w = whole_warps(slots)
        if w is None:
            return None
        if b.dense is not None and _same(b.dense[0], w):
            return b.dense[1]
        return b.full()[w]

    def _dissolve(self, keys):
        """Give every register of block ``keys`` its own arrays (one of them is set alone)."""
        b = self.blocks.pop(keys)
        live = np.nonzero(b.tag >= 0)[0]
        vals = np.zeros((self.N, len(keys)), b.layout.sdt)
        vals[live] = self._block_regs(b, live)
        for j, k in enumerate(keys):
            del self.member[k]
            self.vals[k] = vals[:, j].copy()
            self.tag[k] = b.tag.copy()

    def set(self, ctx, key, g, values, tag, d):
        """Make ``key`` pending for the threads of ``g`` with ``values`` (tag: their group)."""
        if key in self.member:
            self._dissolve(self.member[key])
        info = ctx.prog.regs[key]
        if self.early:
            hook = ctx.rhooks.pop(key, None)          # a second load into it before the wait
            ctx.write(key, g, np.asarray(values).astype(info.sdt, copy=False) if info.bits != 1 else values)
            if not self.sanitize:
                return
            if hook is not None:
                ctx.rhooks[key] = hook
            if key in self.tshare:
                self._unshare(self.tshare[key])
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

    def set_all(self, ctx, keys, g, values, tag, d):
        """``set`` of each register of the tuple ``keys`` to ``values`` (n, len(keys)) in an
        early domain: registers loaded together share one tag array while nothing sets or
        retires them apart (``tshare``)."""
        if not (self.early and self.sanitize):
            for j, k in enumerate(keys):
                self.set(ctx, k, g, values[:, j], tag, d)
            return
        tg, rh = self.tag, ctx.rhooks
        t = self.tgroup.get(keys)
        if t is None or any(tg.get(k) is not t for k in keys):
            if any(k in tg for k in keys):      # some pending apart: one by one
                for j, k in enumerate(keys):
                    self.set(ctx, k, g, values[:, j], tag, d)
                return
            t = self.tgroup[keys] = np.full(self.N, -1, np.int64)
            tg.update(dict.fromkeys(keys, t))
            self.tshare.update(dict.fromkeys(keys, keys))
        regs = ctx.prog.regs
        for j, k in enumerate(keys):
            rh.pop(k, None)
            info = regs[k]
            v = values[:, j]
            ctx.write(k, g, np.asarray(v).astype(info.sdt, copy=False) if info.bits != 1 else v)
        t[g.idx] = tag
        self.src.update(dict.fromkeys(keys, d))
        rh.update(dict.fromkeys(keys, self.hook))

    def _unshare(self, keys):
        """The registers ``keys`` stop sharing their tag array: each gets its own copy."""
        t = self.tgroup.pop(keys)
        for k in keys:
            del self.tshare[k]
            if self.tag.get(k) is t:
                self.tag[k] = t.copy()

    def reading(self, ctx, key, g, tag, d):
        """An in-flight operation (tag) reads ``key``: writing it before retirement is a hazard."""
        if not self.sanitize:
            return
        t = self.rtag.get(key)
        t = self.rtag[key] = np.full(self.N, -1, np.int64) if t is None else t.copy()   # may be shared
        t[g.idx] = tag
        self.rsrc[key] = d
        ctx.rhooks[key] = self.hook

    def reading_all(self, ctx, keys, g, tag, d):
        """``reading`` of each register of the tuple ``keys`` (an operand's registers, read
        together each time): they share one tag array while nothing reads them apart."""
        if not self.sanitize:
            return
        rt = self.rtag
        t = self.rgroup.get(keys)
        if t is None or any(rt.get(k) is not t for k in keys):
            if any(k in rt for k in keys):
                for k in keys:
                    self.reading(ctx, k, g, tag, d)
                return
            t = self.rgroup[keys] = np.full(self.N, -1, np.int64)
            rt.update(dict.fromkeys(keys, t))
        t[g.idx] = tag
        self.rsrc.update(dict.fromkeys(keys, d))
        ctx.rhooks.update(dict.fromkeys(keys, self.hook))

    # ------------------------------------------------------------------ retire
    def retire(self, ctx, idx, limit=None):
        """Deliver every pending value of the slots ``idx`` whose tag is <= ``limit`` (all when
        None; else one limit per slot) into its register."""
        lim = None if limit is None else np.broadcast_to(np.asarray(limit, np.int64), idx.shape)

        def due(t):
            tt = t[idx]
            return tt >= 0 if lim is None else (tt >= 0) & (tt <= lim)
        due.idx, due.lim = idx, lim

        for keys, b in list(self.blocks.items()):
            m = due(b.tag)
            if not m.any():
                continue
            sel = idx[m]
            t = self._warps_tile(b, sel)
            tile = None if t is None else TileRows(b.layout, t)
            rows = np.ascontiguousarray(self._block_regs(b, sel).T) if t is None else None    # (k, len(sel))
            for key in keys:
                ctx.rhooks.pop(key, None)
            ctx.write_rows(keys, Group(sel, 0, self.N), rows, tile)
            b.tag[sel] = -1
            if not (b.tag >= 0).any():
                del self.blocks[keys]
                for key in keys:
                    del self.member[key], self.tag[key]
                    self.src.pop(key, None)
        self._retire_regs(ctx, due)
        self._retire_reads(due)
        hook, rh = self.hook, ctx.rhooks
        for key in [k for k, h in rh.items() if h == hook and k not in self.tag and k not in self.rtag]:
            del rh[key]
        if self.sanitize:
            rh.update(dict.fromkeys(self.tag, hook))
            rh.update(dict.fromkeys(self.rtag, hook))

    def _retire_regs(self, ctx, due):
        """Deliver the values ``due`` selects of the registers outside blocks (a tag array
        shared by registers, ``set_all``, looked at once)."""
        idx = due.idx
        sels = {}                                   # id(tag array) -> (array, slots due or None)
        for key in [k for k in self.tag if k not in self.member]:
            t = self.tag[key]
            got = sels.get(id(t))
            if got is None:
                m = due(t)
                got = sels[id(t)] = (t, idx[m] if m.any() else None)
            sel = got[1]
            if sel is None:
                continue
            ctx.rhooks.pop(key, None)
            if not self.early:
                ctx.write(key, Group(sel, 0, self.N), self.vals[key][sel])
        gone = set()
        for i, (t, sel) in sels.items():
            if sel is not None:
                t[sel] = -1
                if not (t >= 0).any():
                    gone.add(i)
        if not gone:
            return
        for key in [k for k in self.tag if k not in self.member and id(self.tag[k]) in gone]:
            del self.tag[key]
            self.vals.pop(key, None)
            self.src.pop(key, None)
            keys = self.tshare.get(key)
            if keys is not None and self.tgroup.get(keys) is not None:
                del self.tgroup[keys]
            self.tshare.pop(key, None)

    def _retire_reads(self, due):
        """Clear the read tags ``due`` selects (a tag array shared by registers, once)."""
        cleared = {}
        whole = None
        for key, t in list(self.rtag.items()):
            if whole is None:       # the limit of every slot (-1: none due there), once
                whole = np.full(self.N, -1, np.int64)
                whole[due.idx] = np.iinfo(np.int64).max if due.lim is None else due.lim
            gone = cleared.get(id(t))
            if gone is None:
                m = (t >= 0) & (t <= whole)         # (due over every slot: no gather)
                gone = False
                if np.count_nonzero(m):
                    t[m] = -1
                    gone = not np.count_nonzero(t >= 0)
                cleared[id(t)] = gone
            if gone:
                del self.rtag[key]
                self.rsrc.pop(key, None)
        if self.rgroup:
            self.rgroup = {k: t for k, t in self.rgroup.items() if self.rtag.get(k[0]) is t}

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
        if key in self.tshare:
            self._unshare(self.tshare[key])
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


class _Block:
    """A register group's pending tile: ``dense`` = (warps, tile) while only those warps are
    pending (the tile an operation made, kept as it is), else ``tile`` (every warp, ``full``)."""
    __slots__ = ("layout", "shape", "tile", "dense", "tag")

    def __init__(self, layout, shape, tag):
        self.layout, self.shape, self.tag = layout, shape, tag
        self.tile = self.dense = None

    def full(self):
        """The tile of every warp (made from ``dense`` once another group's warps join)."""
        if self.dense is not None:
            w, t = self.dense
            if self.tile is None:
                self.tile = np.zeros(self.shape, t.dtype)
            self.tile[w] = t
            self.dense = None
        return self.tile

    def put(self, warps, tile):
        """Warps ``warps`` hold ``tile`` (kept by reference while no other warp is pending)."""
        d = self.dense
        if (d is not None and _same(d[0], warps)) or (d is None and self.tile is None) or \
                not (self.tag >= 0).any():
            self.dense = (warps, tile)
        else:
            self.full()[warps] = tile


def _same(a, b) -> bool:
    return a is b or (len(a) == len(b) and not np.count_nonzero(a != b))


def whole_warps(slots):
    """The warps (in order) that the thread slots ``slots`` are made of, whole and in order
    (slot s: lane s % 32 of warp s // 32); None if they are not."""
    s = np.asarray(slots)
    if len(s) % 32:
        return None
    w = s[::32]
    if (w % 32).any() or (s.reshape(-1, 32) - w[:, None] != np.arange(32)).any():
        return None
    return w // 32


class TileLayout:
    """How a register group holds a tile of ``rows`` x ``cols`` elements per warp: lane ``l``'s
    register ``j`` holds element ``e`` at (``row[l, j, e]``, ``col[l, j, e]``); ``encode``
    turns (..., per) element values into register bits of storage type ``sdt`` (None: one
    element per register, its bits as they are)."""

    def __init__(self, row, col, encode, sdt):
        self.row, self.col = np.asarray(row, np.int64), np.asarray(col, np.int64)
        self.raw = encode is None and self.row.shape[2] == 1 and sdt == np.uint32
        self.encode = _first if encode is None else encode
        self.sdt = sdt
        self._flat = {}       # tile columns -> flat element index per (register, lane, element)

    def lanes(self, cols):
        """(k, 32) int64: the flat element of a warp's tile (``cols`` columns) that lane l's
        register j holds, for the native core (``state.arith``); None where a register is not
        one 32-bit element as it is (``raw``) or the core is not built."""
        if not self.raw or ARITH is None:
            return None
        return self._flat_index(cols)[:, :, 0]

    def _flat_index(self, C):
        f = self._flat.get(C)
        if f is None:                  # (k, 32, per): element of lane l's register j in a warp's tile
            f = self._flat[C] = np.ascontiguousarray((self.row * C + self.col).transpose(1, 0, 2))
        return f

    def rows(self, tile):
        """(k, 32 * warps) register bits, register by register, of every lane of the warps of
        ``tile`` (warps, rows, cols): one gather."""
        nw, R, C = tile.shape
        f = self._flat_index(C)
        x = self.encode(np.take(tile.reshape(nw, R * C), f, axis=1))      # (warps, k, 32)
        return np.ascontiguousarray(x.transpose(1, 0, 2)).reshape(len(f), -1)

    def regs(self, tile, lanes, warps):
        """(n, k) register bits of the threads (lane ``lanes[i]`` of warp ``warps[i]``) from
        ``tile`` (warps, rows, cols)."""
        w = np.asarray(warps)[:, None, None]
        lanes = np.asarray(lanes)
        return self.encode(tile[w, self.row[lanes], self.col[lanes]])


class TileRows:
    """A register block's values for whole warps as its ``tile`` (warps, rows, cols) in
    ``layout``: ``Context.write_rows`` scatters them into the registers natively (``into``),
    or takes them register by register (``rows``)."""

    __slots__ = ("layout", "tile", "dtype")

    def __init__(self, layout, tile):
        self.layout, self.tile, self.dtype = layout, tile, np.dtype(layout.sdt)

    def rows(self):
        """(k, 32 * warps) register bits, register by register (``TileLayout.rows``)."""
        return self.layout.rows(self.tile)

    def flat(self):
        """``(tile, lanes)`` as the native core takes them: the tile (warps, rows * cols),
        C order, and ``TileLayout.lanes`` (register j of lane l: ``tile[w, lanes[j, l]]``);
        None where the layout or the dtype does not allow it."""
        nw, R, C = self.tile.shape
        lanes = self.layout.lanes(C)
        if lanes is None or self.dtype != np.uint32:
            return None
        return np.ascontiguousarray(self.tile).reshape(nw, R * C), lanes

    def into(self, new, slots) -> bool:
        """``new[j][slots] = register j's bits`` (``new``: a list of the registers' arrays) in
        one native pass; False (nothing written) where the layout or the arrays do not allow
        it."""
        got = self.flat()
        if got is None:
            return False
        try:
            ARITH.tile_to_regs(got[0], got[1], np.ascontiguousarray(slots, np.int64), new)
        except (TypeError, ValueError):     # (its checks come before it writes anything)
            return False
        return True


def _first(x):
    return x[..., 0]


def _name(key):
    return key.split("::")[-1].split("#")[0]


def _where(src):
    if src is None:
        return ""
    loc = getattr(src.ins, "loc", None)
    return f" ({loc}: {src.text})" if loc is not None else f" ({src.text}, {src.where()})"
