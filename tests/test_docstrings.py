"""Every public name has a docstring with a runnable example, and every example runs.

**Public names** (what ``_public_names()`` collects):

1. the package's public surface: every name of ``jax_pyptx.__all__`` that is not a module
   (``kernel``, ``Kernel``, ``parse``, ``emit``, ``detect_arch``, the error classes, and the
   lazily imported entry points ``to_torch``, ``ptx_call``, ``configure``, ...);
2. the API reference: every ``::: target`` of ``docs/api/*.md``. A function or class target is
   one name; a module target is the module itself (its docstring heads the page) and, unless
   the page says ``members: false``, its members as the page renders them: the ``members:
   [...]`` list where the page gives one, else the names not starting with ``_`` that the module
   defines (``__module__`` is the module, or for a package one of its submodules) or lists in
   ``__all__``;
3. the ``pyptx.<name>`` modules of the alias table (``jax_pyptx.compat.MODULES``) that are not
   already covered (``pyptx.spec``, ``pyptx.specs``, ``pyptx.wgmma_layout``, ``pyptx.codegen``,
   ``pyptx.parser``, ``pyptx.emitter``, ``pyptx._trace``, ...): their names by the same module
   rule;
4. for each class above: the public methods and properties its own body defines (no inherited
   ones, nothing starting with ``_``), e.g. ``Kernel.ptx``, ``Kernel.trace``,
   ``Kernel.interpret``, ``Kernel.sass``, ``Kernel.resources``.

An object reachable under several names (``jax_pyptx.Kernel`` is ``jax_pyptx.kernel_def.Kernel``)
counts once, under the first name found.

Not counted: data values (``types.f32``, ``perf.devices.DEVICES``, ...; an instance cannot
carry a docstring of its own, so its module's example shows it), and the per-instruction
wrappers of the ``ptx.<family>`` submodules (``ptx.wgmma.mma_async``, ``ptx.mbarrier.init``,
...; ``FAMILY``), which the site does not render (``::: jax_pyptx.dsl.ptx`` shows the
namespace, not its submodules). Most are written one by one; the few made in a loop
(``ptx.bits.and_`` ... ``bfi``, the ``ptx.add``-style binary ops) get a generated docstring
naming the PTX they emit, with an example built from the op. They are held to less: each has
a docstring (``test_ptx_family_wrappers_have_docstrings``), and the examples they carry run
(``test_ptx_family_example_runs``). ``ptx.inst.<op>`` builds its instruction from attribute
access at trace time, so there is no per-opcode object to carry a docstring; ``ptx.inst``
itself is a public name.

**Examples** use doctest lines (``>>>``) under a Google-style ``Examples:`` section, which
mkdocstrings renders as highlighted code. Each example runs here as doctest runs it (in a copy
of its module's namespace; the examples written for this test import what they use, as a
reader pasting them would), and its printed output must match exactly
(plain doctest, no option flags: an example whose output is wrapped says ``# doctest:
+NORMALIZE_WHITESPACE`` on its line, so ``python -m doctest`` agrees). A line
may be ``# doctest: +SKIP`` but every example must run at least one line. Examples that import
``torch`` are skipped where torch is absent (those drawing with ``viz.plot_*``, where
matplotlib is); a line marked ``# needs ptxas`` (or ``# needs nvdisasm``) is skipped where that
CUDA tool is not installed (the rest of its example still runs); none needs a GPU.
"""
from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pathlib
import re
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _import(dotted: str):
    try:
        return importlib.import_module(dotted)
    except ImportError:
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)


def _is_data(obj) -> bool:
    return not (isinstance(obj, (types.ModuleType, type)) or callable(obj)
                or isinstance(obj, property))


def _module_members(module, only=None):
    if only is not None:
        return [(n, getattr(module, n)) for n in only]
    exported = set(getattr(module, "__all__", ()))
    out = []
    for n in sorted(vars(module)):
        obj = getattr(module, n)
        if n.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        home = getattr(obj, "__module__", None) or ""
        defined = home == module.__name__ or (hasattr(module, "__path__")
                                              and home.startswith(module.__name__ + "."))
        if defined or n in exported:
            out.append((n, obj))
    return out


