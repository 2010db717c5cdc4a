"""BUILD (Bazel) and CMakeLists.txt stay in sync with the sources on disk.

The BUILD file is Starlark; it is evaluated here as Python with stand-ins for
the Bazel rules (``glob`` really globs), and the rules it declares are checked:
every ``ffi/`` C++ file named explicitly and exactly once, every package Python
file covered, every ``tests/test_*.py`` given a py_test.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _glob(patterns, exclude=(), **_):
    # Bazel's "dir/**" matches every file below dir; pathlib's needs "dir/**/*".
    patterns = [p + "/*" if p.endswith("**") else p for p in patterns]
    exclude = [p + "/*" if p.endswith("**") else p for p in exclude]
    found = set()
    for pat in patterns:
        found |= {p.relative_to(ROOT).as_posix() for p in ROOT.glob(pat) if p.is_file()}
    for pat in exclude:
        found -= {p.relative_to(ROOT).as_posix() for p in ROOT.glob(pat)}
    return sorted(found)


def evaluate_build() -> dict[str, dict]:
    rules: dict[str, dict] = {}

    def rule(kind):
        def make(**kw):
            assert kw["name"] not in rules, f"duplicate target {kw['name']}"
            rules[kw["name"]] = dict(kw, kind=kind)
        return make

    env: dict = {
        "glob": _glob,
        "package": lambda **kw: None,
        "licenses": lambda *a: None,
        "requirement": lambda name: f"@pypi//{name}",
        "genrule": rule("genrule"),
    }

    def load(label, *names, **aliases):
        known = {"nanobind_extension", "requirement", "cc_library", "py_library", "py_test"}
        for n in names:
            assert n in known, f"unexpected symbol {n} loaded from {label}"
            if n != "requirement":
                env[n] = rule(n)

    env["load"] = load
    exec(compile((ROOT / "BUILD").read_text(), "BUILD", "exec"), env)
    return rules


@pytest.fixture(scope="module")
def rules():
    return evaluate_build()


def test_every_ffi_source_is_named_once(rules):
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "ffi").rglob("*")
               if p.suffix in (".cc", ".h")}
    named = []
    for r in rules.values():
        if r["kind"] in ("cc_library", "nanobind_extension"):
            named += list(r.get("srcs", [])) + list(r.get("hdrs", []))
    assert sorted(named) == sorted(set(named)), "a C++ file is listed twice"
    assert set(named) == on_disk
    assert rules["jax_pyptx/_ffi"]["srcs"] == ["ffi/module.cc"]
    assert ":ffi_launcher" in rules["jax_pyptx/_ffi"]["deps"]
    assert rules["jax_pyptx/interpret/state/_arith"]["srcs"] == ["ffi/interp/arith.cc", "ffi/interp/bits.h",
                                                                  "ffi/interp/ex2.cc", "ffi/interp/ex2.h",
                                                                  "ffi/interp/matrix.cc", "ffi/interp/matrix.h",
                                                                  "ffi/interp/mma.cc", "ffi/interp/mma.h"]


def test_cmake_sources_match_ffi_dir():
    text = (ROOT / "CMakeLists.txt").read_text()
    block = re.search(r"set\(JAX_PYPTX_FFI_SOURCES\s+(.*?)\)", text, re.S).group(1)
    listed = block.split()
    assert sorted(listed) == sorted(p.relative_to(ROOT).as_posix()
                                    for p in (ROOT / "ffi").glob("*.cc"))
    assert "nanobind_add_module(_ffi" in text
    # the interpreter's native arithmetic: its own module, built at -O3 (NOMINSIZE)
    assert ("nanobind_add_module(_arith NB_STATIC NOMINSIZE ffi/interp/arith.cc ffi/interp/ex2.cc "
            "ffi/interp/matrix.cc ffi/interp/mma.cc)") in text
    assert "install(TARGETS _arith LIBRARY DESTINATION jax_pyptx/interpret/state)" in text


def test_python_sources_are_covered(rules):
    lib = rules["jax_pyptx"]
    assert lib["kind"] == "py_library"
    srcs = set(lib["srcs"])
    on_disk = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("jax_pyptx/**/*.py")}
    on_disk |= {p.relative_to(ROOT).as_posix() for p in ROOT.glob("pyptx/**/*.py")}
    assert on_disk and on_disk <= srcs
    assert "jax_pyptx/runtime/ffi_bridge.py" in srcs
    assert ":jax_pyptx/_ffi" in lib["data"]
    assert ":jax_pyptx/interpret/state/_arith" in lib["data"]


def test_every_test_file_has_a_py_test(rules):
    tests = {r["name"]: r for r in rules.values() if r["kind"] == "py_test"}
    expect = {p.stem for p in (ROOT / "tests").glob("test_*.py")}
    assert set(tests) == expect
    for name, r in tests.items():
        assert f"tests/{name}.py" in r["srcs"]
        assert r["main"] == "pytest_main.py" and ":jax_pyptx" in r["deps"]
        assert "BUILD" in r["data"] and "ffi/cuda_driver.h" in r["data"]
