"""IR node classes. Plain dataclasses; equality ignores source locations and register types.

Operands are hashable value records (``unsafe_hash``, slotted for fast construction:
tracing builds several per instruction); treat them as immutable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ..errors import SourceLoc
from ..types import PtxType

__all__ = [
    "Reg", "Imm", "Sym", "Addr", "Vec", "PredPair", "Sink", "ParenList", "Operand",
    "Guard", "Instruction", "Label", "RegDecl", "VarDecl", "Pragma", "Loc", "Block",
    "RawDirective", "Stmt", "Param", "Function", "Section", "Module",
]


# ----------------------------------------------------------------------------- operands
@dataclass(unsafe_hash=True, slots=True)
class Reg:
    """A register (``%r1``), a special register (``%tid.x``) or a predicate (``%p``).

    ``neg`` prints ``!%p`` (negated predicate source operand). ``type`` is the declared type
    when known (not part of the text).
    """

    name: str
    type: Optional[PtxType] = field(default=None, compare=False)
    neg: bool = False


@dataclass(unsafe_hash=True, slots=True)
class Imm:
    """An immediate. ``text`` is the exact spelling (``0f3F800000``, ``-1``, ``0x10``)."""

    text: str
    type: Optional[PtxType] = field(default=None, compare=False)


@dataclass(unsafe_hash=True, slots=True)
class Sym:
    """A named symbol used as an operand: a variable, a param, a label or a function.

    ``offset`` prints ``name+offset`` (the address of a variable plus a constant).
    """

    name: str
    offset: int = 0


@dataclass(unsafe_hash=True, slots=True)
class Addr:
    """A memory operand ``[base+offset]``; ``base`` is a Reg, a Sym or None (absolute).

    ``extra`` holds further bracketed items for texture/surface style ``[a, b]`` operands.
    """

    base: Union[Reg, Sym, Imm, None]
    offset: int = 0
    extra: tuple = ()


@dataclass(unsafe_hash=True, slots=True)
class Vec:
    """A vector operand ``{a, b, c, d}``."""

    items: tuple
    # memoised by validation and the printer (not part of the value)
    sig: object = field(default=None, compare=False, hash=False, repr=False)
    text: object = field(default=None, compare=False, hash=False, repr=False)


@dataclass(unsafe_hash=True, slots=True)
class PredPair:
    """The ``%p|%q`` destination of setp."""

    first: Reg
    second: Reg


@dataclass(frozen=True)
class Sink:
    """The ``_`` sink operand."""


@dataclass(frozen=True)
class ParenList:
    """A parenthesized operand list ``(a, b)``: the return and argument lists of ``call``
    (``call.uni (retval0), foo, (param0, param1);``). ``()`` is an empty tuple."""

    items: tuple


Operand = Union[Reg, Imm, Sym, Addr, Vec, PredPair, Sink, ParenList]


# ----------------------------------------------------------------------------- statements
@dataclass(unsafe_hash=True, slots=True)
class Guard:
    """``@%p`` or ``@!%p`` in front of an instruction."""

    reg: str
    negated: bool = False


@dataclass(slots=True)
class Instruction:
    opcode: str
    modifiers: tuple = ()          # e.g. (".global", ".v4", ".f32"), canonical order
    operands: tuple = ()
    guard: Optional[Guard] = None
    loc: Optional[SourceLoc] = field(default=None, compare=False, repr=False)

    @property
    def full_opcode(self) -> str:
        return self.opcode + "".join(self.modifiers)


@dataclass
class Label:
    name: str


@dataclass
class RegDecl:
    """``.reg .b32 %r<12>;`` (count) or ``.reg .f32 %f, %g;`` (names)."""

    type: PtxType
    names: tuple = ()              # explicit names
    prefix: str = ""               # with count: %r<count>
    count: int = 0
    vector: int = 0                # .v2/.v4 register declarations
    align: int = 0


@dataclass
class VarDecl:
    """A variable in a state space: ``.shared .align 16 .b8 buf[1024];``.

    ``space`` is ".shared", ".global", ".const", ".local", ".param" (with qualifiers like
    ".shared::cta" kept verbatim); ``linkage`` is ".extern"/".visible"/".weak"/".common" or "".
    ``dims`` holds array sizes (None for ``[]``); ``init`` is a nested tuple of operand
    texts/strings or None.
    """

    space: str
    type: PtxType
    name: str
    align: int = 0
    dims: tuple = ()
    init: object = None
    linkage: str = ""
    vector: int = 0
    attrs: tuple = ()              # e.g. ('.attribute(.managed)',)


@dataclass
class Pragma:
    text: str                      # the string inside: .pragma "nounroll";


@dataclass
class Loc:
    """``.loc file line col`` (with optional trailing tokens such as function_name info)."""

    args: tuple


@dataclass
class Block:
    """A nested ``{ ... }`` scope."""

    body: list = field(default_factory=list)


@dataclass
class RawDirective:
    """Any directive statement the IR has no richer record for: name plus argument text."""

    name: str                      # ".maxnreg", ".file", ".section" payload lines ...
    args: tuple = ()
    terminated: bool = False       # printed with a trailing ";" (.alias, .callprototype, .pragma)


Stmt = Union[Instruction, Label, RegDecl, VarDecl, Pragma, Loc, Block, RawDirective]


# ----------------------------------------------------------------------------- functions
@dataclass
class Param:
    """A function parameter: ``.param .u64 .ptr .global .align 16 name`` or ``.reg .b32 x``."""

    name: str
    type: PtxType
    space: str = ".param"
    align: int = 0
    array: Optional[int] = None    # .b8 name[128]
    ptr_space: str = ""            # .ptr .global / .shared / .const / .local
    ptr_align: int = 0


@dataclass
class Function:
    name: str
    kind: str = ".entry"           # ".entry" | ".func"
    linkage: str = ".visible"      # ".visible" | ".extern" | ".weak" | ""
    params: list = field(default_factory=list)
    ret_params: list = field(default_factory=list)
    directives: list = field(default_factory=list)   # RawDirective: .maxntid, .reqntid, ...
    body: Optional[list] = field(default_factory=list)  # None: a declaration (prototype)
    noreturn: bool = False


@dataclass
class Section:
    """``.section .debug_info { ... }``: each entry is a RawDirective (.b8 ...), a Label or text."""

    name: str
    body: list = field(default_factory=list)


@dataclass
class Module:
    version: tuple = (8, 0)
    target: tuple = ("sm_90a",)
    address_size: int = 64
    items: list = field(default_factory=list)        # Function | VarDecl | RawDirective | Section

    @property
    def functions(self) -> list:
        return [i for i in self.items if isinstance(i, Function)]

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)
