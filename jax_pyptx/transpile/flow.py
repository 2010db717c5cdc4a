"""Helpers that transpiled kernels call: branch-exact structured control flow, nested scopes,
declarations kept as PTX text, operands the DSL has no spelling for, device functions and
whole-module assembly.

The transpiler (``jax_pyptx.transpile``) promises that a generated file traces to the same
instruction sequence as the PTX it came from. The DSL's own ``ptx.if_`` / ``ptx.while_``
choose their branch shapes; these helpers reproduce the shapes real compilers emit instead,
while reading like structured code::

    with flow.if_(ptx.not_(p[1])):        # @%p1 bra END; ...; END:
        ...
    with flow.else_(uni=True):            # (then-part ends with) bra.uni END2; END: ...; END2:
        ...
    with flow.loop() as loop1:            # HEAD: ...
        ...
        loop1.break_(pred=p[2])           # @%p2 bra EXIT
        loop1.continue_(pred=p[3])        # @%p3 bra HEAD   (EXIT: placed after the block)
    flow.mbarrier_wait(r[4].addr(), r[5]) # the try_wait.parity spin loop

Everything here emits through the active ``@kernel`` trace (``jax_pyptx.dsl``).
"""
from __future__ import annotations

import copy
import functools
from contextlib import contextmanager

from ..dsl import context
from ..dsl.context import user_loc
from ..dsl.ptx.generic import NotPred, emit_inst, guard_of
from ..dsl.values import Register, Special, as_operand
from ..errors import TraceError
from ..ir.nodes import (
    Addr, Block, Function, Guard, Label, Module, Param, ParenList, Pragma, PredPair, RawDirective,
    Reg, Sink, Sym, VarDecl, Vec,
)
from ..types import pred as _pred_t

__all__ = [
    "if_", "else_", "loop", "scope", "label", "decl", "pragma", "sreg", "neg", "sym", "addr",
    "args", "pair", "SINK", "inst", "mbarrier_wait", "device_function", "assemble",
    "DeviceFunction",
]


# ----------------------------------------------------------------------------- operands
class _Operand:
    """An IR operand built lazily (at trace time) for the DSL's ``as_operand``."""

    __slots__ = ("_make",)

    def __init__(self, make):
        self._make = make

    def __ptx_operand__(self):
        return self._make()


SINK = _Operand(Sink)
"""The ``_`` sink operand."""


def sreg(name: str) -> Reg:
    """A register operand by its exact PTX name (``%envreg3``, a ``.reg`` param, ``%v.x``)."""
    return Reg(name)


def neg(p) -> _Operand:
    """``!p``: a negated predicate source operand."""
    return _Operand(lambda: _neg(p))


def _neg(p) -> Reg:
    r = as_operand(p)
    if type(r) is not Reg:
        raise TraceError(f"flow.neg needs a predicate register, got {p!r}", loc=user_loc(4))
    return Reg(r.name, r.type, neg=True)


def sym(name: str, offset: int = 0) -> Sym:
    """A symbol operand ``name`` or ``name+offset``."""
    return Sym(name, int(offset))


def addr(base, offset: int = 0, *extra) -> _Operand:
    """``[base+offset, extra...]``: texture/TMA style address operands with extra items."""
    def make():
        if base is None:
            b = None
        elif isinstance(base, str):
            b = Sym(base)
        else:
            b = as_operand(base)
        return Addr(b, int(offset), tuple(as_operand(e) for e in extra))
    return _Operand(make)


def args(*items) -> _Operand:
    """``(a, b, ...)``: the parenthesized lists of ``call``; strings are symbols."""
    return _Operand(lambda: ParenList(tuple(Sym(i) if isinstance(i, str) else as_operand(i)
                                            for i in items)))


def pair(first, second) -> _Operand:
    """``first|second`` (setp / elect destinations); ``flow.SINK`` for ``_``."""
    return _Operand(lambda: PredPair(as_operand(first), as_operand(second)))


def vec(*items) -> _Operand:
    """``{a, b, ...}`` with items of mixed kinds (registers, ``flow.SINK``, immediates)."""
    return _Operand(lambda: Vec(tuple(as_operand(i) for i in items)))


# ----------------------------------------------------------------------------- emission
def inst(full: str, *operands, pred=None):
    """Emit ``full`` (a dotted opcode) exactly as written, without the ISA table's checks.

    The transpiler uses it for instructions the table does not accept as written; prefer
    ``ptx.inst.<opcode>...`` in code you write.
    """
    return emit_inst(full, operands, pred, user_loc(), validate=False)


def _tr(what: str):
    return context.current(what)


def _bra(tr, target: str, guard, uni: bool, loc):
    tr.labels_used.setdefault(target, loc)
    tr.emit("bra", (".uni",) if uni else (), (Sym(target),), guard, loc)


def _guard(pred):
    return guard_of(pred)


