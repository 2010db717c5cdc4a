"""Blackwell Tensor Memory instructions (tcgen05): ``alloc`` / ``dealloc`` /
``relinquish_alloc_permit``, ``ld`` / ``st`` in every shape and count with
``.pack::16b`` / ``.unpack::16b``, ``wait::ld`` / ``wait::st``, ``cp`` (shared memory -> TMEM),
``shift``, and ``commit`` (an mbarrier arrival once the thread's earlier tcgen05 operations are
done, optionally multicast to the CTAs of a cluster). ``tcgen05.mma`` is in
``ops.tcgen05_mma``.

Execution model: ``mma``, ``cp``, ``shift`` and ``st`` take effect when issued (their
asynchronous completion is then trivially before any ``commit`` / ``wait::st``); ``ld`` results
are delivered to the registers when it issues, as the hardware's register scoreboard does, and
the sanitizer tracks them until ``tcgen05.wait::ld`` (``asyncregs``): a register touched between
the two is a ``SanitizerWarning`` (the ISA's letter asks for the wait; Triton's Blackwell code
reads before it and runs right), an ``AsyncHazardError`` under ``sanitize="strict"``. Warp w of a CTA may only reach TMEM lanes 32*(w%4) ..
32*(w%4)+31 with ``ld`` / ``st`` (PTX ISA "Access restrictions").

Data-path facts the ISA gives only as figures follow CUTLASS's TMEM copy traits (which lane and
column each register of ``ld`` / ``st`` holds, in ``isa.fragments.tcgen05_ld_fragment``).
``alloc`` / ``dealloc`` with ``.cta_group::2`` are executed by a warp of each CTA of the pair;
each allocates in its own CTA's Tensor Memory. ``cp`` reads its source as a K-major canonical
operand (rows = lanes, 16-byte chunks); the decompressing forms (``.b8x16.b6x16_p32`` /
``.b4x16_p64``) are not supported.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError, TensorMemoryError
from ...ir.nodes import Imm
from ...isa.fragments import TMEM_COLUMNS, tcgen05_lanes, tcgen05_ld_fragment
from ...types import b32, b64, u16, u32
from ..state import memory as M
from . import smem_matrix as SM
from ..machine.asyncregs import AsyncWrites
from ..machine.group import Group
from .load_store import address_getter, space_of
from ..state.operands import items, parse_int, reader
from ..machine.cluster import shared_banks
from ..machine.registry import register
from ..state.tmem import split, tmem


def _imm(op, what):
    if not isinstance(op, Imm):
        raise InterpreterError(f"{what} must be an immediate, got {op}")
    return parse_int(op.text)


def _cta_group(dec) -> int:
    return int(dec.get("cta_group", ".cta_group::1")[-1])


def warp_uniform(ctx, g, vals, what):
    """Per warp of ``g`` (warp_masks order): the value every lane of the warp gives."""
    uw, _ = g.warp_masks()
    inv = g._wl
    v = np.asarray(vals)
    first = np.empty(len(uw), v.dtype)
    first[inv[::-1]] = v[::-1]
    if ctx.sanitize:
        bad = v != first[inv]
        if bad.any():
            j = int(np.argmax(bad))
            raise ctx.error(InterpreterError, f"{what} differs between the lanes of a warp "
                            f"({int(v[j]):#x} vs {int(first[inv[j]]):#x}); it must be warp-uniform", g, j)
    return uw, first


def _ld_state(ctx) -> AsyncWrites:
    st = ctx.tcgen05_ld
    if st is None:
        st = ctx.tcgen05_ld = AsyncWrites(ctx, "tcgen05.ld", "tcgen05.wait::ld", early=True)
    return st


# ----------------------------------------------------------------------------- late operations (schedule)
def _has_late(ctx, g) -> bool:
    """Some thread of ``g`` has tcgen05.mma operations waiting for their commit (schedule):
    later ones wait too, in order."""
    late = ctx.tcgen05_late
    return bool(late) and any(int(s) in late for s in g.idx)


def defer_late(ctx, g, d, run) -> bool:
    """Under a late schedule (or behind a late operation of the same thread), queue the
    asynchronous tcgen05 operation ``run(ctx, j)`` of each thread ``j`` of ``g`` for the commit
    that tracks it (``run_late``); False: run it now."""
    if not (ctx.schedule.late() or _has_late(ctx, g)):
        return False
    late = ctx.tcgen05_late
    for j in range(g.n):
        late.setdefault(int(g.idx[j]), []).append((d, lambda ctx_, j=j: run(ctx_, j)))
    return True


def run_late(ctx, idx, late=None):
    """Execute, in issue order, the late operations of the threads ``idx`` queued in ``late``
    (default ``ctx.tcgen05_late``: the mma / cp a commit tracks, run as it arrives)."""
    late = ctx.tcgen05_late if late is None else late
    for s in idx:
        for d, fn in late.pop(int(s), ()):
            ctx.as_issued(d, fn)


# ----------------------------------------------------------------------------- alloc / dealloc
@register("tcgen05.alloc")
def _alloc(prog, d, ins, scope, dec):
    getaddr, symspace = address_getter(prog, ins.operands[0], scope)
    gcols = reader(prog, ins.operands[1], u32, scope)
    space = "shared" if symspace == "shared" else space_of(dec)[0]
    d.sync = "aligned"

    def alloc(ctx, g):
        tm = tmem(ctx)
        uw, addr = warp_uniform(ctx, g, getaddr(ctx, g), "tcgen05.alloc's destination address")
        _, ncols = warp_uniform(ctx, g, np.broadcast_to(np.asarray(gcols(ctx, g)).astype(np.int64), (g.n,)),
                                "tcgen05.alloc's column count")
        for w, a, n in zip(uw, addr, ncols):
            lane = int(np.argmax((g.idx >> 5) == w))
            n = int(n)
            if n < 32 or n > TMEM_COLUMNS or n & (n - 1):
                raise ctx.error(InterpreterError, f"tcgen05.alloc of {n} columns: the count must be a "
                                f"power of 2 from 32 to {TMEM_COLUMNS}", g, lane)
            cta = int(ctx.slot_cta[w * 32])
            col = tm.alloc(ctx, cta, n, d, g, lane)
            one = Group(np.array([w * 32 + (g.idx[lane] & 31)]), g.pc, ctx.N)
            a64 = np.array([a], np.uint64)
            if space == "generic":
                a64 = a64 - np.uint64(M.SHARED_WINDOW)
            banks, offs = shared_banks(ctx, one, a64)
            ctx.shared.store(banks, offs, np.array([[col]], np.uint32))
    d.fn = alloc


@register("tcgen05.dealloc")
def _dealloc(prog, d, ins, scope, dec):
    gaddr = reader(prog, ins.operands[0], b32, scope)
    gcols = reader(prog, ins.operands[1], u32, scope)
    d.sync = "aligned"

    def dealloc(ctx, g):
        tm = tmem(ctx)
        uw, addr = warp_uniform(ctx, g, np.broadcast_to(np.asarray(gaddr(ctx, g)).astype(np.int64), (g.n,)),
                                "tcgen05.dealloc's address")
        _, ncols = warp_uniform(ctx, g, np.broadcast_to(np.asarray(gcols(ctx, g)).astype(np.int64), (g.n,)),
                                "tcgen05.dealloc's column count")
        for w, a, n in zip(uw, addr, ncols):
            lane = int(np.argmax((g.idx >> 5) == w))
            lanes, col = split(a)
            if lanes:
                raise ctx.error(TensorMemoryError, f"tcgen05.dealloc address {int(a):#x} has lane "
                                f"{int(lanes)}; the address tcgen05.alloc wrote has lane 0", g, lane)
            tm.dealloc(ctx, int(ctx.slot_cta[w * 32]), int(col), int(n), d, g, lane)
    d.fn = dealloc


@register("tcgen05.relinquish_alloc_permit")
def _relinquish(prog, d, ins, scope, dec):
    d.sync = "aligned"

    def relinquish(ctx, g):
        tm = tmem(ctx)
        for c in g.ctas(ctx).tolist():
            tm.relinquish(c)
    d.fn = relinquish


# ----------------------------------------------------------------------------- ld / st
def _ld_st_setup(prog, ins, scope, dec, is_ld):
    shape = dec.get("shape")[1:]
    num = int(dec.get("num")[2:])
    pack = dec.has(".pack::16b") if is_ld else dec.has(".unpack::16b")
    ops = list(ins.operands)
    if is_ld:
        regs, mem = ops[0], ops[1]
        half = ops[2] if len(ops) > 2 else None
    else:
        mem = ops[0]
        half, regs = (ops[1], ops[2]) if len(ops) > 2 else (None, ops[1])
    split_off = _imm(half, "immHalfSplitoff") if half is not None else 0
    frag = np.array(tcgen05_ld_fragment(shape, num, pack), np.int64)     # (32, R, 3)
    getaddr, _ = address_getter(prog, mem, scope)
    # each lane's registers: (lane offsets, column offsets with the half split applied), (32, R)
    offs = (np.ascontiguousarray(frag[:, :, 0]), frag[:, :, 1] + frag[:, :, 2] * split_off)
    return shape, num, pack, items(regs), getaddr, offs, frag


def _bases(ctx, g, getaddr, shape, what):
    """(warps, each thread's index into them, each warp's TMEM lane and column) of the address
    every warp of ``g`` gives, checked: warp-uniform, and lanes its warp may reach."""
    uw, addr = warp_uniform(ctx, g, getaddr(ctx, g), f"the {what} address")
    inv = g._wl
    base_lane, base_col = split(addr)
    nl = tcgen05_lanes(shape)
    quarter = (ctx.tid_lin[uw * 32] // 32) % 4
    lo = 32 * quarter
    bad = (base_lane < lo) | (base_lane + nl > lo + 32) | (base_lane % 16 != 0)
    if bad.any():
        j = int(np.argmax(bad))
        lane = int(np.argmax(inv == j))
        raise ctx.error(TensorMemoryError,
                        f"{what} of warp {int(ctx.tid_lin[uw[j] * 32] // 32)} addresses TMEM lanes "
                        f"{int(base_lane[j])}..{int(base_lane[j]) + nl - 1}; a warp w may only reach lanes "
                        f"32*(w%4)..32*(w%4)+31 = {int(lo[j])}..{int(lo[j]) + 31} (in steps of 16 "
                        f"for the 16-lane shapes)", g, lane)
    return uw, inv, base_lane, base_col


def _whole_warps(g, uw) -> bool:
    """``g`` is the whole warps ``uw``, in slot order."""
    return g.n == 32 * len(uw) and bool((g.idx[1:] > g.idx[:-1]).all())


def _cells(ctx, g, bases, offs):
    """(ctas (n,1), lanes (n,R), cols (n,R)) of the TMEM cells each thread's registers map to
    (``bases``: ``_bases``; ``offs``: per lane, the lane and column offsets of its registers;
    whole warps in slot order, the usual group, take them as one broadcast add)."""
    uw, inv, base_lane, base_col = bases
    fl, fc = offs
    if _whole_warps(g, uw):
        lanes = (base_lane[:, None, None] + fl).reshape(g.n, -1)
        cols = (base_col[:, None, None] + fc).reshape(g.n, -1)
    else:
        lane = g.idx & 31
        lanes = base_lane[inv][:, None] + fl[lane]
        cols = base_col[inv][:, None] + fc[lane]
    ctas = ctx.slot_cta[g.idx][:, None]
    return ctas, lanes, cols


def _rows(ctx, g, bases, nregs):
    """For a fragment whose lane ``l`` of a warp holds TMEM lane ``l`` from the warp's base and
    its registers consecutive columns (``_row_shape``: ``.32x32b`` unpacked): (ctas (n,), lanes
    (n,), the column slice) of each thread's cells, when ``g`` is whole warps in slot order
    that all start at one column; else None (``_cells``)."""
    uw, _, base_lane, base_col = bases
    c0 = int(base_col[0])
    if not _whole_warps(g, uw) or (base_col != c0).any():
        return None
    lanes = (base_lane[:, None] + _LANES).reshape(-1)
    return ctx.slot_cta[g.idx], lanes, slice(c0, c0 + nregs)


_LANES = np.arange(32)


def _row_shape(offs) -> bool:
    """Whether the per-lane offsets ``offs`` of an ld/st fragment are ``_rows``' form."""
    fl, fc = offs
    return (np.array_equal(fl, np.broadcast_to(_LANES[:, None], fl.shape))
            and np.array_equal(fc, np.broadcast_to(np.arange(fc.shape[1]), fc.shape)))


