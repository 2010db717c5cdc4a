"""Control flow: bra, brx, exit, ret, trap/brkpt, call (with the ``vprintf`` and
``__assertfail`` builtins) and the CTA / warp barriers (cluster barriers: ``ops.cluster_ops``)."""
from __future__ import annotations

import sys

import numpy as np

from ...errors import DivergenceError, InterpreterError, KernelTrapError
from ...ir.nodes import ParenList, Reg, Sym
from ...types import u32
from ..machine.group import Group
from ..state.operands import reader, writer
from ..machine.registry import K_BRA, K_CTRL, K_EXIT, K_OP, register
from ..sanitizer.smem_races import warp_synced
from ..machine.barriers import _lanes


# ----------------------------------------------------------------------------- branches
@register("bra")
def _bra(prog, d, ins, scope, dec):
    tgt = ins.operands[0]
    if not isinstance(tgt, Sym):
        raise InterpreterError("indirect branches are not supported")
    pc = prog.label(d.func, tgt.name, scope)
    if pc is None:
        raise InterpreterError(f"unknown label {tgt.name!r}")
    d.kind = K_BRA
    d.target = pc


@register("brx")
def _brx(prog, d, ins, scope, dec):
    """brx.idx index, tlist: jump to entry ``index`` of a ``.branchtargets`` list."""
    idx_op, tl = ins.operands[0], ins.operands[1]
    if not isinstance(tl, Sym):
        raise InterpreterError("brx.idx needs the label of a .branchtargets list")
    names = prog.branchtargets.get((d.func, tl.name))
    if names is None:
        raise InterpreterError(f"no .branchtargets list labelled {tl.name!r}")
    pcs = []
    for nm in names:
        pc = prog.label(d.func, nm, scope)
        if pc is None:
            raise InterpreterError(f"unknown label {nm!r} in .branchtargets {tl.name}")
        pcs.append(pc)
    pcs = np.array(pcs, np.int64)
    get = reader(prog, idx_op, u32, scope)
    d.kind = K_CTRL

    def brx(ctx, sub, g):
        i = np.broadcast_to(np.asarray(get(ctx, sub)).astype(np.int64), (sub.n,))
        if (i >= len(pcs)).any():
            j = int(np.argmax(i >= len(pcs)))
            raise ctx.error(InterpreterError, f"brx.idx index {int(i[j])} is outside its {len(pcs)} targets",
                            sub, j, d)
        tgt = pcs[i]
        out = []
        for t in np.unique(tgt):
            sel = tgt == t
            out.append(Group(sub.idx[sel], int(t), ctx.N))
        if sub is not g:
            out.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, ctx.N))
        return out
    d.fn = brx


@register("exit")
def _exit(prog, d, ins, scope, dec):
    d.kind = K_EXIT


@register("trap", "brkpt")
def _trap(prog, d, ins, scope, dec):
    d.kind = K_CTRL

    def trap(ctx, sub, g):
        raise ctx.error(KernelTrapError, f"the kernel executed {ins.opcode}", sub, 0, d)
    d.fn = trap


@register("ret")
def _ret(prog, d, ins, scope, dec):
    if d.func == prog.name:
        d.kind = K_EXIT
        return
    d.kind = K_CTRL

    def ret(ctx, sub, g):
        depth = ctx.cs_depth[sub.idx] - 1
        rpc = ctx.cs_pc[sub.idx, depth]
        ctx.cs_depth[sub.idx] = depth
        if ctx.stack_sp is not None:          # free the function's alloca memory
            ctx.stack_sp[sub.idx] = ctx.cs_sp[sub.idx, depth]
        rest = None if sub is g else Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, ctx.N)
        out = [] if rest is None else [rest]
        for r in np.unique(rpc):
            sel = rpc == r
            h = sub if sel.all() else Group(sub.idx[sel], 0, ctx.N)
            callsite = ctx.code[int(r) - 1]
            callsite.fn.returned(ctx, h)
            h.pc = int(r)
            out.append(h)
        return out
    d.fn = ret