def label(name: str) -> None:
    """Place a label with its exact source name (branch to it with ``ptx.bra(name)``)."""
    tr = _tr("flow.label")
    tr.place_label(name, user_loc())
    tr.chain = None


class Region:
    """An ``if_`` / ``else_`` body: ``end`` is the label placed after it."""

    __slots__ = ("end", "_tr")

    def __init__(self, end: str, tr):
        self.end, self._tr = end, tr

    def leave(self, pred=None, uni: bool = False) -> None:
        """Branch to the end of this region (``@pred bra END``)."""
        _bra(self._tr, self.end, _guard(pred), uni, user_loc())


def _cond_guard(cond) -> Guard:
    """The guard that *skips* a body which runs when ``cond`` holds."""
    negated = True
    if type(cond) is NotPred:
        cond, negated = cond.reg, False
    if type(cond) is Special:
        cond = cond.value()
    if type(cond) is not Register or cond.type.kind != "pred":
        raise TraceError(f"flow.if_ needs a predicate register or ptx.not_(p), got {cond!r}",
                         loc=user_loc(4))
    as_operand(cond)
    return Guard(cond.name, negated)


@contextmanager
def if_(cond, uni: bool = False):
    """The body runs when ``cond`` holds: ``@!cond bra END; body; END:``.

    ``cond`` is a predicate register or ``ptx.not_(p)`` (then ``@p bra END``); ``uni`` gives
    ``bra.uni``. An ``else_`` may follow directly.
    """
    tr = _tr("flow.if_")
    loc = user_loc(3)
    end = tr.new_label("endif")
    _bra(tr, end, _cond_guard(cond), uni, loc)
    tr.chain = None
    region = Region(end, tr)
    yield region
    tr.place_label(end, loc)
    tr.flow_last_if = (tr.body, len(tr.body) - 1, end)


@contextmanager
def else_(uni: bool = False):
    """The else-part of the ``if_`` just closed: its then-part gains ``bra[.uni] END2``."""
    tr = _tr("flow.else_")
    loc = user_loc(3)
    last = tr.flow_last_if
    if last is None or last[0] is not tr.body or last[1] != len(tr.body) - 1 or \
            type(tr.body[-1]) is not Label or tr.body[-1].name != last[2]:
        raise TraceError("flow.else_ must directly follow a flow.if_ block", loc=loc)
    body, _, else_label = last
    body.pop()
    tr.labels_defined.discard(else_label)
    end = tr.new_label("endif")
    _bra(tr, end, None, uni, loc)
    tr.place_label(else_label, loc)
    tr.flow_last_if = None
    region = Region(end, tr)
    yield region
    tr.place_label(end, loc)


class Loop:
    """A loop region: ``head`` is placed at its start, ``exit`` (made on the first
    ``break_``) after its end."""

    __slots__ = ("head", "exit", "_tr")

    def __init__(self, head: str, tr):
        self.head, self.exit, self._tr = head, None, tr

    def continue_(self, pred=None, uni: bool = False) -> None:
        """Branch back to the head (``@pred bra HEAD``): a back edge or a ``continue``."""
        _bra(self._tr, self.head, _guard(pred), uni, user_loc())

    def break_(self, pred=None, uni: bool = False) -> None:
        """Branch past the loop (``@pred bra EXIT``)."""
        if self.exit is None:
            self.exit = self._tr.new_label("endloop")
        _bra(self._tr, self.exit, _guard(pred), uni, user_loc())


@contextmanager
def loop():
    """A loop whose body says how it repeats: ``loop.continue_(pred=...)`` at the bottom
    for a do-while, ``loop.break_(pred=...)`` at the top for a while."""
    tr = _tr("flow.loop")
    loc = user_loc(3)
    lp = Loop(tr.new_label("loop"), tr)
    tr.place_label(lp.head, loc)
    tr.chain = None
    yield lp
    if lp.exit is not None:
        tr.place_label(lp.exit, loc)
    tr.chain = None


@contextmanager
def scope():
    """A nested PTX scope ``{ ... }`` (declarations inside it are local to it)."""
    tr = _tr("flow.scope")
    outer = tr.body
    blk = Block([])
    outer.append(blk)
    tr.body = blk.body
    tr.chain = None
    try:
        yield blk
    finally:
        tr.body = outer
        tr.chain = None


# ----------------------------------------------------------------------------- declarations
_HEAD = ".version 9.0\n.target sm_90a\n.address_size 64\n"


@functools.lru_cache(maxsize=4096)
def _parse_stmts(text: str) -> tuple:
    from ..text.parser import parse

    src = text.strip()
    if not src.endswith(";"):
        src += ";"
    m = parse(_HEAD + ".func _flow_decl()\n{\n" + src + "\n}\n", "<flow.decl>", check=False)
    return tuple(m.functions[0].body)


def decl(text: str) -> None:
    """Declarations written as PTX (``.param .b32 param0``, ``.local .align 8 .b8 d[8]``,
    ``.callprototype ...``) appended to the current scope."""
    tr = _tr("flow.decl")
    for s in _parse_stmts(text):
        tr.body.append(copy.deepcopy(s))