@register("tcgen05.ld")
def _ld(prog, d, ins, scope, dec):
    shape, num, pack, regs, getaddr, offs, frag = _ld_st_setup(prog, ins, scope, dec, True)
    keys = tuple(prog.reg(o.name, scope).key for o in regs)
    if len(keys) != frag.shape[1]:
        raise InterpreterError(f"tcgen05.ld .{shape}.x{num} takes {frag.shape[1]} registers, got {len(keys)}")
    what = f"tcgen05.ld.{shape}.x{num}"
    d.sync = "aligned"
    rowwise = not pack and _row_shape(offs)

    def ld(ctx, g):
        tm = tmem(ctx)
        bases = _bases(ctx, g, getaddr, shape, what)
        rows = _rows(ctx, g, bases, len(keys)) if rowwise else None
        v = tm.read_rows(*rows) if rows is not None else None
        if v is not None:                   # (else the cells one by one: their reports)
            _ld_state(ctx).set_all(ctx, keys, g, v, 0, d)
            return
        ctas, lanes, cols = _cells(ctx, g, bases, offs)
        if pack:
            lo = tm.read(ctx, ctas, lanes, cols, what, g) & np.uint32(0xFFFF)
            hi = tm.read(ctx, ctas, lanes, cols + 1, what, g) & np.uint32(0xFFFF)
            v = lo | (hi << np.uint32(16))
        else:
            v = tm.read(ctx, ctas, lanes, cols, what, g)
        _ld_state(ctx).set_all(ctx, keys, g, v, 0, d)
    d.fn = ld