# ----------------------------------------------------------------------------- calls
@register("call")
def _call(prog, d, ins, scope, dec):
    ops = list(ins.operands)
    rets, args = (), ()
    if ops and isinstance(ops[0], ParenList):
        rets = ops.pop(0).items
    fsym = ops.pop(0) if ops else None
    if ops and isinstance(ops[0], ParenList):
        args = ops.pop(0).items
    if not isinstance(fsym, Sym):
        raise InterpreterError("indirect calls (through a register) are not supported")
    name = fsym.name
    d.kind = K_CTRL
    if name in prog.funcs:
        start, callee, cscope = prog.funcs[name]
        if name == d.func or _reaches(prog, name, d.func):
            raise InterpreterError(f"recursive call to {name!r} is not supported")
        binds_in = [_binding(prog, a, p, scope, cscope) for a, p in zip(args, callee.params)]
        binds_out = [_binding(prog, r, p, scope, cscope, reverse=True) for r, p in zip(rets, callee.ret_params)]

        def call(ctx, sub, g):
            for b in binds_in:
                b(ctx, sub)
            ctx.push_call(sub, d.pc + 1)
            sub.pc = start
            if sub is g:
                return [sub]
            rest = Group(g.idx[~np.isin(g.idx, sub.idx)], d.pc + 1, ctx.N)
            return [sub, rest]

        def returned(ctx, h):
            for b in binds_out:
                b(ctx, h)
        call.returned = returned
        d.fn = call
        return
    builtin = _BUILTINS.get(name)
    if builtin is None:
        raise InterpreterError(f"call to {name!r}, which has no body in this module")
    d.fn = builtin(prog, d, rets, args, scope)


def _reaches(prog, src, dst):
    """Does function ``src`` (transitively) call ``dst``?"""
    seen = set()
    stack = [src]
    while stack:
        f = stack.pop()
        if f in seen:
            continue
        seen.add(f)
        try:
            fn = prog.module.function(f)
        except KeyError:
            continue
        for ins in _instructions(fn.body or []):
            if ins.opcode == "call":
                for o in ins.operands:
                    if isinstance(o, Sym):
                        if o.name == dst:
                            return True
                        stack.append(o.name)
    return False


def _instructions(body):
    from ...ir.nodes import Block, Instruction
    for s in body:
        if isinstance(s, Instruction):
            yield s
        elif isinstance(s, Block):
            yield from _instructions(s.body)


def _binding(prog, actual, formal_param, ascope, fscope, reverse=False):
    """Copy one call argument (actual -> formal) or one return value (formal -> actual)."""
    # formal parameter location in the callee
    size = formal_param.type.nbytes * (formal_param.array or 1)
    if reverse:
        src_op, src_scope, dst_op, dst_scope = formal_param, fscope, actual, ascope
    else:
        src_op, src_scope, dst_op, dst_scope = actual, ascope, formal_param, fscope

    def loc(op, sc):
        name = op.name if hasattr(op, "name") else None
        e = sc.get(name) if name else None
        if e is not None and e[0] == "reg":
            return ("reg", e[1])
        if e is not None and e[0] == "sym" and e[1][0] == "plocal":
            return ("plocal", e[1][1])
        return ("value", op)
    s = loc(src_op, src_scope)
    t = loc(dst_op, dst_scope)
    from ...ir.nodes import Param
    if isinstance(src_op, Param):
        src_op = Reg(src_op.name) if s[0] == "reg" else Sym(src_op.name)
    if isinstance(dst_op, Param):
        dst_op = Reg(dst_op.name) if t[0] == "reg" else Sym(dst_op.name)
    ptype = formal_param.type
    if s[0] == "plocal" and t[0] == "plocal":
        so, to = s[1], t[1]

        def copy(ctx, g):
            banks = g.idx
            data = ctx.local.load(banks, np.full(g.n, so, np.uint64), np.uint8, size, align=1)
            ctx.local.store(banks, np.full(g.n, to, np.uint64), data, align=1)
        return copy
    from ..state.operands import np_dtype
    if t[0] == "reg":
        get = reader(prog, src_op, ptype, src_scope) if s[0] != "plocal" else None
        put = writer(prog, dst_op, ptype, dst_scope)
        if get is None:
            so = s[1]

            def copy(ctx, g):
                v = ctx.local.load(g.idx, np.full(g.n, so, np.uint64), np_dtype(ptype))[:, 0]
                put(ctx, g, v)
            return copy
        return lambda ctx, g: put(ctx, g, get(ctx, g))
    if t[0] == "plocal":
        to = t[1]
        get = reader(prog, src_op, ptype, src_scope)
        dt = np_dtype(ptype)

        def copy(ctx, g):
            v = np.broadcast_to(np.asarray(get(ctx, g), dt), (g.n,))
            ctx.local.store(g.idx, np.full(g.n, to, np.uint64), v.reshape(-1, 1).copy())
        return copy
    raise InterpreterError(f"cannot bind call argument {actual!r}")


# ----------------------------------------------------------------------------- builtins
def _plocal_off(prog, op, scope):
    e = scope.get(op.name) if isinstance(op, (Sym, Reg)) else None
    if e is not None and e[0] == "sym" and e[1][0] == "plocal":
        return e[1][1]
    return None


