"""The trace context: the function being built, its registers, labels and shared memory.

One ``Trace`` is active while a ``@kernel`` body runs. Every ``reg.*`` / ``ptx.*`` call
appends to it; nothing is global, so traces never see each other's state and the output is
deterministic whatever was traced before.
"""
from __future__ import annotations

import os
import sys
import threading

from ..errors import SourceLoc, TraceError
from ..ir.nodes import Guard, Instruction, Label, PredPair, Reg
from ..isa import check as isa_check
from ..isa.validate import op_sig
from ..isa.model import Target, target_min_ptx
from ..types import PtxType

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# register name prefix and declared type, by (kind, bits)
_PREFIX = {
    "pred": ("%p", "pred"), 8: ("%rs", "b16"), 16: ("%rs", "b16"), 32: ("%r", "b32"),
    64: ("%rd", "b64"), 128: ("%rq", "b128"), "f32": ("%f", "f32"), "f64": ("%fd", "f64"),
    "f16": ("%h", "b16"), "bf16": ("%h", "b16"),
}


_PREFIXES: dict = {}     # type -> prefix_for(type)


def prefix_for(t: PtxType) -> tuple:
    """(register name prefix, declared type) for values of type ``t``.

    8-bit integers live in ``.b16`` registers (as nvcc does: ``mov`` has no 8-bit form);
    8-bit and narrower float formats (fp8, fp6, fp4, packed e2m1x2) in ``.b8`` registers,
    which is what their ``cvt`` forms require.
    """
    if t.kind == "pred":
        return _PREFIX["pred"]
    if t.bits <= 8 and t.kind in ("float", "packed"):
        return ("%rc", "b8")
    if t.name in _PREFIX:
        return _PREFIX[t.name]
    return _PREFIX[max(t.bits, 8)]


_CODES: dict = {}   # id(code) -> (code, belongs to this package, {f_lasti: SourceLoc})


def user_loc(depth: int = 2) -> SourceLoc | None:
    """The first stack frame outside this package: the user's file and line.

    One walk up the stack; whether a code object belongs to the package is decided once per
    code object, and each (code, bytecode offset) gets one shared ``SourceLoc``. The offset
    (``f_lasti``) is the key, not ``f_lineno``: CPython finds a frame's line by scanning the
    code's line table from the start, which for a 3000-line kernel body costs 15 us a call."""
    f = sys._getframe(depth)
    codes = _CODES
    while f is not None:
        c = f.f_code
        got = codes.get(id(c))
        if got is None or got[0] is not c:
            if len(codes) >= 65536:
                codes.clear()
            got = codes[id(c)] = (c, c.co_filename.startswith(_PKG_DIR), {})
        if not got[1]:
            at = f.f_lasti
            locs = got[2]
            loc = locs.get(at)
            if loc is None:
                loc = locs[at] = SourceLoc(c.co_filename, f.f_lineno)
            return loc
        f = f.f_back
    return None


_MISS = object()


