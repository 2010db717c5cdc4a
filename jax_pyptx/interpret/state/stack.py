"""The per-thread stack of ``alloca`` / ``stacksave`` / ``stackrestore`` (``ops.alloca``).

A program that uses one of them gets ``STACK_BYTES`` more bytes of local memory per thread,
after its ``.local`` variables: the stack region ``[prog.stack_base, prog.stack_base +
STACK_BYTES)`` of each thread's local bank. The stack grows down from the top: every thread's
stack pointer starts at the top, ``alloca`` lowers it, ``stackrestore`` sets it back, and a
function's ``ret`` restores the value it had at the ``call`` (the ISA frees a function's
``alloca`` memory when it returns). Addresses are local-memory offsets, as ``ld.local`` /
``st.local`` take them (``cvta.local`` makes them generic).

Accesses to the stack region below a thread's stack pointer touch memory that is not (or no
longer) allocated; ``check_access`` reports them.
"""
from __future__ import annotations

import numpy as np

from . import memory as M

STACK_BYTES = 1024        # per thread, as CUDA's default cudaLimitStackSize
FRAME_ALIGN = 8           # alloca's minimum guaranteed alignment (the ISA's frame_align)


def enable(prog) -> None:
    """Give ``prog`` a stack region (once), after its local variables."""
    if prog.stack_base is None:
        base = -(-prog.local_size // 16) * 16
        prog.stack_base = base
        prog.local_size = base + STACK_BYTES


def base_top(prog):
    return prog.stack_base, prog.stack_base + STACK_BYTES


def pointers(ctx) -> np.ndarray:
    """The stack pointers of every slot (uint64 local offsets), made at the first use."""
    if ctx.stack_sp is None:
        ctx.stack_sp = np.full(ctx.N, base_top(ctx.prog)[1], np.uint64)
    return ctx.stack_sp


def check_access(ctx, g, offs, nbytes: int) -> None:
    """Raise ``MemoryFault`` for a local access of ``nbytes`` at ``offs`` that touches the stack
    region below the accessing thread's stack pointer."""
    if ctx.stack_sp is None:
        return
    base, top = base_top(ctx.prog)
    offs = np.asarray(offs, np.uint64)
    sp = ctx.stack_sp[g.idx]
    end = offs + np.uint64(nbytes)
    bad = (end > np.uint64(base)) & (offs < np.uint64(top)) & (offs < sp)
    if bad.any():
        j = int(np.argmax(bad))
        a = int(offs[j])
        raise M.MemoryFault("out-of-bounds", j, a,
                            f"local address {a:#x} is in this thread's alloca stack "
                            f"[{base:#x}, {top:#x}) below its stack pointer {int(sp[j]):#x}: memory not "
                            f"allocated by alloca, or freed by stackrestore or a return", "local")
