"""PTX text -> readable Python that re-traces to the same IR.

    from jax_pyptx.transpile import transpile
    source = transpile(open("kernel.ptx").read())       # or a parsed Module

or ``python -m jax_pyptx transpile kernel.ptx -o kernel.py``.

The generated file defines one ``@kernel`` per ``.entry`` (parameters kept by name and type
through ``raw_params``, function directives through ``raw_directives``) and one
``flow.device_function`` per ``.func``; registers are ``reg.array``/``reg.scalar`` named after
the source's; instructions use the DSL's typed wrappers where one reproduces the instruction
exactly, ``ptx.inst`` otherwise; ``if``/``else`` and loops are recovered from the branches
where the branch structure allows (:mod:`.structure`), mbarrier spin loops become the wait
helper, and everything else keeps its labels. Tracing the result gives the source's
instruction sequence, up to register and label names (see :mod:`.compare`).

Choices: ``.loc``/``.file``/DWARF sections are not carried over (the Python file is the new
source); module-scope variables and declarations stay PTX text in ``ITEMS``; names from the
source (kernels, params, named registers, globals, labels that stay labels) are kept, the
numbered registers of ``%r<N>`` declarations are indexed arrays.

Examples:
    >>> from jax_pyptx.example_kernels import twice
    >>> k = twice()                                  # Y = 2 * X over 32 floats
    >>> from jax_pyptx import parse
    >>> from jax_pyptx.transpile import same_instructions, transpile
    >>> source = transpile(k.ptx())
    >>> ns = {}
    >>> exec(source, ns)
    >>> same_instructions(parse(k.ptx()).functions[0], parse(ns["twice"].ptx()).functions[0])
    True
"""
from __future__ import annotations

from ..ir.nodes import Module

__all__ = ["transpile", "same_instructions", "instruction_stream"]


def transpile(text_or_module, source: str = "<ptx>") -> str:
    """Python source for PTX text or a parsed ``Module``.

    Examples:
        >>> from jax_pyptx.transpile import transpile
        >>> text = ".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }"
        >>> source = transpile(text)
        >>> for line in source.splitlines():
        ...     if line.startswith(("@kernel", "def ", "    ptx.")):
        ...         print(line)
        @kernel(arch='sm_90a', version=(8, 5))
        def k():
            ptx.ret()
        def module():
    """
    from .generate import Generator

    if isinstance(text_or_module, Module):
        m = text_or_module
    else:
        from ..text.parser import parse

        m = parse(text_or_module, source)
    return Generator(m, source).run()


def same_instructions(a, b) -> bool:
    """Whether IR functions a and b have the same instruction stream, up to register and label
    names.

    Examples:
        >>> from jax_pyptx import parse
        >>> from jax_pyptx.transpile import same_instructions
        >>> head = ".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { .reg .b32 %r<9>; "
        >>> a = parse(head + "mov.u32 %r1, %tid.x; add.u32 %r1, %r1, 1; ret; }").functions[0]
        >>> b = parse(head + "mov.u32 %r7, %tid.x; add.u32 %r7, %r7, 1; ret; }").functions[0]
        >>> c = parse(head + "mov.u32 %r7, %tid.x; add.u32 %r7, %r7, 2; ret; }").functions[0]
        >>> same_instructions(a, b), same_instructions(a, c)
        (True, False)
    """
    from .compare import same_instructions as _s

    return _s(a, b)


def instruction_stream(fn):
    """The normalised instruction stream of fn (an IR function): registers and labels renamed by
    first appearance (jax_pyptx.transpile.compare).

    Examples:
        >>> from jax_pyptx import parse
        >>> from jax_pyptx.transpile import instruction_stream
        >>> m = parse(".version 8.5 .target sm_90a .address_size 64 "
        ...           ".visible .entry k() { .reg .b32 %r<3>; mov.u32 %r2, %tid.x; add.u32 %r1, %r2, 1; ret; }")
        >>> [(ins.opcode, [getattr(o, "name", None) for o in ins.operands])
        ...  for ins in instruction_stream(m.functions[0])]
        [('mov', ['R0', '%tid.x']), ('add', ['R1', 'R0', None]), ('ret', [])]
    """
    from .compare import instruction_stream as _i

    return _i(fn)