class Trace:
    """The state of one kernel specialization being traced. Every field is declared here
    (``__slots__``): the modules that keep state on the trace (``reg``, ``ptx.scope``,
    ``ptx.var``, ``ptx.file_``, the kernel layer, the transpiler) use these fields, and no
    module adds one of its own."""

    __slots__ = ("name", "target", "version", "min_ptx", "body", "prologue", "_counts",
                 "_decl_types", "_label_counts", "labels_defined", "labels_used", "chain",
                 "loops", "closed", "smem", "params", "param_loads", "tma", "tma_regs",
                 "extra_params", "guard", "pipe_pairs", "_valid", "vecs", "cluster",
                 "shape_env", "named_regs", "reg_scopes", "alloc_counts", "variables",
                 "module_directives", "flow_last_if")

    def __init__(self, name: str, target: Target, version=None):
        self.name = name
        self.target = target
        self.version = version
        self.min_ptx = target_min_ptx(target)
        self.body: list = []               # statements of the current block
        self.prologue: list = []           # parameter loads, emitted before the body
        self._counts: dict = {}            # register prefix -> next index
        self._decl_types: dict = {}        # prefix -> declared type name
        self._label_counts: dict = {}
        self.labels_defined: set = set()
        self.labels_used: dict = {}        # name -> SourceLoc of first use
        self.chain = None                  # pending if_/elif_ chain (see control.py)
        self.loops: list = []              # [continue label, break label] of open loops
        self.closed = False
        self.smem = None                   # set by the kernel layer: dsl.smem.SmemLayout
        self.params: list = []             # ir Param records, in order
        self.param_loads: dict = {}        # cache of loaded param registers
        self.tma: list = []                # TmaDescriptorHandle per descriptor slot
        self.tma_regs: dict = {}           # slot name -> register holding its address
        self.extra_params: list = []       # params appended after the declared ones
        self.guard = None                  # Guard applied by ptx.predicated(...)
        self.pipe_pairs = None             # ``p | q`` results: name -> (or.pred, p, q)
        self._valid: dict = {}             # validation verdicts: operand signature -> Form
        self.vecs: dict = {}               # register vectors: ids -> (registers, Vec)
        self.cluster = (1, 1, 1)           # the kernel's cluster shape (set by the kernel layer)
        self.shape_env: dict = {}          # shape variables and int template parameters, by
                                           # name (set by the kernel layer; X.shape reads it)
        # registers declared by name (reg.scalar(name=...), reg.array(names=...)) and reg.alloc
        self.named_regs: dict = {}         # name -> Register
        self.reg_scopes: list = []         # open ptx.scope() blocks: (block body, {name:
                                           # the Register it shadows, or None})
        self.alloc_counts: dict = {}       # reg.alloc name family -> next index
        self.variables: dict = {}          # ptx.var declarations: name -> ir VarDecl
        self.module_directives: list = []  # module-level directives (ptx.file_)
        self.flow_last_if = None           # transpile.flow: (body, index, end label) of the
                                           # last if_ block, which an else_ may extend

    def release(self) -> None:
        """After the trace, once its module is built: drop what this trace holds. Registers,
        buffers, TMA handles and tensor specs point back at their trace; left in its
        containers they would make every finished trace a reference cycle, which only
        Python's cyclic collector frees (a third of the time of re-tracing a GEMM went to
        it). What outlives the trace (its ``name``, ``target``, ``closed``, shape
        environment) stays for the messages that still need it."""
        self.body, self.prologue, self.tma, self._valid = [], [], [], {}
        self.vecs, self.param_loads, self.tma_regs = {}, {}, {}
        self.named_regs, self.reg_scopes, self.variables = {}, [], {}
        self.module_directives = []
        self.smem = self.chain = self.flow_last_if = None

    # ------------------------------------------------------------------ registers
    def new_reg(self, t: PtxType) -> Reg:
        got = _PREFIXES.get(t)
        if got is None:
            got = _PREFIXES[t] = prefix_for(t)
        prefix, decl = got
        counts = self._counts
        n = counts.get(prefix, 0)
        counts[prefix] = n + 1
        if not n:
            self._decl_types[prefix] = decl
        return Reg(f"{prefix}{n}", t)

    def reg_decls(self) -> list:
        from ..ir.nodes import RegDecl
        from ..types import by_name

        order = ["%p", "%rc", "%rs", "%h", "%r", "%rd", "%rq", "%f", "%fd"]
        return [RegDecl(by_name(self._decl_types[p]), prefix=p, count=self._counts[p])
                for p in order if p in self._counts]

    @property
    def instruction_count(self) -> int:
        return _count(self.body)

    # ------------------------------------------------------------------ labels
    def new_label(self, hint: str) -> str:
        n = self._label_counts.get(hint, 0)
        self._label_counts[hint] = n + 1
        return f"$L_{hint}_{n}"

    def place_label(self, name: str, loc=None) -> None:
        if name in self.labels_defined:
            raise TraceError(f"label {name} placed twice", loc=loc)
        self.labels_defined.add(name)
        self.body.append(Label(name))

    # ------------------------------------------------------------------ instructions
    def emit(self, opcode: str, modifiers: tuple, operands: tuple, guard: Guard | None = None,
             loc: SourceLoc | None = None, validate: bool = True,
             prologue: bool = False, key: tuple | None = None) -> Instruction:
        """Append (and validate) one instruction. ``key``: the caller's precomputed validation
        signature, ``(opcode, modifiers, *map(op_sig, operands))`` (fast paths that know it)."""
        if self.closed:
            raise TraceError(f"kernel {self.name!r} has finished tracing; cannot emit "
                             f"{opcode}{''.join(modifiers)}", loc=loc)
        if guard is None:
            guard = self.guard
        if self.pipe_pairs and operands:
            given, operands = operands, self._pipe_destination(operands)
            if operands is not given:
                key = None
        ins = Instruction(opcode, modifiers, operands, guard, loc)
        if validate:
            # the verdict depends on the opcode and the operands' kinds and types only (the
            # target and version are the trace's): memoised per trace
            try:
                if key is None:
                    key = (opcode, modifiers, *[o.type if type(o) is Reg and not o.neg
                                                else op_sig(o) for o in ins.operands])
                form = self._valid.get(key, _MISS)
            except TypeError:            # an operand that cannot be hashed: no memo
                key, form = None, _MISS
            if form is _MISS:
                form = isa_check(ins, self.target, self.version, self.name, key)
                if form is not None:            # (None: unknown, or a lenient-mode miss)
                    if key is not None:
                        self._valid[key] = form
                    # a memoised form's version is already in min_ptx (it only grows)
                    if form.min_ptx > self.min_ptx:
                        self.min_ptx = form.min_ptx
        if prologue:
            self.prologue.append(Instruction(opcode, modifiers, operands, None, loc))
            return self.prologue[-1]
        self.body.append(ins)
        return ins

    def emit_keyed(self, opcode: str, modifiers: tuple, operands: tuple, guard, loc,
                   key: tuple) -> Instruction:
        """``emit`` for the callers that know the validation signature ``key``: into the body,
        validated. An instruction whose signature this trace has validated before is appended
        directly; anything else (a first sighting, a closed trace, a pending ``p | q``
        destination) takes ``emit``'s full path."""
        try:
            known = key in self._valid
        except TypeError:                # an operand that cannot be hashed: emit says so
            known = False
        if known and not self.closed and not self.pipe_pairs:
            ins = Instruction(opcode, modifiers, operands,
                              self.guard if guard is None else guard, loc)
            self.body.append(ins)
            return ins
        return self.emit(opcode, modifiers, operands, guard, loc, True, False, key)

    def _pipe_destination(self, operands):
        """``ptx.inst.setp.lt.u32(p | q, a, b)``: ``p | q`` computed ``or.pred t, p, q`` just
        before; writing ``t`` right after computing it means the ``p|q`` destination pair, so
        that ``or.pred`` is withdrawn and the pair written instead."""
        first = operands[0]
        if type(first) is not Reg:
            return operands
        got = self.pipe_pairs.get(first.name)
        if got is None or not self.body or self.body[-1] is not got[0] or \
                any(type(o) is Reg and o.name == first.name for o in operands[1:]):
            return operands
        del self.pipe_pairs[first.name]
        self.body.pop()
        return (PredPair(got[1], got[2]),) + tuple(operands[1:])


def _count(stmts) -> int:
    """Instructions in ``stmts``, nested blocks included."""
    from ..ir.nodes import Block

    n = 0
    for s in stmts:
        t = type(s)
        if t is Instruction:
            n += 1
        elif t is Block:
            n += _count(s.body)
    return n


class _TraceState(threading.local):
    """Each thread traces on its own stack: two threads tracing two kernels never see each
    other's instructions."""

    def __init__(self):
        self.stack: list = []


tracing = _TraceState()
"""This thread's trace stack: ``tracing.stack[-1]`` is the kernel being traced. The emitting
fast paths (``operators``, ``ptx``) read it directly; elsewhere use ``current``."""


def current(what: str = "this call") -> Trace:
    stack = tracing.stack
    if not stack:
        raise TraceError(f"{what} must run inside a @kernel function while it is traced "
                         f"(call kernel.ptx() or the kernel itself)", loc=user_loc())
    return stack[-1]


def push(t: Trace) -> None:
    tracing.stack.append(t)


def pop() -> Trace:
    return tracing.stack.pop()