def pragma(text: str) -> None:
    """``.pragma "text";``"""
    _tr("flow.pragma").body.append(Pragma(text))


# ----------------------------------------------------------------------------- mbarrier
WAIT_PREFIX = "mbarrier."     # what ``op`` of :func:`mbarrier_wait` follows


def mbarrier_wait(bar, arg, *more, op: str = "try_wait.parity.shared::cta.b64",
                  style: str = "exit", uni: bool = False, flag=None, check: bool = True):
    """Spin until the mbarrier phase completes.

    ``op`` is the wait instruction after ``mbarrier.`` (``try_wait.parity.shared::cta.b64``,
    ``test_wait.shared.b64``, ...); ``bar`` the barrier address operand, ``arg`` the phase
    parity or state, ``more`` further operands (a suspend-time hint). The two loop shapes
    compilers emit:

    * ``style="exit"``: ``HEAD: wait P; @P bra DONE; bra HEAD; DONE:``
    * ``style="retry"``: ``HEAD: wait P; @!P bra HEAD;``

    ``flag`` is the predicate to use (a fresh one by default); ``check=False`` skips the ISA
    table's check of the wait instruction (the transpiler sets it only where the table
    rejects PTX that ptxas accepts). Returns the predicate.
    """
    from ..dsl import reg

    if style not in ("exit", "retry"):
        raise TraceError(f"flow.mbarrier_wait: style must be 'exit' or 'retry', got {style!r}",
                         loc=user_loc())
    p = flag if flag is not None else reg.scalar(_pred_t)
    with loop() as lp:
        emit_inst(WAIT_PREFIX + op, (p, bar, arg) + more, None, user_loc(3), check)
        if style == "exit":
            lp.break_(pred=p, uni=uni)
            lp.continue_(uni=uni)
        else:
            lp.continue_(pred=NotPred(p), uni=uni)
    return p


# ----------------------------------------------------------------------------- functions
class DeviceFunction:
    """A ``.func`` traced with the kernel machinery (``flow.device_function``)."""

    def __init__(self, fn, *, arch, version, params, ret_params=(), linkage="",
                 directives=(), noreturn=False):
        from ..kernel_def import kernel

        self.name = fn.__name__
        self.ret_params = [_param(p) for p in ret_params]
        self.linkage = linkage
        self.noreturn = noreturn
        self.kernel = kernel(fn, arch=arch, version=version, raw_params=list(params),
                             raw_directives=list(directives))

    def function(self) -> Function:
        f = copy.copy(self.kernel.module().function(self.name))
        f.kind, f.linkage = ".func", self.linkage
        f.ret_params = list(self.ret_params)
        f.noreturn = self.noreturn
        return f

    def module(self) -> Module:
        m = self.kernel.module()
        items = [self.function() if isinstance(i, Function) else i for i in m.items]
        return Module(m.version, m.target, m.address_size, items)

    def ptx(self) -> str:
        from ..text.printer import emit

        return emit(self.module())

    def __repr__(self):
        return f"<DeviceFunction {self.name}>"


def _param(p):
    if isinstance(p, Param):
        return p
    from ..kernel_def import raw_param

    return raw_param(p)


def device_function(*, arch, version=None, params=(), ret_params=(), linkage="",
                    directives=(), noreturn=False):
    """Decorator for a transpiled ``.func``: the body is traced like a kernel's."""
    def wrap(fn):
        return DeviceFunction(fn, arch=arch, version=version, params=params,
                              ret_params=ret_params, linkage=linkage, directives=directives,
                              noreturn=noreturn)
    return wrap


def assemble(items, *, version, target, address_size: int = 64, linkage=None) -> Module:
    """One module from PTX text chunks (module-scope declarations), ``@kernel`` objects and
    device functions, in order. ``linkage`` overrides an entry's linkage by name."""
    from ..kernel_def import Kernel
    from ..text.parser import parse

    target = (target,) if isinstance(target, str) else tuple(target)
    out, seen = [], set()

    def add(item):
        key = (type(item).__name__, getattr(item, "name", None))
        if isinstance(item, VarDecl) and key in seen:
            return
        seen.add(key)
        out.append(item)

    for it in items:
        if isinstance(it, str):
            for x in parse(_HEAD + it, "<flow.assemble>", check=False).items:
                add(x)
        elif isinstance(it, Kernel):
            for x in it.module().items:
                if isinstance(x, Function) and linkage and x.name in linkage:
                    x = copy.copy(x)
                    x.linkage = linkage[x.name]
                add(x)
        elif isinstance(it, DeviceFunction):
            for x in it.module().items:
                add(x)
        elif isinstance(it, (Function, VarDecl, RawDirective)):
            add(it)
        else:
            raise TypeError(f"flow.assemble: cannot place {it!r}")
    return Module(tuple(version), target, address_size, out)