def _class_members(cls):
    out = []
    for n, obj in vars(cls).items():
        if n.startswith("_"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property) or inspect.isfunction(obj):
            out.append((n, obj))
    return out


def _api_targets():
    for page in sorted((DOCS / "api").glob("*.md")):
        for m in re.finditer(r"^::: ([\w.]+)\n((?:    .*\n)*)", page.read_text(), re.M):
            yield m.group(1), m.group(2)


def _pyptx_aliases() -> dict:
    """The alias table: ``pyptx.<name>`` -> the module that implements it."""
    from jax_pyptx.compat import MODULES

    return dict(MODULES)


def _public_names() -> dict:
    """qualified name -> object, in a stable order."""
    import jax_pyptx

    names: dict = {}

    def add(qual, obj):
        if _is_data(obj) or qual in names or any(obj is o for o in names.values()
                                                 if not isinstance(o, property)):
            return
        names[qual] = obj
        if isinstance(obj, type):
            for n, member in _class_members(obj):
                names.setdefault(f"{qual}.{n}", member)

    def add_module(module, only=None, members=True):
        add(module.__name__, module)
        if members:
            for n, obj in _module_members(module, only):
                add(f"{module.__name__}.{n}", obj)

    # 1. the package's public surface
    for n in jax_pyptx.__all__:
        try:
            obj = getattr(jax_pyptx, n)
        except ModuleNotFoundError as e:          # torch's names, where torch is not installed
            if e.name != "torch":
                raise
            continue
        if not isinstance(obj, types.ModuleType):
            add(f"jax_pyptx.{n}", obj)
    # 2. the API reference pages
    for target, options in _api_targets():
        try:
            obj = _import(target)
        except ModuleNotFoundError as e:          # (checked where torch is installed)
            if e.name != "torch":
                raise
            continue
        if isinstance(obj, types.ModuleType):
            listed = re.search(r"members: \[(.*)\]", options)
            only = [s.strip() for s in listed.group(1).split(",")] if listed else None
            add_module(obj, only, members="members: false" not in options)
        else:
            add(target, obj)
    # 3. the pyptx.<name> alias modules
    for alias in sorted(_pyptx_aliases()):
        module = importlib.import_module(f"pyptx.{alias}")
        if module.__name__ not in names:
            add_module(module)
    return names


def _doc(obj) -> str:
    if isinstance(obj, property):
        return inspect.getdoc(obj.fget) or ""
    return inspect.getdoc(obj) or ""


def _examples(obj) -> list:
    """The doctest examples of ``obj``'s docstring that run (not ``+SKIP``)."""
    parsed = doctest.DocTestParser().get_examples(_doc(obj))
    return [e for e in parsed if not e.options.get(doctest.SKIP)]


NAMES = _public_names()


def test_public_names_are_collected():
    # the definition above picks up what the site and the package export (a guard against
    # the collector silently finding nothing)
    for must in ("jax_pyptx.kernel", "jax_pyptx.Kernel.ptx", "jax_pyptx.Tile",
                 "jax_pyptx.dsl.ptx.if_", "jax_pyptx.dsl.ptx.inst",
                 "jax_pyptx.interpret.launch.launch", "jax_pyptx.perf.roofline.roofline",
                 "jax_pyptx.dsl.validation.strict", "jax_pyptx.compat.spec.get_specs"):
        assert must in NAMES, must
    assert len(NAMES) > 250
    if importlib.util.find_spec("torch") is not None:
        assert "jax_pyptx.to_torch" in NAMES


def test_all_is_the_public_surface():
    """``jax_pyptx.__all__`` lists every public name once, each resolves, the lazily loaded
    entry points are among them, and pyptx's own module names are not (they are the alias's:
    ``jax_pyptx.compat.MODULES``)."""
    import jax_pyptx
    from jax_pyptx.compat import MODULES

    surface = jax_pyptx.__all__
    assert len(surface) == len(set(surface))
    assert set(jax_pyptx._LAZY) <= set(surface)
    for n in surface:
        assert getattr(jax_pyptx, n) is not None, n
    upstream = {"spec", "wgmma_layout", "codegen", "parser", "emitter", "_trace", "cache",
                "jax_support", "torch_support"}
    assert upstream <= set(MODULES)
    assert [n for n in upstream if n in surface or hasattr(jax_pyptx, n)] == []


