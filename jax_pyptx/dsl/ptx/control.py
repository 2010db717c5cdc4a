"""Structured control flow: ``if_``/``elif_``/``else_``, ``while_``, ``range_``,
``static_range``, ``break_``/``continue_``, labels and branches.

Labels are unique per trace (``$L_<hint>_<n>``). ``if_(p)`` branches around its body with
``@!p bra``; an ``elif_``/``else_`` that follows adds the jump to the chain's end label.
"""
from __future__ import annotations

import re
from contextlib import contextmanager

from ...errors import PtxTypeError, TraceError
from ...ir.nodes import Guard, Instruction, Sym
from ...types import PtxType, s32
from .. import context
from ..context import user_loc
from ..reg import scalar
from ..values import NotPred, Register, Special, as_operand


class LabelRef:
    """A label created by ``ptx.label``; place it with ``ptx.place(lbl)``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     done = ptx.label("done")
        >>> done
        Label($L_done_0)
    """

    __slots__ = ("name", "loc", "trace", "here")

    def __init__(self, name, loc, trace, here=None):
        self.name, self.loc, self.trace = name, loc, trace
        self.here = here        # (body, Label node) of the label placed where it was created

    def __ptx_operand__(self):
        return Sym(self.name)

    def __repr__(self):
        return f"Label({self.name})"


_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def label(name: str | None = None) -> LabelRef:
    """Two uses, both supported:

    - ``ptx.label("loop")`` places the label ``loop:`` right here (branch to it with
      ``ptx.bra("loop")``), as in the documented pyptx surface;
    - ``lbl = ptx.label("done")`` ... ``ptx.place(lbl)``: a fresh label ``$L_done_<n>`` placed
      where ``ptx.place`` runs (branch with ``ptx.bra(lbl)``). Placing it withdraws the
      ``done:`` of the first use unless something branched to ``"done"`` by name.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.label("top")
        ...     ptx.bra("top")
        >>> t.lines()
        ['top:', 'bra top;']
    """
    tr = context.current("ptx.label")
    loc = user_loc()
    if name is None:
        return LabelRef(tr.new_label("L"), loc, tr)
    if not isinstance(name, str) or not _IDENT.match(name):
        raise TraceError(f"ptx.label: {name!r} is not a PTX label name (letters, digits, _ "
                         f"and $, not starting with a digit)", loc=loc)
    ref = LabelRef(tr.new_label(name), loc, tr)
    if name not in tr.labels_defined:
        tr.place_label(name, loc)
        ref.here = (tr.body, tr.body[-1])
    return ref


def place(lbl: LabelRef) -> None:
    """Place a label made by ``ptx.label()`` here (branch to it with ``ptx.bra(lbl)``).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     done = ptx.label()
        ...     r = reg.scalar(u32, 0)
        ...     ptx.bra(done, pred=r == 0)
        ...     _ = r.set(1)
        ...     ptx.place(done)
        >>> t.lines()  # doctest: +NORMALIZE_WHITESPACE
        ['mov.u32 %r0, 0;', 'setp.eq.u32 %p0, %r0, 0;', '@%p0 bra $L_L_0;', 'mov.u32 %r0, 1;',
         '$L_L_0:']
    """
    tr = context.current("ptx.place")
    here = lbl.here
    if here is not None:
        lbl.here = None
        body, node = here
        plain = node.name
        if plain not in tr.labels_used:
            for i in range(len(body) - 1, -1, -1):
                if body[i] is node:
                    del body[i]
                    tr.labels_defined.discard(plain)
                    break
    tr.place_label(lbl.name, user_loc())
    tr.chain = None


