"""Decode a laid-out ``Program`` into handlers: each instruction is decoded by the ISA table
(``isa.decode``: its form and chosen modifiers) and handed to the factory registered for the
form's name (``registry``), which fills in the ``Decoded`` record.

Forms the table marks ``cpu="nop"`` (fences, prefetches, scheduling hints) do nothing. An
instruction the interpreter cannot decode gets a handler that raises when (and only when) it
is executed, so kernels with an unsupported instruction on a path never taken still run.
"""
from __future__ import annotations

from ...errors import InterpreterError, ValidationError
from ...isa import decode, decode_parts
from ..machine.registry import HANDLERS, K_CTRL, K_NOP, K_OP
from . import issue_runs, native, segments, store_runs, wgmma_runs

# the instruction families register their handlers on import
from ..ops import (alloca, bits, bulk, cluster_ops, control, convert, floating, integer,  # noqa: F401
                   launch_control, load_store, mbarrier_ops, mma, mma_sparse, setmaxnreg, tcgen05,
                   tcgen05_mma, tma, warp, wgmma, wmma)


def decode_program(prog) -> None:
    """Give every instruction of ``prog`` (laid out by ``Program``) its handler."""
    pending, prog._pending = prog._pending, None
    pure, names, writes = {}, {}, {}
    for d, ins, scope in pending:
        dec = decode_instruction(prog, d, ins, scope)
        names[d.pc] = segments.register_keys(prog, ins, scope)
        w = issue_runs.written_keys(prog, ins, scope)
        if w:
            writes[d.pc] = w
        if dec is not None and d.kind == K_OP:
            info = segments.describe(prog, d, ins, scope, dec)
            if info is not None:
                pure[d.pc] = info
                d.nat = native.encode(prog, ins, scope, dec)
    segments.plan(prog.code, pure, names)
    # the runs hoist their arithmetic over memory accesses: not a warp shuffle, which orders
    # its warps' shared accesses for the race checker (ops.warp)
    arith = {pc: info for pc, info in pure.items() if prog.code[pc].lanes is None}
    store_runs.plan(prog.code, arith, names)
    wgmma_runs.plan(prog.code, arith, names)
    issue_runs.plan(prog.code, arith, names, writes)


def _decoding(ins):
    try:
        return decode(ins)
    except ValidationError:
        # the table knows the modifiers but not this operand count: let the handler judge
        return decode_parts(ins.opcode, ins.modifiers)


def decode_instruction(prog, d, ins, scope):
    if ins.guard is not None:
        d.guard = prog.reg(ins.guard.reg, scope).key
        d.gneg = ins.guard.negated
    try:
        try:
            dec = _decoding(ins)
        except ValidationError as e:
            raise InterpreterError(f"the interpreter cannot decode this instruction: {e.message}") from None
        if dec.form.cpu == "nop":
            d.kind = K_NOP
            return
        f = HANDLERS.get(dec.form.name)
        if f is None:
            raise InterpreterError(f"the interpreter does not support instruction {ins.opcode!r}")
        f(prog, d, ins, scope, dec)
        return dec
    except InterpreterError as e:
        _defer(d, e.message)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        _defer(d, f"cannot decode this instruction ({type(e).__name__}: {e})")


def _defer(d, message):
    d.kind = K_CTRL
    d.sync = None

    def unsupported(ctx, sub, g):
        raise ctx.error(InterpreterError, message.rstrip("."), sub, 0, d)
    d.fn = unsupported
