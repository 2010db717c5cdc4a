"""No function of the package is longer than 80 lines (issue 27: a function does one job; the
kernel bodies, which may be long, live in examples/ and tests/, not under jax_pyptx/).

A function's length is counted from its ``def`` line to its last line, its docstring not
counted; nested functions count toward the function that holds them (as they do for a reader)
and are measured on their own too.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "jax_pyptx"
LIMIT = 80

# (path under the repository, qualified name): functions known to be over LIMIT
def _length(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from ``def`` to the function's last line, less its docstring's lines."""
    n = fn.end_lineno - fn.lineno + 1
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        n -= first.end_lineno - first.lineno + 1
    return n


def long_functions(source: str, limit: int = LIMIT) -> list:
    """(line, qualified name, length) of each function of ``source`` longer than ``limit``."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef) and _length(child) > limit:
                    out.append((child.lineno, name, _length(child)))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _package_long_functions() -> dict:
    """{(path, qualified name): (line, length)} over every .py file under jax_pyptx/."""
    found = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, name, n in long_functions(path.read_text()):
            found[(rel, name)] = (line, n)
    return found


def test_no_function_is_over_80_lines():
    found = _package_long_functions()
    bad = [f"{path}:{line} {name} ({n} lines)" for (path, name), (line, n) in sorted(found.items())]
    assert not bad, (f"functions over {LIMIT} lines (docstring not counted); split them by job:\n  "
                     + "\n  ".join(bad))


def _fn(name: str, length: int, docstring_lines: int = 0, indent: str = "") -> str:
    """A function of ``length`` lines (``def`` line included) and a docstring of the given lines."""
    doc = []
    if docstring_lines == 1:
        doc = [f'{indent}    """One line."""']
    elif docstring_lines:
        doc = [f'{indent}    """First line.'] + [f"{indent}    more"] * (docstring_lines - 2) + [f'{indent}    """']
    body = [f"{indent}    x{i} = {i}" for i in range(length - 1)]
    return "\n".join([f"{indent}def {name}():"] + doc + body) + "\n"


@pytest.mark.parametrize("length, docstring_lines, too_long", [
    (80, 0, False), (81, 0, True), (80, 1, False), (80, 12, False), (81, 1, True), (81, 12, True),
])
def test_the_count_is_def_to_end_without_the_docstring(length, docstring_lines, too_long):
    src = _fn("f", length, docstring_lines)
    assert long_functions(src) == ([(1, "f", length)] if too_long else [])


def test_methods_and_nested_functions_are_measured_by_qualified_name():
    inner = _fn("inner", 81, indent="        ")
    src = "class C:\n    def outer(self):\n" + inner + "        return inner\n"
    assert long_functions(src) == [(2, "C.outer", 83), (3, "C.outer.inner", 81)]
    assert long_functions("class C:\n" + _fn("short", 10, indent="    ")) == []