@contextmanager
def loop(name, *, pred=None):
    """``with ptx.loop("k_loop", pred=p):`` places ``k_loop:``, the body, then
    ``@p bra k_loop;`` (without ``pred``: ``bra.uni k_loop;``, an endless loop the body leaves
    with ``ptx.bra``).

    The branch reads ``p`` as it is at the end of the body: a predicate computed once before the
    loop (``pred=i < 4``) never changes and the loop never ends. Give a predicate register and
    update it in the body, as here.

    Examples:
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import pred, u32
        >>> @kernel(out_specs=(Tile(1, u32),))
        ... def count(out):
        ...     i = reg.scalar(u32, 0)
        ...     more = reg.scalar(pred)
        ...     with ptx.loop("again", pred=more):
        ...         _ = i.set(i + 1)
        ...         _ = more.set(i < 4)       # recomputed on every pass
        ...     ptx.inst.st.global_.u32(ptx.addr(out.ptr()), i)
        ...     ptx.ret()
        >>> count.interpret()
        array([4], dtype=uint32)
        >>> text = [" ".join(ln.split()) for ln in count.ptx().splitlines()]
        >>> text[text.index("again:"):]  # doctest: +NORMALIZE_WHITESPACE
        ['again:', 'add.u32 %r1, %r0, 1;', 'mov.u32 %r0, %r1;', 'setp.lt.u32 %p1, %r0, 4;',
         'mov.pred %p0, %p1;', '@%p0 bra again;', 'st.global.u32 [%rd1], %r0;', 'ret;', '}']
    """
    from .generic import guard_of

    tr = context.current("ptx.loop")
    loc = user_loc(3)
    target = name.name if isinstance(name, LabelRef) else name
    if not isinstance(target, str) or not _IDENT.match(target):
        raise TraceError(f"ptx.loop: {name!r} is not a PTX label name", loc=loc)
    guard = guard_of(pred)
    tr.place_label(target, loc)
    tr.chain = None
    yield
    tr.labels_used.setdefault(target, loc)
    tr.emit("bra", () if guard is not None else (".uni",), (Sym(target),), guard, loc)
    tr.chain = None


@contextmanager
def scope():
    """``with ptx.scope():`` a ``{ ... }`` block. Numbered registers are declared at the top
    of the function; registers given a name inside the block (``reg.scalar(b32,
    name="tmp")``) are declared in it and visible until it closes.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import b32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     with ptx.scope():
        ...         tmp = reg.scalar(b32, 0, name="tmp")
        >>> t.lines()
        ['{', '.reg .b32 tmp;', 'mov.b32 tmp, 0;', '}']
    """
    from ...ir.nodes import Block

    tr = context.current("ptx.scope")
    outer = tr.body
    blk = Block([])
    outer.append(blk)
    tr.body = blk.body
    tr.chain = None
    scopes = tr.reg_scopes
    scopes.append((blk.body, {}))
    try:
        yield
    finally:
        _, shadowed = scopes.pop()
        for n, prev in shadowed.items():
            if prev is None:
                del tr.named_regs[n]
            else:
                tr.named_regs[n] = prev
        tr.body = outer
        tr.chain = None


def bra(target, pred=None, uni: bool = False) -> None:
    """``@p bra target;``

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.label("top")
        ...     ptx.bra("top")
        >>> t.lines()
        ['top:', 'bra top;']
    """
    from .generic import guard_of

    tr = context.current("ptx.bra")
    loc = user_loc()
    name = target.name if isinstance(target, LabelRef) else str(target)
    tr.labels_used.setdefault(name, loc)
    tr.emit("bra", (".uni",) if uni else (), (Sym(name),), guard_of(pred), loc)


def _pred(p, what, depth: int = 4):
    if type(p) is Register and p.type.kind == "pred":
        stack = context.tracing.stack
        if stack and p.trace is stack[-1]:       # a predicate of this trace (the usual case)
            return p
    neg = False
    if type(p) is NotPred:
        p, neg = p.reg, True
    if isinstance(p, Special):
        p = p.value()
    if not isinstance(p, Register) or p.type.kind != "pred":
        raise PtxTypeError(f"{what} needs a predicate (a comparison such as i < n), got {p!r}",
                           loc=user_loc(depth))
    as_operand(p)
    return NotPred(p) if neg else p


def _branch_unless(tr, p, target: str, loc):
    tr.labels_used.setdefault(target, loc)
    if type(p) is NotPred:          # if_(ptx.not_(q)): branch away when q holds
        tr.emit_keyed("bra", (), (Sym(target),), Guard(p.reg.ir.name, False), loc, _BRA_KEY)
        return
    tr.emit_keyed("bra", (), (Sym(target),), Guard(p.ir.name, True), loc, _BRA_KEY)