def _vprintf(prog, d, rets, args, scope):
    offs = [_plocal_off(prog, a, scope) for a in args]
    roff = _plocal_off(prog, rets[0], scope) if rets else None

    def vprintf(ctx, sub, g):
        from . import load_store as om
        n = sub.n
        fmt_addr = ctx.local.load(sub.idx, np.full(n, offs[0], np.uint64), np.uint64)[:, 0]
        buf_addr = (ctx.local.load(sub.idx, np.full(n, offs[1], np.uint64), np.uint64)[:, 0]
                    if len(offs) > 1 and offs[1] is not None else np.zeros(n, np.uint64))
        for j in range(n):
            one = Group(sub.idx[j:j + 1], 0, ctx.N)
            text = _format(ctx, one, int(fmt_addr[j]), int(buf_addr[j]), om)
            sys.stdout.write(text)
        sys.stdout.flush()
        if roff is not None:
            ctx.local.store(sub.idx, np.full(n, roff, np.uint64), np.zeros((n, 1), np.int32))
        return None
    return vprintf


def _read_cstring(ctx, g, addr, om, limit=4096):
    out = bytearray()
    while len(out) < limit:
        b = int(om.generic_load(ctx, g, np.array([addr + len(out)], np.uint64), np.uint8)[0, 0])
        if b == 0:
            break
        out.append(b)
    return out.decode("utf-8", "replace")


def _format(ctx, g, fmt_addr, buf_addr, om):
    import re
    fmt = _read_cstring(ctx, g, fmt_addr, om)
    pos = [0]

    def arg(size, dt):
        off = -(-pos[0] // size) * size
        pos[0] = off + size
        return om.generic_load(ctx, g, np.array([buf_addr + off], np.uint64), dt)[0, 0]

    def conv(m):
        spec = m.group(0)
        if spec == "%%":
            return "%"
        flags, length, c = m.group(1), m.group(2), m.group(3)
        if c in "diouxXc":
            wide = length in ("l", "ll", "z", "j", "t")
            v = int(arg(8, np.int64 if c in "di" else np.uint64)) if wide else int(
                arg(4, np.int32 if c in "di" else np.uint32))
            if c == "c":
                return chr(v & 0xFF)
            return ("%" + flags + (c if c != "u" else "d")) % v
        if c in "feEgGaA":
            v = float(arg(8, np.float64))
            return ("%" + flags + c) % v
        if c == "s":
            a = int(arg(8, np.uint64))
            return ("%" + flags + "s") % _read_cstring(ctx, g, a, om)
        if c == "p":
            return hex(int(arg(8, np.uint64)))
        return spec
    return re.sub(r"%([-+ #0-9.*]*)(hh|h|ll|l|z|j|t|L)?([diouxXcfeEgGaAsp%])", conv, fmt)


def _assertfail(prog, d, rets, args, scope):
    offs = [_plocal_off(prog, a, scope) for a in args]

    def assertfail(ctx, sub, g):
        from . import load_store as om
        one = Group(sub.idx[:1], 0, ctx.N)

        def s(i):
            a = int(ctx.local.load(one.idx, np.array([offs[i]], np.uint64), np.uint64)[0, 0])
            return _read_cstring(ctx, one, a, om)
        msg, file = s(0), s(1)
        line = int(ctx.local.load(one.idx, np.array([offs[2]], np.uint64), np.uint32)[0, 0])
        func = s(3)
        raise ctx.error(KernelTrapError, f"device assertion `{msg}` failed in {func} at {file}:{line}",
                        sub, 0, d)
    return assertfail


_BUILTINS = {"vprintf": _vprintf, "__assertfail": _assertfail}


# ----------------------------------------------------------------------------- barriers
def _bar_operands(prog, ins, scope, first=0):
    ops = ins.operands[first:]
    bar = reader(prog, ops[0], u32, scope)
    cnt = reader(prog, ops[1], u32, scope) if len(ops) > 1 else None
    return bar, cnt


def _scalar_or_array(v):
    a = np.asarray(v)
    if a.ndim == 0:
        return int(a)
    if (a == a[0]).all():
        return int(a[0])
    return a.astype(np.int64)


def _barrier(wait: bool, always_aligned: bool):
    """bar.sync / bar.arrive (always .aligned) and barrier.sync / barrier.arrive (.aligned
    optional): arrive at barrier ``a`` (with ``b`` threads), and wait when ``wait``."""
    def factory(prog, d, ins, scope, dec):
        aligned = always_aligned or dec.has(".aligned")
        bar, cnt = _bar_operands(prog, ins, scope)
        d.kind = K_CTRL
        if aligned:
            d.sync = "aligned"

        def barrier(ctx, sub, g):
            b = _scalar_or_array(bar(ctx, sub))
            c = None if cnt is None else _scalar_or_array(cnt(ctx, sub))
            r = ctx.bar_arrive(sub, b, c, wait=wait, aligned=aligned)
            if r is None and sub is g:
                return None
            if r is None:
                r = []
                sub.pc = g.pc + 1
                r.append(sub)
            if sub is not g:
                r.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, ctx.N))
            return r
        d.fn = barrier
    return factory


