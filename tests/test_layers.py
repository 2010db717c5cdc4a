"""The layers of DESIGN.md, checked: the import contracts in pyproject.toml hold (import-linter),
every subpackage is placed in a layer, and jax_pyptx has no import cycle (imports inside
functions count)."""
from __future__ import annotations

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


def test_import_contracts_hold():
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert re.search(r"Contracts: (\d+) kept, 0 broken", r.stdout), r.stdout[-2000:]


def test_every_subpackage_has_a_layer():
    layers = next(c for c in _config()["contracts"] if c["type"] == "layers")["layers"]
    placed = {name.strip() for line in layers for name in line.split("|")}
    tops = {f"jax_pyptx.{p.stem}" for p in PKG.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__")
            or (p.is_dir() and (p / "__init__.py").exists())}
    assert sorted(tops - placed) == []


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


@pytest.mark.parametrize("lower, upper", [("jax_pyptx.isa", "jax_pyptx.text"),
                                          ("jax_pyptx.dsl", "jax_pyptx.kernel")])
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
    assert f"{lower} is not allowed to import {upper}" in r.stdout