_BRA_KEY = ("bra", (), Sym)     # the validation signature of ``bra label`` (see Trace.emit)


class _Chain:
    """An if_/elif_ chain that an elif_/else_ may still continue.

    ``label_index`` is where the label skipping the previous body sits in ``body``; the
    chain's end label (once there is one) follows it directly. Instructions after them are
    the next ``elif_``'s condition (it runs only when no earlier branch was taken).
    """

    __slots__ = ("label_index", "end_label", "body")

    def __init__(self, label_index, body, end_label=None):
        self.label_index, self.body, self.end_label = label_index, body, end_label


# if_ / elif_ / else_ are context-manager classes (not generators): entering and leaving one
# is most of the cost of a traced branch. The work happens on entering, as ``with`` does it;
# a body that raises leaves no label behind.
class _If:
    __slots__ = ("p", "tr", "nxt")

    def __init__(self, p):
        self.p = p

    def __enter__(self):
        tr = context.current("ptx.if_")
        loc = user_loc(2)
        p = _pred(self.p, "ptx.if_", 3)
        nxt = tr.new_label("else")
        _branch_unless(tr, p, nxt, loc)
        tr.chain = None
        self.tr, self.nxt = tr, nxt

    def __exit__(self, et, ev, tb):
        if et is None:
            tr = self.tr
            tr.place_label(self.nxt)
            tr.chain = _Chain(len(tr.body) - 1, tr.body)
        return False


def if_(p):
    """``with ptx.if_(tid < 32): ...`` (the body runs where ``p`` is true).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 5)
        ...     with ptx.if_(r < 8):
        ...         _ = r.set(0)
        >>> t.lines()  # doctest: +NORMALIZE_WHITESPACE
        ['mov.u32 %r0, 5;', 'setp.lt.u32 %p0, %r0, 8;', '@!%p0 bra $L_else_0;',
         'mov.u32 %r0, 0;', '$L_else_0:']
    """
    return _If(p)


def _continue_chain(tr, what, allow_condition: bool, depth: int = 3):
    ch = tr.chain
    body = tr.body
    ok = ch is not None and ch.body is body and ch.label_index < len(body)
    if ok:
        first_tail = ch.label_index + 1 + (ch.end_label is not None)
        if first_tail < len(body):       # an elif_'s condition: instructions only
            ok = allow_condition and all(type(s) is Instruction for s in body[first_tail:])
    loc = user_loc(depth)
    if not ok:
        raise TraceError(f"{what} must directly follow a ptx.if_ or ptx.elif_ block", loc=loc)
    if ch.end_label is not None:
        del body[ch.label_index + 1]     # the end label moves to the end of this branch
        tr.labels_defined.discard(ch.end_label)
    else:
        ch.end_label = tr.new_label("endif")
    tr.labels_used.setdefault(ch.end_label, loc)
    body.insert(ch.label_index, Instruction("bra", (), (Sym(ch.end_label),), None, loc))
    tr.chain = None
    return ch


class _Elif:
    __slots__ = ("p", "tr", "nxt", "ch")

    def __init__(self, p):
        self.p = p

    def __enter__(self):
        tr = context.current("ptx.elif_")
        ch = _continue_chain(tr, "ptx.elif_", allow_condition=True)
        loc = user_loc(2)
        p = _pred(self.p, "ptx.elif_", 3)
        nxt = tr.new_label("else")
        _branch_unless(tr, p, nxt, loc)
        self.tr, self.nxt, self.ch = tr, nxt, ch

    def __exit__(self, et, ev, tb):
        if et is None:
            tr, ch = self.tr, self.ch
            tr.place_label(self.nxt)
            tr.place_label(ch.end_label)
            tr.chain = _Chain(len(tr.body) - 2, tr.body, ch.end_label)
        return False


