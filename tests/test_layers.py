"""The layers of DESIGN.md, checked: the import contracts in pyproject.toml hold (import-linter),
every subpackage is placed in a layer, jax_pyptx has no import cycle (imports inside
functions count), and the compatibility layer (``jax_pyptx.compat``, which the ``pyptx`` alias
maps into) may import the core while the core never imports it."""
from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
import tomllib

import grimp
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "jax_pyptx"


def _config():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _placed() -> list:
    layers = next(c for c in _config()["contracts"] if c["type"] == "layers")["layers"]
    return [name.strip() for line in layers for name in line.split("|")]


def test_import_contracts_hold():
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert re.search(r"Contracts: (\d+) kept, 0 broken", r.stdout), r.stdout[-2000:]


def test_every_subpackage_has_a_layer():
    placed = set(_placed())
    tops = {f"jax_pyptx.{p.stem}" for p in PKG.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__")
            or (p.is_dir() and (p / "__init__.py").exists())}
    assert sorted(tops - placed) == []


def test_every_interpreter_module_has_a_layer():
    """``interpret/`` is grouped by concern (its ``__init__`` docstring is the map); each module
    and subpackage directly under it has a place in the interpreter's layers contract."""
    contract = next(c for c in _config()["contracts"]
                    if c.get("containers") == ["jax_pyptx.interpret"])
    placed = {name.strip() for line in contract["layers"] for name in line.split("|")}
    here = PKG / "interpret"
    names = {p.stem for p in here.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__")
             or (p.is_dir() and (p / "__init__.py").exists())}
    assert sorted(names ^ placed) == []
    assert {"scheduler", "ops", "sanitizer", "machine", "state"} <= names


def _cycles(graph) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    mods = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & set(mods)) for m in mods}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for m in mods:
        if m not in index:
            visit(m)
    return out


def test_no_import_cycles():
    graph = grimp.build_graph("jax_pyptx", cache_dir=None)
    # a package importing its own submodules (re-exports in __init__) is not a cycle through
    # other modules: drop child -> ancestor-package edges, as the package's face
    for m in list(graph.modules):
        for parent in list(graph.find_modules_directly_imported_by(m)):
            if m.startswith(parent + "."):
                graph.remove_import(importer=m, imported=parent)
    assert _cycles(graph) == []


def _names_compat(path: pathlib.Path) -> list:
    """Lines of ``path`` that import ``pyptx`` or ``jax_pyptx.compat``, or name them in a
    string (a lazy import table), docstrings aside."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}
    hits = []
    for n in ast.walk(tree):
        names = []
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0:
            names = [n.module or ""]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            names = [n.value]
        if any(re.match(r"(jax_pyptx\.compat|pyptx)(\.|$)", x) for x in names):
            hits.append(n.lineno)
    return hits


def test_compat_may_import_the_core_and_the_core_never_imports_compat():
    """compat is the top layer (it may import anything below), and a forbidden contract keeps
    every other module, and the package's own ``__init__``, from importing it or ``pyptx``."""
    layers = next(c for c in _config()["contracts"] if c["type"] == "layers")["layers"]
    assert layers[0] == "jax_pyptx.compat"
    forbidden = next(c for c in _config()["contracts"]
                     if c["type"] == "forbidden" and "jax_pyptx.compat" in c["forbidden_modules"])
    assert sorted(forbidden["forbidden_modules"]) == ["jax_pyptx.compat", "pyptx"]
    assert sorted(forbidden["source_modules"]) == sorted(set(_placed()) - {"jax_pyptx.compat"})
    # the root package is in no contract: checked here, its imports and lazy import strings
    graph = grimp.build_graph("jax_pyptx", cache_dir=None)
    compat = {m for m in graph.modules if m == "jax_pyptx.compat" or
              m.startswith("jax_pyptx.compat.")}
    assert graph.find_modules_directly_imported_by("jax_pyptx") & compat == set()
    core = [p for p in PKG.rglob("*.py") if "compat" not in p.relative_to(PKG).parts]
    named = [f"{p.relative_to(ROOT)}:{line}" for p in core for line in _names_compat(p)]
    assert named == []
    # and compat does import the core (the direction the layer allows)
    assert any(not m.startswith("jax_pyptx.compat")
               for m in graph.find_modules_directly_imported_by("jax_pyptx.compat.jax_support"))


@pytest.mark.parametrize("lower, upper", [("jax_pyptx.isa", "jax_pyptx.text"),
                                          ("jax_pyptx.dsl", "jax_pyptx.kernel_def"),
                                          ("jax_pyptx.runtime", "jax_pyptx.compat"),
                                          ("jax_pyptx.interpret.state", "jax_pyptx.interpret.ops"),
                                          ("jax_pyptx.interpret.sanitizer",
                                           "jax_pyptx.interpret.scheduler")])
def test_contract_would_catch_an_upward_import(tmp_path, lower, upper):
    """The layers contract is not vacuous: an upward import planted in a copy is reported."""
    import shutil

    copy = tmp_path / "jax_pyptx"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    target = copy.joinpath(*lower.split(".")[1:], "__init__.py")
    target.write_text(target.read_text() + f"\n\ndef _planted():\n    import {upper}  # noqa\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # the editable install's import hook would find the real package first: drop it so the
    # copy on PYTHONPATH is the one analysed
    run_copy = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in "
                "type(f).__module__]; from importlinter.cli import lint_imports_command; "
                "sys.argv = ['lint-imports', '--no-cache']; sys.exit(lint_imports_command())")
    r = subprocess.run([sys.executable, "-c", run_copy], cwd=tmp_path, capture_output=True,
                       text=True, env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert r.returncode == 1
    assert f"{lower} is not allowed to import {upper}" in " ".join(r.stdout.split())