register("bar.sync")(_barrier(wait=True, always_aligned=True))
register("bar.arrive")(_barrier(wait=False, always_aligned=True))
register("barrier.sync")(_barrier(wait=True, always_aligned=False))
register("barrier.arrive")(_barrier(wait=False, always_aligned=False))


@register("bar.red", "barrier.red")
def _bar_red(prog, d, ins, scope, dec):
    kind = dec.get("op")[1:]          # popc | and | or
    dst = ins.operands[0]
    bar = reader(prog, ins.operands[1], u32, scope)
    cnt = reader(prog, ins.operands[2], u32, scope) if len(ins.operands) > 3 else None
    from ...types import pred
    cond = reader(prog, ins.operands[-1], pred, scope)
    put = writer(prog, dst, u32 if kind == "popc" else pred, scope)
    d.kind = K_CTRL
    d.sync = "aligned"
    aligned = ins.opcode == "bar.red" or dec.has(".aligned")

    def putval(ctx, g, val):
        if kind == "popc":
            put(ctx, g, np.full(g.n, val, np.uint32))
        else:
            put(ctx, g, np.full(g.n, bool(val), np.bool_))

    def barred(ctx, sub, g):
        b = _scalar_or_array(bar(ctx, sub))
        c = None if cnt is None else _scalar_or_array(cnt(ctx, sub))
        vals = np.broadcast_to(np.asarray(cond(ctx, sub), bool), (sub.n,))
        r = ctx.bar_arrive(sub, b, c, wait=True, red=(kind, vals, putval), aligned=aligned)
        if r is None:
            if sub is not g:
                return [Group(g.idx, g.pc + 1, ctx.N)]
            return None
        return r
    d.fn = barred


@register("bar.warp.sync")
def _bar_warp(prog, d, ins, scope, dec):
    mask = reader(prog, ins.operands[0], u32, scope)
    d.kind = K_OP
    d.sync = lambda ctx, g: mask(ctx, g)

    def warp_sync(ctx, sub):
        if ctx.sanitize:
            _gone_lanes(ctx, sub, mask(ctx, sub))
        warp_synced(ctx, sub)           # orders the lanes' shared accesses (sanitizer)
    d.fn = warp_sync


def _gone_lanes(ctx, g, mask):
    """``bar.warp.sync`` naming lanes that exited or do not exist (past a partial warp's end):
    the PTX ISA waits for *all* threads of the membermask; GPUs (and CUDA's ``__syncwarp``, which
    asks only for the non-exited ones) release the barrier without them. A warning."""
    mask = np.asarray(mask)
    if mask.ndim == 0:              # one mask (an immediate): looked at once per warp of the group
        if not (np.uint64(int(mask) & 0xFFFFFFFF) & ~ctx.live_mask[g.warp_masks()[0]]).any():
            return
    m = np.broadcast_to(mask.astype(np.uint64), (g.n,)) & np.uint64(0xFFFFFFFF)
    gone = m & ~ctx.live_mask[g.idx >> 5]
    if not gone.any():
        return
    j = int(np.argmax(gone != 0))
    w = int(g.idx[j]) >> 5
    wl = w % ctx.W
    exist = (1 << min(32, ctx.T - wl * 32)) - 1
    lost = int(gone[j])
    parts = []
    if lost & exist:
        parts.append(f"lanes {_lanes(lost & exist)} have exited")
    if lost & ~exist:
        parts.append(f"lanes {_lanes(lost & ~exist)} do not exist (warp {wl} of a {ctx.T}-thread CTA is partial)")
    ctx.warn(DivergenceError,
             f"membermask {int(m[j]):#010x} names lanes that will never arrive: {' and '.join(parts)}; the PTX "
             f"ISA has bar.warp.sync wait for every thread of its membermask, GPUs release it without them "
             f"(name only the lanes that take part, e.g. from activemask or a vote)", g, j)