def elif_(p):
    """``with ptx.elif_(cond):`` after an ``if_``/``elif_`` block.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 5)
        ...     with ptx.if_(r < 2):
        ...         _ = r.set(0)
        ...     with ptx.elif_(r < 4):
        ...         _ = r.set(1)
        >>> for line in t.lines():
        ...     print(line)
        mov.u32 %r0, 5;
        setp.lt.u32 %p0, %r0, 2;
        @!%p0 bra $L_else_0;
        mov.u32 %r0, 0;
        bra $L_endif_0;
        $L_else_0:
        setp.lt.u32 %p1, %r0, 4;
        @!%p1 bra $L_else_1;
        mov.u32 %r0, 1;
        $L_else_1:
        $L_endif_0:
    """
    return _Elif(p)


class _Else:
    __slots__ = ("tr", "ch")

    def __enter__(self):
        tr = context.current("ptx.else_")
        self.ch = _continue_chain(tr, "ptx.else_", allow_condition=False)
        self.tr = tr

    def __exit__(self, et, ev, tb):
        if et is None:
            self.tr.place_label(self.ch.end_label)
            self.tr.chain = None
        return False


def else_():
    """``with ptx.else_():`` after an ``if_``/``elif_`` block.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 5)
        ...     with ptx.if_(r < 2):
        ...         _ = r.set(0)
        ...     with ptx.else_():
        ...         _ = r.set(1)
        >>> t.lines()  # doctest: +NORMALIZE_WHITESPACE
        ['mov.u32 %r0, 5;', 'setp.lt.u32 %p0, %r0, 2;', '@!%p0 bra $L_else_0;',
         'mov.u32 %r0, 0;', 'bra $L_endif_0;', '$L_else_0:', 'mov.u32 %r0, 1;', '$L_endif_0:']
    """
    return _Else()


@contextmanager
def while_(cond):
    """``with ptx.while_(lambda: i < n): ...``; the condition is evaluated at the loop head.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     i = reg.scalar(u32, 0)
        ...     with ptx.while_(lambda: i < 10):
        ...         _ = i.set(i + 3)
        >>> for line in t.lines():
        ...     print(line)
        mov.u32 %r0, 0;
        $L_while_0:
        setp.lt.u32 %p0, %r0, 10;
        @!%p0 bra $L_endwhile_0;
        add.u32 %r1, %r0, 3;
        mov.u32 %r0, %r1;
        bra $L_while_0;
        $L_endwhile_0:
    """
    tr = context.current("ptx.while_")
    loc = user_loc(3)
    if not callable(cond):
        raise TraceError("ptx.while_ needs a callable condition (lambda: i < n) so it is "
                         "evaluated on every iteration", loc=loc)
    head, end = tr.new_label("while"), tr.new_label("endwhile")
    tr.place_label(head)
    p = _pred(cond(), "ptx.while_")
    _branch_unless(tr, p, end, loc)
    tr.loops.append([head, end])
    try:
        yield
    finally:
        tr.loops.pop()
    tr.emit_keyed("bra", (), (Sym(head),), None, loc, _BRA_KEY)
    tr.place_label(end)


def range_(start, stop=None, step=1, type: PtxType | None = None):
    """``for i in ptx.range_(0, n, 1):`` a PTX loop; ``i`` is a register.

    Bounds may be registers or ints; a register step must be positive. The body is traced
    once. The counter type is ``type``, else the type of a register bound, else s32.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     acc = reg.scalar(f32, 0.0)
        ...     for i in ptx.range_(0, 16, 4):          # i is an s32 register; the body is traced once
        ...         _ = acc.set(acc + 1.0)
        >>> for line in t.lines():
        ...     print(line)
        mov.f32 %f0, 0f00000000;
        mov.s32 %r0, 0;
        $L_loop_0:
        setp.ge.s32 %p0, %r0, 16;
        @%p0 bra $L_endloop_0;
        add.f32 %f1, %f0, 0f3F800000;
        mov.f32 %f0, %f1;
        add.s32 %r0, %r0, 4;
        bra $L_loop_0;
        $L_endloop_0:
    """
    tr = context.current("ptx.range_")
    loc = user_loc(2)
    if stop is None:
        start, stop = 0, start
    t = type
    if t is None:
        for b in (start, stop, step):
            if isinstance(b, (Register, Special)):
                t = b.type
                break
        else:
            t = s32
    if isinstance(step, int) and step == 0:
        raise TraceError("ptx.range_: step must not be zero", loc=loc)
    i = scalar(t, start)
    head, end = tr.new_label("loop"), tr.new_label("endloop")
    tr.place_label(head)
    down = isinstance(step, int) and step < 0
    done = (i <= stop) if down else (i >= stop)
    tr.labels_used.setdefault(end, loc)
    tr.emit_keyed("bra", (), (Sym(end),), Guard(done.name, False), loc, _BRA_KEY)
    loop = [None, end]           # the continue label: made by the first ptx.continue_
    tr.loops.append(loop)
    try:
        yield i
    finally:
        tr.loops.pop()
    if loop[0] is not None:
        tr.place_label(loop[0])
    i += step
    tr.emit_keyed("bra", (), (Sym(head),), None, loc, _BRA_KEY)
    tr.place_label(end)
    tr.chain = None


