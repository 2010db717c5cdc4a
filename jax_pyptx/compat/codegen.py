"""``pyptx.codegen``: PTX text -> Python that re-traces to the same instructions.

``ptx_to_python(source, *, sugar=False, kernel_name="matmul_kernel")`` is the documented
spelling of :func:`jax_pyptx.transpile.transpile`. A module with one ``.entry`` gets it
renamed to ``kernel_name`` (the Python function and the entry it traces to); with several
entries each keeps its own name. ``sugar`` is accepted for compatibility: the transpiler
always uses the typed wrappers where one reproduces an instruction exactly.

Command line: ``python -m pyptx.codegen kernel.ptx [--sugar] [--name N] [-o out.py]``.

Examples:
    >>> src = ".version 8.5\\n.target sm_80\\n.address_size 64\\n.visible .entry k()\\n{\\n\\tret;\\n}\\n"
    >>> "def matmul_kernel" in ptx_to_python(src)
    True
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

__all__ = ["ptx_to_python", "main"]


def ptx_to_python(source, *, sugar: bool = False, kernel_name: str | None = "matmul_kernel"
                  ) -> str:
    """Python source for PTX text (or a parsed ``Module``); see the module docstring.

    Examples:
        >>> from pyptx.codegen import ptx_to_python
        >>> text = ".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }"
        >>> source = ptx_to_python(text, kernel_name="my_kernel")
        >>> "def my_kernel" in source
        True
    """
    from jax_pyptx.ir.nodes import Function, Module
    from jax_pyptx.text.parser import parse
    from jax_pyptx.transpile import transpile

    m = source if isinstance(source, Module) else parse(source, "<ptx>")
    entries = [i for i, it in enumerate(m.items)
               if isinstance(it, Function) and it.kind == ".entry" and it.body is not None]
    if kernel_name and len(entries) == 1:
        if not kernel_name.isidentifier():
            from jax_pyptx.errors import PtxValueError

            raise PtxValueError(f"ptx_to_python: kernel_name={kernel_name!r} is not a Python "
                                f"identifier")
        items = list(m.items)
        items[entries[0]] = dataclasses.replace(items[entries[0]], name=kernel_name)
        m = dataclasses.replace(m, items=items)
    return transpile(m)


def main(argv=None) -> int:
    """``python -m pyptx.codegen FILE.ptx [--sugar] [--name N] [-o OUT.py]``.

    Examples:
        >>> import pathlib
        >>> from pyptx.codegen import main
        >>> _ = pathlib.Path("k.ptx").write_text(
        ...     ".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }")
        >>> main(["k.ptx", "--name", "my_kernel", "-o", "k.py"])
        0
        >>> "def my_kernel" in pathlib.Path("k.py").read_text()
        True
    """
    ap = argparse.ArgumentParser(prog="python -m pyptx.codegen",
                                 description="PTX -> Python (a @kernel that re-traces to it)")
    ap.add_argument("file", help="PTX file ('-' for standard input)")
    ap.add_argument("--sugar", action="store_true", help="accepted for compatibility")
    ap.add_argument("--name", default="matmul_kernel",
                    help="name of the kernel when the file has one entry")
    ap.add_argument("-o", "--output", help="write here (default: standard output)")
    args = ap.parse_args(argv)
    text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    src = ptx_to_python(text, sugar=args.sugar, kernel_name=args.name)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(src)
    else:
        sys.stdout.write(src)
    return 0


if __name__ == "__main__":
    sys.exit(main())
