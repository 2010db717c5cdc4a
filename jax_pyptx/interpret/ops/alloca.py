"""Dynamic stack allocation: ``alloca.type ptr, size{, immAlign}``, ``stacksave.type d`` and
``stackrestore.type a`` (``.u32`` / ``.u64``). The stack model (a per-thread region of local
memory, its stack pointers, the frees at ``ret`` and the checks of accesses below the stack
pointer) is in ``stack``.

Per the ISA: ``alloca`` allocates ``size`` bytes aligned to ``max(immAlign, 8)`` (``immAlign``
a power of 2 no larger than 2^23, default 8) by lowering the stack pointer, and returns a local
address; ``stacksave`` reads the stack pointer and ``stackrestore`` sets it to a value a
``stacksave`` returned, freeing what was allocated since.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ..state import stack as S
from ...ir.nodes import Imm
from ..state.operands import np_dtype, parse_int, reader, writer
from ..machine.registry import register

_MAX_ALIGN = 1 << 23


def _imm_align(ins):
    if len(ins.operands) < 3:
        return S.FRAME_ALIGN
    op = ins.operands[2]
    if not isinstance(op, Imm):
        raise InterpreterError(f"alloca: immAlign must be an integer constant, got {op!r}")
    v = parse_int(op.text)
    if v <= 0 or v & (v - 1) or v > _MAX_ALIGN:
        raise InterpreterError(f"alloca: immAlign is {v}; it must be a power of 2 no larger than 2^23")
    return max(v, S.FRAME_ALIGN)


@register("alloca")
def _alloca(prog, d, ins, scope, dec):
    S.enable(prog)
    t = dec.type
    put = writer(prog, ins.operands[0], t, scope)
    gsize = reader(prog, ins.operands[1], t, scope)
    align = np.uint64(_imm_align(ins))
    dt = np_dtype(t)

    def alloca(ctx, g):
        sp = S.pointers(ctx)
        base, top = S.base_top(ctx.prog)
        size = np.broadcast_to(np.asarray(gsize(ctx, g)).astype(np.uint64), (g.n,))
        old = sp[g.idx]
        free = old - np.uint64(base)
        bad = size > free
        new = np.where(bad, np.uint64(0), old - np.where(bad, np.uint64(0), size))
        new = new - new % align
        bad |= new < np.uint64(base)
        if bad.any():
            j = int(np.argmax(bad))
            raise ctx.error(InterpreterError,
                            f"alloca: stack overflow: {int(size[j])} bytes aligned to {int(align)} do not "
                            f"fit in the {int(free[j])} bytes left of this thread's "
                            f"{S.STACK_BYTES}-byte stack (local [{base:#x}, {top:#x}))", g, j, d)
        sp[g.idx] = new
        put(ctx, g, new.astype(dt))
    d.fn = alloca


@register("stacksave")
def _stacksave(prog, d, ins, scope, dec):
    S.enable(prog)
    put = writer(prog, ins.operands[0], dec.type, scope)
    dt = np_dtype(dec.type)

    def stacksave(ctx, g):
        put(ctx, g, S.pointers(ctx)[g.idx].astype(dt))
    d.fn = stacksave


@register("stackrestore")
def _stackrestore(prog, d, ins, scope, dec):
    S.enable(prog)
    get = reader(prog, ins.operands[0], dec.type, scope)

    def stackrestore(ctx, g):
        sp = S.pointers(ctx)
        base, top = S.base_top(ctx.prog)
        a = np.broadcast_to(np.asarray(get(ctx, g)).astype(np.uint64), (g.n,))
        bad = (a < np.uint64(base)) | (a > np.uint64(top)) | (a % np.uint64(S.FRAME_ALIGN) != 0)
        if bad.any():
            j = int(np.argmax(bad))
            raise ctx.error(InterpreterError,
                            f"stackrestore: {int(a[j]):#x} is not a stack pointer of this thread's stack "
                            f"(local [{base:#x}, {top:#x}]); restore a value stacksave returned", g, j, d)
        sp[g.idx] = a
    d.fn = stackrestore