def static_range(*args):
    """A Python-unrolled loop: ``for k in ptx.static_range(4)`` traces the body 4 times.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     acc = reg.array(f32, 3)
        ...     for k in ptx.static_range(3):
        ...         _ = ptx.inst.mov.f32(acc[k], float(k))
        >>> t.lines()
        ['mov.f32 %f0, 0f00000000;', 'mov.f32 %f1, 0f3F800000;', 'mov.f32 %f2, 0f40000000;']
    """
    for a in args:
        if not isinstance(a, int):
            raise TraceError(f"ptx.static_range takes Python ints, got {a!r}; use ptx.range_ "
                             f"for register bounds", loc=user_loc())
    return range(*args)


def _loop(what):
    tr = context.current(what)
    if not tr.loops:
        raise TraceError(f"{what} outside a ptx.while_ / ptx.range_ loop", loc=user_loc(3))
    return tr


def break_(pred=None) -> None:
    """Leave the innermost ``ptx.range_`` / ``ptx.while_`` loop (``bra`` to its end; with
    ``pred``, only where ``pred`` holds).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import s32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     for i in ptx.range_(0, 8):
        ...         ptx.break_(pred=i == 3)
        >>> any(line.startswith("@%p") and " bra" in line for line in t.lines())
        True
    """
    from .generic import guard_of

    tr = _loop("ptx.break_")
    loc = user_loc()
    tr.emit_keyed("bra", (), (Sym(tr.loops[-1][1]),), guard_of(pred), loc, _BRA_KEY)


def continue_(pred=None) -> None:
    """Go to the next trip of the innermost ``ptx.range_`` / ``ptx.while_`` loop (with
    ``pred``, only where ``pred`` holds).

    Examples:
        >>> from jax_pyptx import ptx
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     for i in ptx.range_(0, 8):
        ...         ptx.continue_(pred=i == 3)
        >>> [line for line in t.lines() if "continue" in line]
        ['@%p1 bra $L_continue_0;', '$L_continue_0:']
    """
    from .generic import guard_of

    tr = _loop("ptx.continue_")
    loc = user_loc()
    loop = tr.loops[-1]
    if loop[0] is None:          # a range_ loop's step, labelled once something goes there
        loop[0] = tr.new_label("continue")
    tr.emit_keyed("bra", (), (Sym(loop[0]),), guard_of(pred), loc, _BRA_KEY)


@contextmanager
def predicated(p):
    """Every instruction emitted in the block gets the guard ``@p``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 0)
        ...     with ptx.predicated(r == 0):
        ...         _ = ptx.inst.add.u32(r, r, 1)
        >>> t.lines()[-1]
        '@%p0 add.u32 %r0, %r0, 1;'
    """
    from .generic import guard_of

    tr = context.current("ptx.predicated")
    if tr.guard is not None:
        raise TraceError("ptx.predicated blocks do not nest", loc=user_loc(3))
    tr.guard = guard_of(p)
    try:
        yield
    finally:
        tr.guard = None


def check_labels(tr) -> None:
    """At the end of a trace: every branch target was placed."""
    for name, loc in tr.labels_used.items():
        if name not in tr.labels_defined:
            raise TraceError(f"label {name} is branched to but never placed "
                             f"(ptx.place(label))", loc=loc)