@register("tcgen05.st")
def _st(prog, d, ins, scope, dec):
    shape, num, pack, regs, getaddr, offs, frag = _ld_st_setup(prog, ins, scope, dec, False)
    gets = [reader(prog, o, b32, scope) for o in regs]
    if len(gets) != frag.shape[1]:
        raise InterpreterError(f"tcgen05.st .{shape}.x{num} takes {frag.shape[1]} registers, got {len(gets)}")
    what = f"tcgen05.st.{shape}.x{num}"
    d.sync = "aligned"
    rowwise = not pack and _row_shape(offs)

    def st(ctx, g):
        bases = _bases(ctx, g, getaddr, shape, what)
        v = np.stack([np.asarray(f(ctx, g)).astype(np.uint32) for f in gets], axis=1)
        late = ctx.tcgen05_st_late
        deferred = ctx.schedule.late() or (late and any(int(s) in late for s in g.idx))
        if rowwise and not deferred:
            rows = _rows(ctx, g, bases, len(gets))
            if rows is not None and tmem(ctx).write_rows(*rows, v):
                return
        ctas, lanes, cols = _cells(ctx, g, bases, offs)
        if deferred:
            # late (schedule): each thread's cells are written at its tcgen05.wait::st
            for j, s in enumerate(g.idx):
                late.setdefault(int(s), []).append(
                    (d, lambda ctx_, j=j: write(ctx_, g, ctas[j:j + 1], lanes[j:j + 1], cols[j:j + 1], v[j:j + 1])))
            return
        write(ctx, g, ctas, lanes, cols, v)

    def write(ctx, g, ctas, lanes, cols, v):
        tm = tmem(ctx)
        if pack:
            tm.write(ctx, ctas, lanes, cols, v & np.uint32(0xFFFF), what, g)
            tm.write(ctx, ctas, lanes, cols + 1, v >> np.uint32(16), what, g)
        else:
            tm.write(ctx, ctas, lanes, cols, v, what, g)
    d.fn = st


