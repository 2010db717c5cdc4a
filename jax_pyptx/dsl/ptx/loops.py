"""Loop and pipeline helpers of the documented surface: ``ptx.kloop``, ``ptx.pipeline``,
``ptx.pipe``, ``ptx.expr``.

``ptx.kloop(total, unroll=4, body=step)`` runs ``step()`` ``total`` times: unrolled in Python
for an int, a PTX loop of ``unroll`` copies plus a remainder for a register::

    ptx.kloop(k_tiles, unroll=2, body=lambda: mma_step())

``st = ptx.pipeline(3)`` keeps a stage cursor and a phase bit in registers;
``stage, phase = st.advance()`` moves to the next stage, flipping the phase on wrap-around.
"""
from __future__ import annotations

import contextlib

from ...errors import PtxTypeError, PtxValueError
from ...ir.nodes import Guard, Imm, Sym
from ...types import pred as pred_t, u32
from .. import context
from ..context import user_loc
from ..values import Register, Special, as_operand, materialize
from .control import if_

__all__ = ["kloop", "pipeline", "PipelineState", "pipe", "expr"]


def kloop(total, *, unroll: int, body, loop_label: str = "kloop") -> None:
    """Call ``body()`` ``total`` times (see the module docstring). For a register ``total``:
    ``rem = total & (unroll-1)``, ``rounded = total - rem``; when ``total >= unroll`` a loop
    labelled ``loop_label`` runs ``unroll`` bodies per trip over ``rounded``; then nested
    ``if``s run the ``rem`` remaining bodies.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     acc = reg.scalar(u32, 0)
        ...     ptx.kloop(8, unroll=4, body=lambda: acc.set(acc + 1))
        >>> sum(line.startswith("add.u32") for line in t.lines())
        8
    """
    fn = "ptx.kloop"
    if not isinstance(unroll, int) or isinstance(unroll, bool) or unroll <= 0 or \
            unroll & (unroll - 1):
        raise PtxValueError(f"{fn}: unroll={unroll!r} must be a positive power of two",
                            loc=user_loc())
    if not callable(body):
        raise PtxTypeError(f"{fn}: body must be a callable (the step to repeat), got {body!r}",
                           loc=user_loc())
    if isinstance(total, int) and not isinstance(total, bool):
        for _ in range(total):
            body()
        return
    if isinstance(total, Special):
        total = materialize(total)
    if not isinstance(total, Register) or total.type.kind not in ("signed", "unsigned",
                                                                    "bits"):
        raise PtxTypeError(f"{fn}: total must be an int or an integer register, got {total!r}",
                           loc=user_loc())
    tr = context.current(fn)
    loc = user_loc()
    t = total.type
    ct = f".u{t.bits}" if t.kind == "bits" else t.ptx
    rem = total & (unroll - 1)
    rounded = total - rem
    with if_(total >= unroll):
        left = Register(tr.new_reg(t), tr)
        tr.emit("mov", (f".b{t.bits}" if t.kind == "bits" else t.ptx,), (left.ir, rounded.ir),
                loc=loc)
        keep = Register(tr.new_reg(pred_t), tr)
        tr.emit("setp", (".ne", ct), (keep.ir, left.ir, Imm("0", t)), loc=loc)
        label = loop_label
        if label in tr.labels_defined:
            label = tr.new_label(loop_label).lstrip("$")
        tr.place_label(label, loc)
        tr.chain = None
        for _ in range(unroll):
            body()
        left -= unroll
        tr.emit("setp", (".ne", ct), (keep.ir, left.ir, Imm("0", t)), loc=loc)
        tr.labels_used.setdefault(label, loc)
        tr.emit("bra", (), (Sym(label),), Guard(keep.name, False), loc)
    if unroll > 1:
        _remainder(rem, 0, unroll, body)


def _remainder(rem, i, unroll, body):
    """``if rem != i: body(); (if rem != i+1: ...)``: ``rem`` bodies in all."""
    with if_(rem != i):
        body()
        if i + 1 <= unroll - 2:
            _remainder(rem, i + 1, unroll, body)


