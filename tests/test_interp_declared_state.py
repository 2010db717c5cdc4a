"""Every field the interpreter's modules set on a ``Context`` (``ctx.X = ...``) or a ``Program``
(``prog.X = ...``) is declared where the class is defined (its class body or its own methods,
mixins included), so the classes are the one list of their state; no module probes them with
``getattr``/``setattr``."""
from __future__ import annotations

import ast
import inspect
import pathlib
import textwrap

import jax_pyptx.interpret as interp
from jax_pyptx.interpret.machine.program import Program
from jax_pyptx.interpret.scheduler.context import Context

ROOT = pathlib.Path(interp.__file__).parent


def _declared(cls) -> set:
    """Class attributes and every ``self.X = ...`` in the class's own methods (its classes in
    the MRO: the mixins that make up ``Context``)."""
    names = set()
    for c in cls.__mro__:
        if c is object:
            continue
        names |= set(vars(c))
        tree = ast.parse(textwrap.dedent(inspect.getsource(c)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for e in ast.walk(t):
                        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
                            names.add(e.attr)
    return names


def _set_on(var: str, root: pathlib.Path = ROOT) -> dict:
    """attribute -> files of every ``<var>.attribute = ...`` in the interpreter's modules."""
    out: dict = {}
    for p in root.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for e in ast.walk(t):
                        if (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)
                                and e.value.id == var):
                            out.setdefault(e.attr, set()).add(p.name)
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr", "getattr")
                    and node.args and getattr(node.args[0], "id", None) == var):
                out.setdefault(f"<{node.func.id}>", set()).add(p.name)
    return out


def test_every_context_field_is_declared():
    declared = _declared(Context)
    undeclared = {k: sorted(v) for k, v in _set_on("ctx").items() if k not in declared}
    assert undeclared == {}


def test_every_program_field_is_declared():
    declared = _declared(Program)
    undeclared = {k: sorted(v) for k, v in _set_on("prog").items() if k not in declared}
    assert undeclared == {}


def test_the_check_sees_an_undeclared_field(tmp_path):
    (tmp_path / "planted.py").write_text("def f(ctx):\n    ctx.planted_field = 1\n")
    assert _set_on("ctx", tmp_path) == {"planted_field": {"planted.py"}}
    assert "planted_field" not in _declared(Context)
