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
"""
from __future__ import annotations

from ..ir.nodes import Module

__all__ = ["transpile", "same_instructions", "instruction_stream"]


def transpile(text_or_module, source: str = "<ptx>") -> str:
    """Python source for PTX text or a parsed ``Module``."""
    from .generate import Generator

    if isinstance(text_or_module, Module):
        m = text_or_module
    else:
        from ..text.parser import parse

        m = parse(text_or_module, source)
    return Generator(m, source).run()


def same_instructions(a, b) -> bool:
    from .compare import same_instructions as _s

    return _s(a, b)


def instruction_stream(fn):
    from .compare import instruction_stream as _i

    return _i(fn)