class PipelineState:
    """A pipeline's stage cursor and phase bit (u32 registers); see :func:`pipeline`."""

    def __init__(self, n_stages: int, cursor, phase):
        self.n_stages, self.cursor, self.phase = n_stages, cursor, phase

    def advance(self):
        """Move to the next stage: ``setp.eq.u32 w, cursor, n; selp.u32 f, 1, 0, w;
        xor.b32 phase, phase, f; selp.u32 s, 0, cursor, w; add.s32 cursor, s, 1;``.
        Returns ``(stage, phase)`` (``stage`` a fresh register)."""
        tr = context.current("PipelineState.advance")
        loc = user_loc()
        n = Imm(str(self.n_stages), u32)
        w = Register(tr.new_reg(pred_t), tr)
        tr.emit("setp", (".eq", ".u32"), (w.ir, as_operand(self.cursor), n), loc=loc)
        f = Register(tr.new_reg(u32), tr)
        tr.emit("selp", (".u32",), (f.ir, Imm("1", u32), Imm("0", u32), w.ir), loc=loc)
        tr.emit("xor", (".b32",), (as_operand(self.phase), as_operand(self.phase), f.ir),
                loc=loc)
        s = Register(tr.new_reg(u32), tr)
        tr.emit("selp", (".u32",), (s.ir, Imm("0", u32), as_operand(self.cursor), w.ir),
                loc=loc)
        tr.emit("add", (".s32",), (as_operand(self.cursor), s.ir, Imm("1", u32)), loc=loc)
        return s, self.phase


def pipeline(n_stages: int, *, cursor=None, phase=None) -> PipelineState:
    """A :class:`PipelineState` over ``n_stages`` stages; ``cursor`` and ``phase`` default to
    new u32 registers set to 0.

    Examples:
        >>> from jax_pyptx import ptx
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     ps = ptx.pipeline(3)            # stage cursor and phase bit, both 0
        ...     _ = ps.advance()                # next stage; the phase flips after the last one
        >>> for line in t.lines():
        ...     print(line)
        mov.u32 %r0, 0;
        mov.u32 %r1, 0;
        setp.eq.u32 %p0, %r0, 3;
        selp.u32 %r2, 1, 0, %p0;
        xor.b32 %r1, %r1, %r2;
        selp.u32 %r3, 0, %r0, %p0;
        add.s32 %r0, %r3, 1;
    """
    from ..reg import scalar

    if not isinstance(n_stages, int) or isinstance(n_stages, bool) or n_stages <= 0:
        raise PtxValueError(f"ptx.pipeline: n_stages={n_stages!r} must be a positive int",
                            loc=user_loc())
    for name, v in (("cursor", cursor), ("phase", phase)):
        if v is not None and (not isinstance(v, Register) or v.type.bits != 32):
            raise PtxTypeError(f"ptx.pipeline: {name} must be a 32-bit register, got {v!r}",
                               loc=user_loc())
    cursor = cursor if cursor is not None else scalar(u32, 0)
    phase = phase if phase is not None else scalar(u32, 0)
    return PipelineState(n_stages, cursor, phase)


class _Pipe:
    """``ptx.pipe(src).op.mod(dst, *rest)``: one instruction per step, the previous
    destination (first ``src``) as its first source."""

    __slots__ = ("_prev", "_parts")

    def __init__(self, prev, parts=()):
        self._prev, self._parts = prev, parts

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        from .generic import unescape

        return _Pipe(self._prev, self._parts + (unescape(attr),))

    def __call__(self, dst, *rest, pred=None):
        from .generic import emit_inst

        if not self._parts:
            raise PtxTypeError("ptx.pipe(x) needs an opcode: ptx.pipe(x).add.u32(d, 1)",
                               loc=user_loc())
        emit_inst(".".join(self._parts), (dst, self._prev) + rest, pred, user_loc())
        return _Pipe(dst)

    @property
    def value(self):
        """The last destination (the chain's result)."""
        return self._prev


def pipe(src) -> _Pipe:
    """Start an instruction chain at ``src``: ``ptx.pipe(x).mul.lo.u32(t, 4).add.u32(t, 8)``
    emits ``mul.lo.u32 t, x, 4; add.u32 t, t, 8;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     x, s = reg.scalar(u32), reg.scalar(u32)
        ...     _ = ptx.pipe(x).mul.lo.u32(s, 4).add.u32(s, 8)
        >>> t.lines()
        ['mul.lo.u32 %r1, %r0, 4;', 'add.u32 %r1, %r1, 8;']
    """
    return _Pipe(src)


@contextlib.contextmanager
def expr():
    """``with ptx.expr():`` groups the instructions emitted inside (for readability); the PTX
    is the same as without it.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 1)
        ...     with ptx.expr():
        ...         s = r * 3 + 1
        >>> t.lines()
        ['mov.u32 %r0, 1;', 'mul.lo.u32 %r1, %r0, 3;', 'add.u32 %r2, %r1, 1;']
    """
    context.current("ptx.expr")
    yield