@register("tcgen05.wait::ld")
def _wait_ld(prog, d, ins, scope, dec):
    d.sync = "aligned"

    def wait(ctx, g):
        st = ctx.tcgen05_ld
        if st is not None and st.busy():
            st.retire(ctx, g.idx)
    d.fn = wait


@register("tcgen05.wait::st")
def _wait_st(prog, d, ins, scope, dec):
    d.sync = "aligned"

    def wait(ctx, g):
        if ctx.tcgen05_st_late:             # late stores of these threads land (schedule)
            run_late(ctx, g.idx, ctx.tcgen05_st_late)
    d.fn = wait


# ----------------------------------------------------------------------------- cp / shift
# shape -> (lanes, 128-bit chunks per lane)
_CP_SHAPES = {"128x256b": (128, 2), "4x256b": (4, 2), "128x128b": (128, 1), "64x128b": (64, 1),
              "32x128b": (32, 1)}


@register("tcgen05.cp")
def _cp(prog, d, ins, scope, dec):
    shape = dec.get("shape")[1:]
    multicast = dec.get("multicast")
    if dec.get("src_fmt") is not None:
        raise InterpreterError(
            f"tcgen05.cp with decompression {dec.get('dst_fmt')}{dec.get('src_fmt')} is not supported "
            f"by the interpreter: the ISA gives the 4/6-bit to 8-bit container layout only as a figure")
    nl, chunks = _CP_SHAPES[shape]
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    getdesc = reader(prog, ins.operands[1], b64, scope)
    cg = _cta_group(dec)
    what = f"tcgen05.cp.{shape}"

    def cp(ctx, g):
        addrs = getaddr(ctx, g)
        descs = np.asarray(getdesc(ctx, g))
        if not defer_late(ctx, g, d, lambda ctx_, j: run(ctx_, g, j, addrs, descs)):
            for j in range(g.n):
                run(ctx, g, j, addrs, descs)

    def run(ctx, g, j, addrs, descs):
        """Thread ``j``'s copy: read the shared-memory rows, write the TMEM cells."""
        tm = tmem(ctx)
        slot = int(g.idx[j])
        cta = int(ctx.slot_cta[slot])
        lane0, col0 = split(int(addrs[j]))
        desc = SM.decode_tcgen05(int(descs[j]), f"{what} source descriptor")
        raw = SM.gather(ctx, [cta], [desc], "K", nl, 16 * chunks, 8, what, ctx.sanitize, g, j)[0]   # (nl, bytes)
        words = np.ascontiguousarray(raw).view(np.uint32)                               # (nl, 4*chunks)
        ncol = words.shape[1]
        if multicast == ".warpx4":            # 32 rows to each of the four lane quarters
            dst = [(q * 32 + np.arange(32), words) for q in range(4)]
        elif multicast == ".warpx2::02_13":   # rows 0-31 to quarters 0 and 2, 32-63 to 1 and 3
            dst = [(q * 32 + np.arange(32), words[32 * (q % 2):32 * (q % 2) + 32]) for q in range(4)]
        elif multicast == ".warpx2::01_23":   # rows 0-31 to quarters 0 and 1, 32-63 to 2 and 3
            dst = [(q * 32 + np.arange(32), words[32 * (q // 2):32 * (q // 2) + 32]) for q in range(4)]
        else:
            dst = [(lane0 + np.arange(nl), words)]
        targets = [cta] if cg == 1 else _pair(ctx, cta, g, j)
        for c in targets:
            for lanes, w in dst:
                tm.write(ctx, c, lanes[:, None], col0 + np.arange(ncol)[None, :], w, what,
                         g, lambda _j, jj=j: jj)
    d.fn = cp


def _pair(ctx, cta, g=None, lane=0):
    """The two CTAs (banks) of ``cta``'s pair (cluster ranks 2k, 2k+1)."""
    r = int(ctx.cluster_rank_of_cta[cta])
    first = cta - r
    even = first + (r & ~1)
    if ctx.cluster_size < 2 or even + 1 >= first + ctx.cluster_size:
        raise ctx.error(InterpreterError, "a .cta_group::2 operation needs clusters of at least 2 CTAs "
                        f"(the pair is ranks 2k, 2k+1); the cluster has {ctx.cluster_size}", g, lane)
    return [even, even + 1]


@register("tcgen05.shift")
def _shift(prog, d, ins, scope, dec):
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    cg = _cta_group(dec)
    what = "tcgen05.shift.down"

    def shift(ctx, g):
        tm = tmem(ctx)
        addrs = getaddr(ctx, g)
        for j in range(g.n):
            cta = int(ctx.slot_cta[g.idx[j]])
            lane0, col0 = split(int(addrs[j]))
            if lane0 % 32:
                raise ctx.error(TensorMemoryError, f"{what}: the lane of the address ({int(lane0)}) must "
                                f"be a multiple of 32", g, j)
            cols = col0 + np.arange(8)
            for c in ([cta] if cg == 1 else _pair(ctx, cta, g, j)):
                src = tm.read(ctx, c, (lane0 + np.arange(31))[:, None], cols[None, :], what, g,
                              lambda _j, jj=j: jj)
                tm.write(ctx, c, (lane0 + 1 + np.arange(31))[:, None], cols[None, :], src, what, g,
                         lambda _j, jj=j: jj)
    d.fn = shift


# ----------------------------------------------------------------------------- commit
@register("tcgen05.commit")
def _commit(prog, d, ins, scope, dec):
    getaddr, symspace = address_getter(prog, ins.operands[0], scope)
    space = "shared" if symspace == "shared" else space_of(dec)[0]
    getmask = reader(prog, ins.operands[1], u16, scope) if len(ins.operands) > 1 else None

    def commit(ctx, g):
        from ..machine.mbarrier import arrive_threads, defer_action, locate
        if ctx.timeline is not None:
            for s in g.idx.tolist():
                ctx.timeline.end("tcgen05.mma", (int(ctx.slot_cta[s]), s))
        ctas, offs = locate(ctx, g, getaddr(ctx, g), space)
        if getmask is None:
            targets = [(ctas, offs, np.ones(g.n, np.int64), 0)]
        else:
            mask = np.broadcast_to(np.asarray(getmask(ctx, g)).astype(np.int64), (g.n,))
            targets = []
            for j in range(g.n):
                try:
                    banks = ctx.masked_banks(int(ctx.slot_cta[g.idx[j]]), int(mask[j]))
                except InterpreterError as e:
                    raise ctx.error(InterpreterError, f"tcgen05.commit: {e.message}", g, j) from None
                if banks:
                    targets.append((np.array(banks), np.full(len(banks), offs[j]), np.ones(len(banks), np.int64), j))

        def arrive(ctx):
            run_late(ctx, g.idx)            # the operations it tracks complete first
            for c, o, n, j in targets:
                arrive_threads(ctx, c, o, n, g=g, lane0=j)
        if ctx.tcgen05_late and any(int(s) in ctx.tcgen05_late for s in g.idx):
            # late (schedule): the tracked operations run, and the arrival happens, when a thread
            # needs one of these mbarriers
            keys = {(int(c), int(o)) for cs, os_, _, _ in targets for c, o in zip(cs, os_)}
            defer_action(ctx, sorted(keys), arrive, g)
        else:
            arrive(ctx)
    d.fn = commit