def test_star_import_works_without_pytorch_and_to_torch_says_what_is_missing(monkeypatch):
    import jax_pyptx

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    ns: dict = {}
    exec("from jax_pyptx import *", ns)
    assert set(jax_pyptx.__all__) <= set(ns)
    with pytest.raises(ModuleNotFoundError, match=r"jax_pyptx.to_torch needs PyTorch, which is not "
                                                  r"installed: pip install 'jax-pyptx\[torch\]'"):
        ns["to_torch"](jax_pyptx.Kernel)


def test_every_public_name_has_a_docstring_with_an_example():
    no_doc = [n for n, o in NAMES.items() if not _doc(o).strip()]
    no_example = [n for n, o in NAMES.items() if _doc(o).strip() and not _examples(o)]
    no_section = [n for n, o in NAMES.items() if _examples(o)
                  and not re.search(r"^Examples?:\s*$", _doc(o), re.M)]
    assert (no_doc, no_example, no_section) == ([], [], []), (
        f"{len(no_doc)} public names have no docstring: {', '.join(no_doc)}\n"
        f"{len(no_example)} have no runnable >>> example: {', '.join(no_example)}\n"
        f"{len(no_section)} have examples outside an 'Examples:' section: "
        f"{', '.join(no_section)}")


def _globals(obj) -> dict:
    """What doctest gives an example: a copy of its defining module's namespace."""
    target = obj.fget if isinstance(obj, property) else obj
    module = target if isinstance(target, types.ModuleType) else inspect.getmodule(
        target if callable(target) or isinstance(target, type) else type(target))
    return dict(vars(module)) if module is not None else {"__name__": "__doctest__"}


def _have_tool(name: str) -> bool:
    from jax_pyptx.errors import ToolchainError
    from jax_pyptx.toolchain.find import find_tool

    try:
        find_tool(name)
    except ToolchainError:
        return False
    return True


def _run_examples(name: str, obj) -> None:
    doc = _doc(obj)
    if re.search(r"^\s*>>> (import|from) torch\b", doc, re.M) or \
            getattr(obj, "__module__", "").endswith(("torch_op", "torch_support")):
        pytest.importorskip("torch")
    if re.search(r"^\s*>>> .*\bplot_\w+\(", doc, re.M):
        pytest.importorskip("matplotlib")        # the viz extra
    test = doctest.DocTestParser().get_doctest(doc, _globals(obj), name, name, 0)
    for ex in test.examples:
        for tool in re.findall(r"# needs (ptxas|nvdisasm)\b", ex.source):
            if not _have_tool(tool):
                ex.options[doctest.SKIP] = True
    runner = doctest.DocTestRunner()         # plain doctest: no option flags unless a line asks
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


@pytest.mark.parametrize("name", [n for n, o in NAMES.items() if _examples(o)])
def test_example_runs(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)                  # examples that write files write them here
    monkeypatch.setenv("MPLBACKEND", "Agg")
    _run_examples(name, NAMES[name])


def _ptx_family_wrappers() -> dict:
    """``ptx.<family>.<name>`` -> wrapper, for the families the ``ptx`` namespace exposes
    (``ptx.wgmma``, ``ptx.mbarrier``, ...; the names of a family's ``__all__`` where it has
    one, else the functions it defines)."""
    from jax_pyptx.dsl import ptx

    out = {}
    for family in sorted(vars(ptx)):
        module = getattr(ptx, family)
        if not isinstance(module, types.ModuleType) or family.startswith("_"):
            continue
        exported = getattr(module, "__all__", None)
        for n, obj in _module_members(module):
            if callable(obj) and (exported is None or n in exported):
                out[f"ptx.{family}.{n}"] = obj
    return out


FAMILY = _ptx_family_wrappers()


def test_ptx_family_wrappers_have_docstrings():
    missing = [n for n, obj in FAMILY.items() if not _doc(obj).strip()]
    assert len(FAMILY) > 150
    assert missing == [], f"{len(missing)} ptx wrappers have no docstring: {', '.join(missing)}"


@pytest.mark.parametrize("name", [n for n, o in FAMILY.items() if _examples(o)])
def test_ptx_family_example_runs(name):
    """The examples the family wrappers do carry (the generated ones included) run."""
    _run_examples(name, FAMILY[name])
