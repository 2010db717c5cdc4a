"""Memory instructions: ld/ldu/st (every state space, vectors, generic addressing, distributed
shared memory through ``.shared::cluster``), atom/red, cp.async with commit/wait groups
(performed when waited on, so a missing wait shows up as a read of uninitialized shared
memory), createpolicy. ``mapa`` / ``getctarank`` live in ``ops.cluster_ops``.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import b64, pred, u32
from ..sanitizer import global_races
from ..state import memory as M
from ..sanitizer import provenance
from ..state import stack
from ..machine.cluster import shared_banks, shared_target
from ..machine.program import addr_parts
from ..sanitizer.async_proxy import cp_async_landed, on_generic_load, on_generic_store, track_cp_async
from ..machine.registry import register
from ..state.operands import SINT, UINT, b128_reader, b128_writer, items, np_dtype, reader, writer


def space_of(dec):
    """(state space, its modifier) of a decoded instruction: ``("shared", ".shared::cta")``;
    ``("generic", "")`` when it names none."""
    opt = dec.get("space")
    if opt is None:
        return "generic", ""
    return opt[1:].split("::")[0], opt


def mem_dtype(t):
    """NumPy dtype used to move values of type ``t`` through memory (bit exact)."""
    if t.kind == "signed":
        return np.dtype(SINT[t.bits])
    if t.bits == 128:
        return np.dtype(np.uint64)
    return np.dtype(UINT[t.bits])


def address_getter(prog, op, scope):
    """get(ctx, g) -> (uint64 addresses, symbol space or None)."""
    base, off, symspace = addr_parts(prog, op, scope)
    if base is None:                # one address: the same read-only array for groups of a size
        const = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
        made: dict = {}

        def get_const(ctx, g):
            a = made.get(g.n)
            if a is None:
                if len(made) >= 16:
                    made.clear()
                a = made[g.n] = np.full(g.n, const, np.uint64)
                a.flags.writeable = False
            return a
        return get_const, symspace
    o = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
    if off:
        return (lambda ctx, g: np.asarray(base(ctx, g), np.uint64) + o), symspace
    return (lambda ctx, g: np.asarray(base(ctx, g), np.uint64)), symspace


# ----------------------------------------------------------------------------- space access
def mem_space(dec):
    """State space an ld/st/atom accesses: ``"shared::cluster"`` for ``.shared::cluster`` (any
    CTA of the cluster), ``"shared"`` for ``.shared`` / ``.shared::cta`` (the executing CTA's),
    else ``space_of(dec)[0]``."""
    space, opt = space_of(dec)
    return "shared::cluster" if opt == ".shared::cluster" else space


def space_load(ctx, g, space, addrs, dt, count=1, race=True, span=None):
    """Load ``count`` elements of ``dt`` at each address of ``space``; ``race=False`` for
    strong (volatile / relaxed / acquire) loads, which never race. ``span``: a ``memory.Span``
    of ``addrs`` the checks share (global accesses)."""
    if space == "global":
        out = ctx.mem.gspace.load(addrs, dt, count, None, span)
        if race and ctx.sanitize:
            gr = global_races.tracker(ctx)
            if gr is not None:
                gr.on_load(ctx, g, addrs, np.dtype(dt).itemsize, count, span)
        return out
    if space == "shared" or space == "shared::cluster":
        banks, offs, warps = shared_target(ctx, g, addrs, space == "shared")
        checked = None
        if ctx.async_proxy is not None or race and warps is not None:
            nbytes = np.dtype(dt).itemsize * count
            checked, starts, aligned = _bounds(ctx, banks, offs, nbytes)
            if ctx.async_proxy is not None:
                on_generic_load(ctx, g, banks, offs, nbytes, checked)
            if race and warps is not None:
                _race(ctx, g, banks, offs, nbytes, warps, None, checked, starts, aligned)
        try:
            return ctx.shared.load(banks, offs, dt, count, check_init=ctx.sanitize, span=checked)
        except M.MemoryFault as f:
            if f.kind == "uninitialized":
                f.detail += _pending_hint(ctx, g, f)
                b = int(banks[f.lane])
                if b != int(ctx.slot_cta[g.idx[f.lane]]):
                    f.detail = f.detail.replace(
                        "any thread of this CTA", f"any thread of CTA rank {int(ctx.cluster_rank_of_cta[b])} "
                        f"(the CTA that owns it)")
            raise
    if space == "local":
        if ctx.stack_sp is not None:
            stack.check_access(ctx, g, addrs, np.dtype(dt).itemsize * count)
        return ctx.local.load(g.idx, addrs, dt, count)
    if space == "const":
        return ctx.mem.cspace.load(addrs, dt, count)
    if space == "param":
        return ctx.mem.pspace.load(addrs, dt, count)
    if space == "plocal":
        return ctx.local.load(g.idx, addrs, dt, count)
    return generic_load(ctx, g, addrs, dt, count, race)


def space_store(ctx, g, space, addrs, vals, race=True, span=None):
    """Store ``vals`` (n, count) at each address of ``space``; ``race=False`` for strong
    (volatile / relaxed / release) stores, which never race. ``span``: as ``space_load``."""
    if space == "global":
        gr = global_races.tracker(ctx) if race and ctx.sanitize else None
        if gr is None:
            return ctx.mem.gspace.store(addrs, vals, span=span)
        work = gr.before_store(ctx, g, addrs, vals, span)
        ctx.mem.gspace.store(addrs, vals, getattr(work, "fast", False), span)
        return gr.after_store(ctx, g, work)
    if space == "shared" or space == "shared::cluster":
        banks, offs, warps = shared_target(ctx, g, addrs, space == "shared")
        checked = starts = None
        if ctx.async_proxy is not None or race and warps is not None:
            nbytes = vals.dtype.itemsize * vals.shape[1]
            checked, starts, aligned = _bounds(ctx, banks, offs, nbytes)
            if ctx.async_proxy is not None:
                on_generic_store(ctx, g, banks, offs, nbytes, checked, starts, aligned)
            if race and warps is not None:
                _race(ctx, g, banks, offs, nbytes, warps, vals, checked, starts, aligned)
        # race: checked above
        return ctx.shared.store(banks, offs, vals, span=checked, starts=starts,
                                aligned=checked is not None and aligned)
    if space in ("local", "plocal"):
        if ctx.stack_sp is not None:
            stack.check_access(ctx, g, addrs, vals.dtype.itemsize * vals.shape[1])
        return ctx.local.store(g.idx, addrs, vals)
    if space == "param":
        return ctx.mem.pspace.store(addrs, vals)
    if space == "const":
        raise M.MemoryFault("read-only", 0, int(addrs[0]) if len(addrs) else 0,
                            "the const state space is read-only", "const")
    return generic_store(ctx, g, addrs, vals, race)


def _bounds(ctx, banks, offs, nbytes):
    """Bounds and alignment of accesses of ``nbytes`` at shared offsets ``offs`` (uint64) of
    CTAs ``banks`` checked once for every sanitizer check (``MemoryFault`` as
    ``BankedSpace._check`` gives it, where named). Returns ((lowest, end) offset: the
    ``memory.BankedSpace.load`` / ``store`` ``span``, the accesses' flat first bytes, whether
    every one is a multiple of ``nbytes``, a power of two: the race tracker's row layouts)."""
    sh = ctx.shared
    try:
        if not len(offs):
            return (0, 0), sh.flat(banks, offs), True
        lo, top = int(offs.min()), int(offs.max())
        if nbytes & (nbytes - 1) == 0:
            aligned = not int(np.bitwise_or.reduce(offs)) & (nbytes - 1)
            if top + nbytes > sh.size or not aligned:
                sh._check(offs, nbytes)                 # the report
        else:
            sh._check(offs, nbytes)
            aligned = False
    except M.MemoryFault as f:
        where = sh.describe_offset(f.address)
        f.detail = f.detail.replace("{where}", f" ({where})" if where else "")
        raise
    # a bank's stride is a multiple of 16: rows aligned in their bank are aligned flat (to <= 16)
    return (lo, top + nbytes), sh.flat(banks, offs), aligned and (nbytes <= 16 or sh.stride % nbytes == 0)


def _race(ctx, g, banks, offs, nbytes, warps, vals, span, starts, aligned):
    """The sanitizer's race checks of an ``ld`` / ``st`` of shared memory (``vals``: the stored
    values; None for a load), between warps (``RaceTracker.on_load`` / ``on_store``) and between
    lanes of one warp (``intra_load`` / ``intra_store``, for accesses of the executing CTA's own
    shared memory; the bytes accessed are spread out only where a check needs them). ``span``,
    ``starts``, ``aligned``: what ``_bounds`` found, shared by every check."""
    race = ctx.shared.race
    pos = None
    # (the group's own warps, ``shared_target``'s answer when every address is the CTA's own)
    remote = ctx.cluster_size > 1 and warps is not g.slot_info(ctx)[2] and len(warps) and warps.max() >= 32
    # the rows' warps by blocks (the race tracker's per-warp summary), and each warp once, where
    # they are the group's own
    blocks = None if remote else g.warp_blocks(ctx.W)
    uw = None if remote else g.warp_masks()[0]
    try:
        if vals is None:
            race.on_load(banks, offs, nbytes, warps, span=span, starts=starts, aligned=aligned, blocks=blocks)
        else:
            race.on_store(banks, offs, nbytes, warps, vals, span=span, starts=starts, aligned=aligned,
                          blocks=blocks)
        slots = g.idx
        if remote:
            # distributed shared memory: not one warp's
            keep = np.nonzero(warps < 32)[0]
            if not len(keep):
                return
            banks, offs, slots, starts = banks[keep], offs[keep], slots[keep], starts[keep]
            vals = None if vals is None else vals[keep]
            pos = keep
        gw, lanes = (slots >> 5, ctx.lane[slots]) if remote else g.slot_info(ctx)[:2]
        if vals is None:
            race.intra_load(banks, offs, nbytes, gw, lanes, ctx.N >> 5, starts=starts, aligned=aligned, uw=uw)
        else:
            race.intra_store(banks, offs, nbytes, gw, lanes, ctx.N >> 5, vals, starts=starts, aligned=aligned,
                             uw=uw)
    except M.MemoryFault as f:
        where = ctx.shared.describe_offset(f.address)
        f.detail = f.detail.replace("{where}", f" ({where})" if where else "")
        if pos is not None:                          # an index into the CTA's own accesses
            f.lane = int(pos[f.lane])
        raise


def classify(addrs):
    """Generic addresses -> array of space codes: 0 global, 1 shared, 2 local, 3 const, 4 param."""
    a = addrs
    c = _one_space(a) if a.size else None
    if c is not None:
        return np.full(a.shape, c, np.int8)
    code = np.zeros(a.shape, np.int8)
    code[(a >= np.uint64(M.SHARED_WINDOW)) & (a < np.uint64(M.SHARED_WINDOW + M.WINDOW_SIZE))] = 1
    code[(a >= np.uint64(M.LOCAL_WINDOW)) & (a < np.uint64(M.LOCAL_WINDOW + M.WINDOW_SIZE))] = 2
    code[(a >= np.uint64(M.CONST_BASE)) & (a < np.uint64(M.CONST_BASE + M.CONST_SIZE))] = 3
    code[(a >= np.uint64(M.PARAM_BASE)) & (a < np.uint64(M.PARAM_BASE + M.PARAM_SIZE))] = 4
    return code


_CODE_SPACE = {0: "global", 1: "shared::cluster", 2: "local", 3: "const", 4: "param"}
_WIN = {1: M.SHARED_WINDOW, 2: M.LOCAL_WINDOW}


_WINDOWS = ((1, M.SHARED_WINDOW, M.SHARED_WINDOW + M.WINDOW_SIZE),
            (2, M.LOCAL_WINDOW, M.LOCAL_WINDOW + M.WINDOW_SIZE),
            (3, M.CONST_BASE, M.CONST_BASE + M.CONST_SIZE),
            (4, M.PARAM_BASE, M.PARAM_BASE + M.PARAM_SIZE))


def space_code(addr: int) -> int:
    """``classify`` of one generic address (a Python int)."""
    for c, start, end in _WINDOWS:
        if start <= addr < end:
            return c
    return 0


def _one_space(addrs):
    """The space code (``classify``) every address has, from the smallest and largest (the
    windows are intervals); None when they may differ."""
    lo, hi = int(addrs.min()), int(addrs.max())
    for c, start, end in _WINDOWS:
        if start <= lo < end:
            return c if hi < end else None
        if lo < start <= hi:
            return None
    return 0


def _split_generic(ctx, g, addrs):
    c = _one_space(addrs) if len(addrs) else 0
    if c is not None:
        return [(c, None, g, addrs - np.uint64(_WIN[c]) if c in _WIN else addrs)]
    code = classify(addrs)
    if (code == code[0]).all() if len(code) else True:
        c = int(code[0]) if len(code) else 0
        a = addrs - np.uint64(_WIN[c]) if c in _WIN else addrs
        return [(c, None, g, a)]
    out = []
    from ..machine.group import Group
    for c in np.unique(code):
        sel = np.nonzero(code == c)[0]
        sub = Group(g.idx[sel], g.pc, ctx.N)
        a = addrs[sel]
        if int(c) in _WIN:
            a = a - np.uint64(_WIN[int(c)])
        out.append((int(c), sel, sub, a))
    return out


def generic_load(ctx, g, addrs, dt, count=1, race=True):
    parts = _split_generic(ctx, g, addrs)
    if len(parts) == 1:
        c, _, sub, a = parts[0]
        return space_load(ctx, sub, _CODE_SPACE[c], a, dt, count, race)
    out = np.empty((len(addrs), count), np.dtype(dt))
    for c, sel, sub, a in parts:
        try:
            out[sel] = space_load(ctx, sub, _CODE_SPACE[c], a, dt, count, race)
        except M.MemoryFault as f:
            f.lane = int(sel[f.lane])
            raise
    return out


def generic_store(ctx, g, addrs, vals, race=True):
    parts = _split_generic(ctx, g, addrs)
    for c, sel, sub, a in parts:
        try:
            space_store(ctx, sub, _CODE_SPACE[c], a, vals if sel is None else vals[sel], race)
        except M.MemoryFault as f:
            if sel is not None:
                f.lane = int(sel[f.lane])
            raise


# ----------------------------------------------------------------------------- ld / st
@register("ld", "ldu")
def _ld(prog, d, ins, scope, dec):
    d.noun = "load"
    t = dec.type
    space = mem_space(dec)
    race = dec.get("sem") is None        # volatile / relaxed / acquire loads never race
    vec = int(dec.get("vec", ".v1")[2:])
    dsts = items(ins.operands[0])
    getaddr, symspace = address_getter(prog, ins.operands[1], scope)
    if symspace in ("plocal", "param", "shared", "local") and space in ("param", "generic"):
        space = symspace
    pk = provenance.addr_key(prog, ins.operands[1], scope) if space in ("global", "generic") else None
    glob = space == "global"       # the addresses' nest will be wanted (memory.Span)
    if t.bits == 128:              # one .b128 register: two 64-bit halves, 16-byte aligned
        put128 = b128_writer(prog, dsts[0], scope)

        def ld128(ctx, g):
            a = getaddr(ctx, g)
            sp = M.Span(a, glob)
            if pk is not None and ctx.ptag:
                provenance.check(ctx, g, pk, a, 16, span=sp)
            put128(ctx, g, space_load(ctx, g, space, a, np.uint64, 2, race, sp))
        d.fn = ld128
        return
    count = vec
    if len(dsts) != vec:
        raise InterpreterError(f"{ins.full_opcode} needs {vec} destinations, got {len(dsts)}")
    puts = [writer(prog, o, t, scope) for o in dsts]
    dt = mem_dtype(t)
    nbytes = dt.itemsize * count

    if count == 1:
        put = puts[0]
        from ...ir.nodes import Reg
        tag_key = None             # a 64-bit ld.param: a pointer parameter (provenance)
        if space == "param" and t.bits == 64 and isinstance(dsts[0], Reg):
            tag_key = prog.reg(dsts[0].name, scope).key
        one = addr_parts(prog, ins.operands[1], scope)[0] is None     # one address: one value
        once = one and space == "param"     # (its checks, bounds, alignment and definedness, too)

        def ld1(ctx, g):
            a = getaddr(ctx, g)
            raw = ctx.mem.pspace.read_row(int(np.asarray(a).reshape(-1)[0]), nbytes, nbytes) \
                if once and g.n > 1 and ctx.mem.pspace.counter is None else None     # (statistics count each)
            if raw is not None:         # every check passes: read once (else the load reports)
                v = np.full(g.n, np.frombuffer(raw, dt)[0])
                put(ctx, g, v)
                if tag_key is not None and ctx.sanitize:
                    ctx.tag_loaded(tag_key, g, v, one)
                return
            sp = M.Span(a, glob)
            if pk is not None and ctx.ptag:
                provenance.check(ctx, g, pk, a, nbytes, span=sp)
            v = space_load(ctx, g, space, a, dt, 1, race, sp)[:, 0]
            put(ctx, g, v)
            if tag_key is not None and ctx.sanitize:
                ctx.tag_loaded(tag_key, g, v, one)
        d.fn = ld1
        return

    def ldv(ctx, g):
        a = getaddr(ctx, g)
        sp = M.Span(a, glob)
        if pk is not None and ctx.ptag:
            provenance.check(ctx, g, pk, a, nbytes, span=sp)
        v = space_load(ctx, g, space, a, dt, count, race, sp)
        for i, p in enumerate(puts):
            p(ctx, g, np.ascontiguousarray(v[:, i]))
    d.fn = ldv


@register("st")
def _st(prog, d, ins, scope, dec):
    d.noun = "store"
    t = dec.type
    space = mem_space(dec)
    race = dec.get("sem") is None        # volatile / relaxed / release stores never race
    getaddr, symspace = address_getter(prog, ins.operands[0], scope)
    if symspace in ("plocal", "param", "shared", "local") and space in ("param", "generic"):
        space = symspace
    srcs_ops = items(ins.operands[1])
    pk = provenance.addr_key(prog, ins.operands[0], scope) if space in ("global", "generic") else None
    glob = space == "global"       # the addresses' nest will be wanted (memory.Span)
    if t.bits == 128:              # one .b128 register: two 64-bit halves, 16-byte aligned
        get128 = b128_reader(prog, srcs_ops[0], scope)

        def st128(ctx, g):
            a = getaddr(ctx, g)
            sp = M.Span(a, glob)
            if pk is not None and ctx.ptag:
                provenance.check(ctx, g, pk, a, 16, True, sp)
            space_store(ctx, g, space, a, np.ascontiguousarray(get128(ctx, g)), race, sp)
        d.fn = st128
        return
    gets = [reader(prog, o, t, scope) for o in srcs_ops]
    dt = mem_dtype(t)
    nbytes = dt.itemsize * len(gets)

    def values(ctx, g):
        """The stored values (n, elements), each register's bits in its column."""
        vals = np.empty((g.n, len(gets)), dt)
        for i, f in enumerate(gets):
            v = np.asarray(f(ctx, g))
            vals[:, i] = v.view(dt) if v.dtype.itemsize == dt.itemsize else v.astype(dt)
        return vals

    def st(ctx, g):
        a = getaddr(ctx, g)
        sp = M.Span(a, glob)
        if pk is not None and ctx.ptag:
            provenance.check(ctx, g, pk, a, nbytes, True, sp)
        space_store(ctx, g, space, a, values(ctx, g), race, sp)
    d.fn = st
    if space == "shared" and race:
        # a weak store to the CTA's own shared memory: in a run of them (``scheduler.store_runs``)
        # its operands are read in order and the run's stores written at once
        d.stc = (lambda ctx, g: (getaddr(ctx, g), values(ctx, g)),
                 lambda ctx, g, a, vals: space_store(ctx, g, space, a, vals, race, M.Span(a, glob)))


# ----------------------------------------------------------------------------- atomics
def _views_for(ctx, g, space, addrs, esz):
    """[(positions or None, numpy view, element indices, space)] for read-modify-write (the
    caller writes through the views and counts a change in the space's ``version``)."""
    dt = np.dtype(UINT[esz * 8])
    if space == "generic":
        out = []
        for c, sel, sub, a in _split_generic(ctx, g, addrs):
            for pos, view, idx, sp in _views_for(ctx, sub, _CODE_SPACE[c], a, esz):
                p = sel if pos is None else (sel[pos] if sel is not None else pos)
                out.append((p, view, idx, sp))
        return out
    if space == "global":
        parts = ctx.mem.gspace.locate(addrs, esz, True)
        return [(pos, al.view(dt), (off // np.uint64(esz)).astype(np.int64), "global") for al, pos, off in parts]
    if space == "shared" or space == "shared::cluster":
        banks, offs, _ = shared_target(ctx, g, addrs, space == "shared", warps=False)
        sh = ctx.shared
        sh._check(offs, esz)
        f = sh.flat(banks, offs) // esz
        if ctx.sanitize and sh.init is not None:
            bad = sh.iview(esz)[f] != M._ONES[esz]
            if bad.any():
                lane = int(np.argmax(bad))
                raise M.MemoryFault("uninitialized", lane, int(offs[lane]),
                                    f"shared address {int(offs[lane]):#x} is updated atomically before any "
                                    f"thread of {'this CTA' if banks[lane] == ctx.slot_cta[g.idx[lane]] else 'its CTA'} "
                                    f"wrote it", "shared")
        return [(None, sh.view(dt), f, "shared")]
    if space == "local":
        ctx.local._check(addrs, esz)
        return [(None, ctx.local.view(dt), ctx.local.flat(g.idx, addrs) // esz, "local")]
    raise M.MemoryFault("out-of-bounds", 0, int(addrs[0]), f"atomics are not allowed on the {space} space", space)


def _atom_apply(op, t, old, b, c, ftz=False):
    """New value for one atomic step (old, b, c as typed arrays). f32 adds flush subnormals
    on global memory and keep them on shared memory, as the hardware does."""
    if op == "add":
        if t.kind == "float" and t.name == "f32":
            from ..state.fp import ftz32
            if ftz:
                return ftz32(ftz32(old) + ftz32(b))
            return (old + b).astype(np.float32)
        if t.kind in ("float", "packed"):
            from .floating import Lanes, _narrow_result
            L = Lanes(t)
            return _narrow_result(L, L.dec(old) + L.dec(b), "rn")
        return old + b
    if op == "min":
        return np.minimum(old, b) if t.kind != "float" else np.fmin(old, b)
    if op == "max":
        return np.maximum(old, b) if t.kind != "float" else np.fmax(old, b)
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return np.where(old == b, c, old)
    if op == "inc":
        return np.where(old >= b, old.dtype.type(0), old + old.dtype.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - old.dtype.type(1))
    raise InterpreterError(f"unknown atomic operation {op}")


def _atom_scalar(op, old, b, c, ftz):
    if op == "add":
        r = old + b
        if ftz and abs(r) < np.float32(2.0 ** -126):
            r = np.float32(0.0) * r
        return r
    if op == "min":
        return b if b < old else old
    if op == "max":
        return b if b > old else old
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return c if old == b else old
    if op == "inc":
        return type(old)(0) if old >= b else old + type(old)(1)
    if op == "dec":
        return b if (old == 0 or old > b) else old - type(old)(1)
    raise InterpreterError(f"unknown atomic operation {op}")


def _atomic(prog, d, ins, scope, dec, has_dst):
    d.noun = "atomic" if has_dst else "reduction"
    t = dec.type
    op = dec.get("op")[1:]              # add | min | max | inc | dec | and | or | xor | exch | cas
    space = mem_space(dec)
    ops = list(ins.operands)
    put = writer(prog, ops.pop(0), t, scope) if has_dst else None
    aop = ops.pop(0)
    getaddr, _s = address_getter(prog, aop, scope)
    pk = provenance.addr_key(prog, aop, scope) if space in ("global", "generic") else None
    gb = reader(prog, ops[0], t, scope)
    gc = reader(prog, ops[1], t, scope) if op == "cas" else None
    esz = max(1, t.bits // 8)
    cdt = np_dtype(t)
    udt = np.dtype(UINT[esz * 8])

    def atomic(ctx, g):
        addrs = getaddr(ctx, g)
        if pk is not None and ctx.ptag:
            provenance.check(ctx, g, pk, addrs, esz, True)
        b = np.broadcast_to(np.asarray(gb(ctx, g), cdt), (g.n,))
        c = np.broadcast_to(np.asarray(gc(ctx, g), cdt), (g.n,)) if gc is not None else None
        old_all = np.empty(g.n, cdt)
        for pos, view, idx, view_space in _views_for(ctx, g, space, addrs, esz):
            sel = np.arange(g.n) if pos is None else pos
            bb, cc = b[sel], (c[sel] if c is not None else None)
            before = view[idx]
            _apply_atomic(op, t, dec, has_dst, view, idx, view_space, sel, bb, cc, old_all, cdt, udt, esz)
            if not np.array_equal(view[idx], before):
                # memory changed (a failed cas or a max that keeps the value does not):
                # counted for the no-progress detector (progress)
                _SPACE_OF[view_space](ctx).version += 1
        if put is not None:
            put(ctx, g, old_all)
    d.fn = atomic


_SPACE_OF = {"global": lambda ctx: ctx.mem.gspace, "shared": lambda ctx: ctx.shared,
             "local": lambda ctx: ctx.local}


def _apply_atomic(op, t, dec, has_dst, view, idx, view_space, sel, bb, cc, old_all, cdt, udt, esz):
    """Apply one part's atomic operations (in thread order) and record the old values."""
    if not has_dst and op in ("add", "and", "or", "xor") and t.kind in ("unsigned", "signed", "bits") \
            or (not has_dst and op == "add" and t.name in ("f64", "f32")):
        # sequential in-order reduction (np.ufunc.at applies duplicates one by one)
        tv = view.view(cdt)
        f = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        f.at(tv, idx, bb)
        if t.name == "f32" and view_space != "shared" and not dec.has(".noftz"):
            from ..state.fp import ftz32
            tv[idx] = ftz32(tv[idx])
        return
    if len(idx) > 8 and len(idx) - len(np.unique(idx)) > 8 and t.kind != "packed" and t.bits >= 32 \
            or len(idx) > 8 and len(np.unique(idx)) == 1 and t.kind != "packed":
        # heavily contended: apply the operations one by one on NumPy scalars
        tv = view.view(cdt)
        ftz = view_space != "shared" and not dec.has(".noftz") and t.name == "f32"
        for j in range(len(idx)):
            k = idx[j]
            cur = tv[k]
            old_all[sel[j]] = cur
            tv[k] = _atom_scalar(op, cur, bb[j], cc[j] if cc is not None else None, ftz)
        return
    rem = np.arange(len(idx))
    while len(rem):
        _, first = np.unique(idx[rem], return_index=True)
        first = np.sort(first)
        take = rem[first]
        cur = view[idx[take]].view(cdt)
        new = _atom_apply(op, t, cur, bb[take], cc[take] if cc is not None else None,
                          ftz=view_space != "shared" and not dec.has(".noftz"))
        view[idx[take]] = np.asarray(new, cdt).view(udt) if np.asarray(new).dtype.itemsize == esz \
            else np.asarray(new).astype(cdt).view(udt)
        old_all[sel[take]] = cur
        mask = np.ones(len(rem), bool)
        mask[first] = False
        rem = rem[mask]


register("atom")(lambda p, d, i, s, dec: _atomic(p, d, i, s, dec, True))
register("red")(lambda p, d, i, s, dec: _atomic(p, d, i, s, dec, False))


# ----------------------------------------------------------------------------- cp.async
class CpRecord:
    __slots__ = ("idx", "banks", "offs", "data", "seq", "flat", "starts", "span")

    def __init__(self, idx, banks, offs, data, seq, flat=None, starts=None, span=None):
        self.idx, self.banks, self.offs, self.data, self.seq = idx, banks, offs, data, seq
        self.flat = flat          # async_proxy.track_cp_async: in-flight destination bytes
        self.starts = starts      # flat first bytes of the destinations (``BankedSpace.flat``)
        self.span = span          # (lowest, end) offset of the destinations, bounds checked


def _cp_state(ctx):
    if ctx.cp_committed is None:
        ctx.cp_committed = np.zeros(ctx.N, np.int64)
    return ctx.cp_committed


@register("cp.async")
def _cp_async(prog, d, ins, scope, dec):
    d.noun = "async copy"
    ops = list(ins.operands)
    gdst, _ = address_getter(prog, ops[0], scope)
    gsrc, _ = address_getter(prog, ops[1], scope)
    pk = provenance.addr_key(prog, ops[1], scope)
    size_get = reader(prog, ops[2], u32, scope)
    src_size = None
    ignore = None
    if len(ops) > 3:
        from ...ir.nodes import Reg
        o = ops[3]
        info = prog.reg(o.name, scope) if isinstance(o, Reg) and prog.has_reg(o.name, scope) else None
        if info is not None and info.bits == 1:
            ignore = reader(prog, o, pred, scope)
        elif not (isinstance(o, Reg) and info is not None and info.bits == 64 and len(ops) == 4 and dec.has(".L2::cache_hint")):
            src_size = reader(prog, o, u32, scope)

    def cp(ctx, g):
        committed = _cp_state(ctx)
        dst = gdst(ctx, g)
        src = gsrc(ctx, g)
        size = int(np.asarray(size_get(ctx, g)).flat[0])
        if size not in (4, 8, 16):
            raise InterpreterError(f"cp.async copy size must be 4, 8 or 16, got {size}")
        plain = src_size is None and ignore is None     # every thread copies ``size`` bytes
        if not plain:
            ss = np.full(g.n, size, np.int64)
            if src_size is not None:
                ss = np.broadcast_to(np.asarray(src_size(ctx, g), np.int64), (g.n,)).copy()
            if ignore is not None:
                ss = np.where(np.broadcast_to(ignore(ctx, g), (g.n,)), 0, ss)
        banks, offs = shared_banks(ctx, g, dst)
        offs = np.asarray(offs, np.uint64)
        span = ctx.shared.check_span(offs, size)        # bounds and alignment, once for issue and landing
        sp = M.Span(src, True)          # the sources' bounds and nest: provenance, the load and its checks
        if pk is not None and ctx.ptag:
            if plain:
                provenance.check(ctx, g, pk, src, size, span=sp)
            else:
                live = ss > 0                # src-size 0 (or ignore-src) reads nothing
                if live.all():
                    provenance.check(ctx, g, pk, src, np.minimum(ss, size).astype(np.uint64), span=sp)
                elif live.any():
                    from ..machine.group import Group
                    sub = Group(g.idx[live], g.pc, ctx.N)
                    try:
                        provenance.check(ctx, sub, pk, src[live], np.minimum(ss[live], size).astype(np.uint64))
                    except M.MemoryFault as f:
                        f.lane = int(np.nonzero(live)[0][f.lane])
                        raise
        if plain or (ss >= size).all():
            data = np.ascontiguousarray(space_load(ctx, g, "global", src, np.uint8, size, span=sp))
        else:
            data = np.zeros((g.n, size), np.uint8)
            for k in np.unique(ss):
                sel = np.nonzero(ss == k)[0]
                if k <= 0:
                    continue
                try:
                    part = ctx.mem.gspace.load(src[sel], np.uint8, int(min(k, size)), align=size)
                except M.MemoryFault as f:
                    f.lane = int(sel[f.lane])
                    raise
                data[sel, :int(min(k, size))] = part
        starts = ctx.shared.flat(banks, offs)
        flat = track_cp_async(ctx, banks, offs, size, d, starts, span)
        ctx.cp_pending.append(CpRecord(g.idx.copy(), banks, offs, data, committed[g.idx].copy(),
                                       flat, starts, span))
        if ctx.timeline is not None:        # in flight until the wait_group retiring it
            ctx.timeline.issue(ctx, "cp.async", g, committed, 1, size)
    d.fn = cp


def cp_complete(ctx, g, limit=None):
    """Complete pending cp.async of the threads of ``g`` whose group number is < limit
    (per thread), or all of them when limit is None."""
    if not ctx.cp_pending:
        return
    keep = []
    for r in ctx.cp_pending:
        pos = np.searchsorted(g.idx, r.idx)
        pos = np.minimum(pos, len(g.idx) - 1)
        mine = g.idx[pos] == r.idx
        if limit is not None:
            lim = limit[pos]
            mine &= r.seq < lim
        race = ctx.shared.race is not None
        if mine.all():                      # (the usual wait: every copy of the record lands)
            if r.flat is not None:
                cp_async_landed(ctx, r.flat, mine, 0)
            # the destinations were checked at issue (``span``): aligned to the copy size
            ctx.shared.store(r.banks, r.offs, r.data, warps=ctx.warp_in_cta[r.idx] if race else None,
                             span=r.span, starts=r.starts, aligned=True)
            continue
        if mine.any():
            if r.flat is not None:
                cp_async_landed(ctx, r.flat, mine, int((~mine).sum()))
            ctx.shared.store(r.banks[mine], r.offs[mine], r.data[mine],      # (bounds: checked again)
                             warps=ctx.warp_in_cta[r.idx[mine]] if race else None,
                             starts=r.starts[mine], aligned=True)
        rest = ~mine
        keep.append(CpRecord(r.idx[rest], r.banks[rest], r.offs[rest], r.data[rest], r.seq[rest],
                             None if r.flat is None else (r.flat[0][rest], r.flat[1]),
                             r.starts[rest], None if mine.any() else r.span))   # (span: of every row)
    ctx.cp_pending = keep


def _pending_hint(ctx, g, f):
    for r in ctx.cp_pending:
        hit = (r.offs <= np.uint64(f.address)) & (np.uint64(f.address) < r.offs + np.uint64(r.data.shape[1]))
        if hit.any():
            return " (a cp.async to this address is still pending: missing cp.async.wait_group / wait_all?)"
    return ""


@register("cp.async.commit_group")
def _cp_commit(prog, d, ins, scope, dec):
    def commit(ctx, g):
        c = _cp_state(ctx)
        c[g.idx] += 1
    d.fn = commit


@register("cp.async.wait_group")
def _cp_wait(prog, d, ins, scope, dec):
    n = reader(prog, ins.operands[0], u32, scope)

    def wait(ctx, g):
        c = _cp_state(ctx)
        k = int(np.asarray(n(ctx, g)).flat[0])
        if ctx.timeline is not None:
            ctx.timeline.retire(ctx, "cp.async", g, c - k, 1)
        cp_complete(ctx, g, c[g.idx] - k)
    d.fn = wait


@register("cp.async.wait_all")
def _cp_wait_all(prog, d, ins, scope, dec):
    def wait_all(ctx, g):
        c = _cp_state(ctx)
        c[g.idx] += 1
        if ctx.timeline is not None:
            ctx.timeline.retire(ctx, "cp.async", g, None, 1)
        cp_complete(ctx, g, None)
    d.fn = wait_all


@register("createpolicy")
def _createpolicy(prog, d, ins, scope, dec):
    """Cache eviction policies only steer the L2: a constant opaque policy is enough."""
    put = writer(prog, ins.operands[0], b64, scope)
    d.fn = lambda ctx, g: put(ctx, g, np.full(g.n, 0x1000000000000000, np.uint64))
