"""Test helpers: assemble with ptxas, the line number of a marker in a test file."""
import inspect

from jax_pyptx.toolchain import ptxas_check


def assemble(k, **kw):
    """ptxas accepts the kernel's PTX for its arch; returns the resource report."""
    return ptxas_check(k.ptx(**kw), k.arch)


def line_of(fn, marker: str) -> str:
    """``file:line`` of the first source line of ``fn`` containing ``marker``."""
    lines, start = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return f"{inspect.getsourcefile(fn)}:{start + i}"
    raise AssertionError(f"{marker!r} not in {fn.__name__}")
