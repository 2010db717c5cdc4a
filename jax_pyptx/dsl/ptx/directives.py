"""PTX written as text and source-position directives: ``ptx.raw(text)``,
``ptx.pragma("nounroll")``, ``ptx.loc(1, 40)``, ``ptx.file_(1, "kernel.py")``.

``ptx.raw("membar.gl;")`` parses ``text`` as PTX statements (instructions, labels, ``{ }``
blocks, declarations) and appends them; each instruction the ISA table knows is validated
like any other, one it does not know is appended as written (the escape for what the table
lacks: ``ptx.inst`` refuses unknown opcodes; ptxas judges these, and the CPU interpreter
refuses them when it reaches them), and a parse error names your line::

    ptx.raw("membar.gl;")                  # membar.gl;
    ptx.raw("@%p0 bra done; done:")        # a guarded branch and its label
"""
from __future__ import annotations

from ...errors import ParseError, PtxValueError, TraceError
from ...ir.nodes import Block, Instruction, Label, Loc, Pragma, RawDirective, RegDecl, VarDecl
from .. import context
from ..context import user_loc

__all__ = ["raw", "pragma", "loc", "file_"]



def raw(text: str) -> None:
    """Parse ``text`` as PTX statements and append them (see the module docstring).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     ptx.raw("membar.gl;")
        >>> t.lines()
        ['membar.gl;']
    """
    from ...text.parser import parse_statements

    tr = context.current("ptx.raw")
    where = user_loc()
    if not isinstance(text, str):
        raise PtxValueError(f"ptx.raw: expected PTX text, got {text!r}", loc=where)
    try:
        stmts = parse_statements(text, source="ptx.raw", unknown_ok=True)
    except ParseError as e:
        raise TraceError(f"ptx.raw: {e.args[0]} (in {text!r})", loc=where) from None
    _append(tr, stmts, where)
    tr.chain = None


def _append(tr, stmts, where) -> None:
    for s in stmts:
        t = type(s)
        if t is Instruction:
            ins = tr.emit(s.opcode, s.modifiers, s.operands, s.guard, where)
            if s.opcode == "bra" and s.operands:
                tr.labels_used.setdefault(getattr(s.operands[0], "name", ""), where)
            del ins
        elif t is Label:
            tr.place_label(s.name, where)
        elif t is Block:
            outer = tr.body
            blk = Block([])
            outer.append(blk)
            tr.body = blk.body
            try:
                _append(tr, s.body, where)
            finally:
                tr.body = outer
        elif t in (RegDecl, VarDecl, Pragma, Loc, RawDirective):
            tr.body.append(s)
        else:  # pragma: no cover - the parser's statement kinds are listed above
            raise TraceError(f"ptx.raw: cannot append {s!r}", loc=where)


def pragma(value: str) -> None:
    """``.pragma "value";`` (e.g. ``"nounroll"``) at this point of the body.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     ptx.pragma("nounroll")
        >>> t.lines()
        ['.pragma "nounroll";']
    """
    tr = context.current("ptx.pragma")
    if not isinstance(value, str) or '"' in value:
        raise PtxValueError(f"ptx.pragma: expected a string without quotes, got {value!r}",
                            loc=user_loc())
    tr.body.append(Pragma(value))


def loc(file: int, line: int, col: int = 0) -> None:
    """``.loc file line col``: the source position of the instructions that follow (``file``
    is an index declared with :func:`file_`).

    Examples:
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.file_(1, "my_kernels.py")
        ...     ptx.loc(1, 12)
        ...     ptx.ret()
        >>> [line.split() for line in k.ptx().splitlines() if ".loc" in line]
        [['.loc', '1', '12', '0']]
    """
    tr = context.current("ptx.loc")
    for name, v in (("file", file), ("line", line), ("col", col)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise PtxValueError(f"ptx.loc: {name}={v!r} must be a non-negative int",
                                loc=user_loc())
    tr.body.append(Loc((str(file), str(line), str(col))))


def file_(idx: int, name: str) -> None:
    """``.file idx "name"``: declares source file ``idx`` for :func:`loc` (a module-scope
    directive: it is printed before the kernel, where ptxas requires it).

    Examples:
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.file_(1, "my_kernels.py")
        ...     ptx.ret()
        >>> [line.strip() for line in k.ptx().splitlines() if line.startswith(".file")]
        ['.file 1 "my_kernels.py"']
    """
    tr = context.current("ptx.file_")
    if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0 or \
            not isinstance(name, str) or '"' in name:
        raise PtxValueError(f"ptx.file_: expected (index >= 0, file name), got ({idx!r}, "
                            f"{name!r})", loc=user_loc())
    tr.module_directives.append(RawDirective(".file", (str(idx), f'"{name}"')))
