"""PTX that ptxas refuses is refused by ``parse`` (so by ``launch`` on text and by the
``transpile`` command), naming the line; PTX it takes is taken, and runs as the hardware runs it.

Issue 23: out-of-range immediates, a float immediate for ``mov.u32``, unknown directives,
duplicate labels and entry names, sm_90 cluster instructions under ``.target sm_80`` and an
instruction missing operands were all accepted. Each case below is a minimal module with the
error ``parse`` raises (class and exact text) and ptxas's own verdict, checked live; its fixed
twin parses, ptxas takes it and the interpreter runs it to the value it must store. The other
direction is pinned too: what ptxas takes (integer immediates wider than the type, a float
literal for ``.b64``, a predicate immediate, a label reused in a nested block) parses and runs
with the hardware's meaning (``mov.u16 %rs1, 70000`` is 4464: ptxas keeps the low bits, its
SASS moves ``0x1170``).
"""
from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np
import pytest

from jax_pyptx import emit, parse
from jax_pyptx.__main__ import main
from jax_pyptx.errors import (
    ArchError, ParseError, PtxTypeError, PtxValueError, ToolchainError, ValidationError,
)
from jax_pyptx.interpret import launch


def _ptxas():
    try:
        from jax_pyptx.toolchain import find_tool

        return find_tool("ptxas").path
    except ToolchainError:
        return None


PTXAS = _ptxas()
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")

DECLS = (".reg .b16 %rs<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n"
         ".reg .pred %p<2>;\n")


def module(body: str, *, tgt: str = "sm_80", ver: str = "8.0", pre: str = "",
           hdr: str = "", post: str = "") -> str:
    """A kernel ``k(out)`` that runs ``body`` and stores ``%r1`` to ``out[0]``."""
    return (f".version {ver}\n.target {tgt}\n.address_size 64\n{pre}"
            f".visible .entry k(.param .u64 out){hdr}\n{{\n{DECLS}ld.param.u64 %rd1, [out];\n"
            f"{body}\nst.global.u32 [%rd1], %r1;\nret;\n}}\n{post}")


def where(text: str, needle: str, nth: int = 0) -> tuple:
    """(line, column) of the ``nth`` occurrence of ``needle`` in ``text`` (1-based)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def ptxas_verdict(text: str) -> tuple:
    """(ptxas accepts, its first error line) for ``text`` assembled for its own target."""
    arch = next(w for line in text.splitlines() if line.startswith(".target")
                for w in line[7:].replace(",", " ").split() if w.startswith("sm_"))
    with tempfile.TemporaryDirectory(prefix="rejects-") as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(text)
        proc = subprocess.run([PTXAS, f"-arch={arch}", "-o", os.path.join(d, "k.cubin"), src],
                              capture_output=True, text=True)
    errs = [ln for ln in proc.stderr.splitlines() if "error" in ln or "fatal" in ln]
    return proc.returncode == 0, errs[0] if errs else ""


def run(text: str) -> int:
    out = np.zeros(1, np.uint32)
    launch(text, "k", [out], block=(1, 1, 1))
    return int(out[0])


# ----------------------------------------------------------------------------- the cases
def _case(name, bad, fixed, cls, message, needle, value, *, col=False, nth=0):
    """``message``'s ``{at}`` is ``<ptx>:line`` of ``needle`` in ``bad`` (``:col`` too for a
    ParseError, which carries the column, and `` at 'token'``)."""
    line, c = where(bad, needle, nth)
    at = f"<ptx>:{line}:{c}" if col else f"<ptx>:{line}"
    return pytest.param(bad, fixed, cls, message.format(at=at), value, id=name)


CASES = [
    _case("float-immediate-for-mov.u32",
          module("mov.u32 %r1, 1.5;"), module("mov.u32 %r1, 3;"), PtxTypeError,
          "{at}: mov.u32 operand 2: immediate 1.5 does not fit .u32: a float literal; "
          "allowed: an integer", "mov.u32 %r1, 1.5", 3),
    _case("hex-float-for-mov.u32",
          module("mov.u32 %r1, 0f3F800000;"), module("mov.b32 %r1, 0f3F800000;"), PtxTypeError,
          "{at}: mov.u32 operand 2: immediate 0f3F800000 does not fit .u32: a float literal; "
          "allowed: an integer", "mov.u32 %r1, 0f", 0x3F800000),
    _case("decimal-float-for-mov.b32",
          module("mov.b32 %r1, 1.5;"), module("mov.b32 %r1, 0f3FC00000;"), PtxTypeError,
          "{at}: mov.b32 operand 2: immediate 1.5 does not fit .b32: a float literal; "
          "allowed: an integer or a 0f... literal", "mov.b32 %r1, 1.5", 0x3FC00000),
    _case("integer-for-mov.f32",
          module("mov.f32 %f1, 1;\nmov.b32 %r1, %f1;"),
          module("mov.f32 %f1, 1.0;\nmov.b32 %r1, %f1;"), PtxTypeError,
          "{at}: mov.f32 operand 2: immediate 1 does not fit .f32: an integer for a float type "
          "(write a float literal such as 1.0 or 0f3F800000)", "mov.f32", 0x3F800000),
    _case("integer-for-add.f32",
          module("mov.f32 %f1, 0f40000000;\nadd.f32 %f1, %f1, 2;\ncvt.rzi.u32.f32 %r1, %f1;"),
          module("mov.f32 %f1, 0f40000000;\nadd.f32 %f1, %f1, 2.0;\ncvt.rzi.u32.f32 %r1, %f1;"),
          PtxTypeError, "{at}: add.f32 operand 3: immediate 2 does not fit .f32: an integer for "
          "a float type (write a float literal such as 1.0 or 0f3F800000)", "add.f32", 4),
    _case("integer-literal-over-64-bits",
          module("mov.u64 %rd2, 1180591620717411303424;\ncvt.u32.u64 %r1, %rd2;"),
          module("mov.u64 %rd2, 18446744073709551615;\ncvt.u32.u64 %r1, %rd2;"), PtxTypeError,
          "{at}: mov.u64 operand 2: integer literal 1180591620717411303424 does not fit 64 "
          "bits (PTX integer constants are 64-bit)", "mov.u64 %rd2", 0xFFFFFFFF),
    _case("barrier-number-out-of-range",
          module("bar.sync 16;\nmov.u32 %r1, 7;"), module("bar.sync 15;\nmov.u32 %r1, 7;"),
          PtxValueError, "{at}: bar.sync operand 1: immediate 16 is out of range; allowed: "
          "0..15", "bar.sync", 7),
    _case("missing-operand",
          module("mov.u32 %r1, 4;\nadd.u32 %r1, %r1;"),
          module("mov.u32 %r1, 4;\nadd.u32 %r1, %r1, 1;"), ValidationError,
          "{at}: add.u32 takes 3 operands (d:type s:type s:type); got 2", "add.u32", 5),
    _case("no-operands",
          module("mov.u32 %r1, 4;\nld.global.u32 %r1;"),
          module("mov.u32 %r1, 4;\nld.global.u32 %r2, [%rd1];"), ValidationError,
          "{at}: ld.global.u32 takes 2 operands (d1:type m); got 1", "ld.global.u32", 4),
    _case("unknown-module-directive",
          module("mov.u32 %r1, 1;", pre=".foo 1;\n"),
          module("mov.u32 %r1, 1;", pre='.pragma "nounroll";\n'), ParseError,
          "{at}: unknown directive .foo at module scope; allowed here: .alias, .pragma at "
          "'.foo'", ".foo", 1, col=True),
    _case("unknown-body-directive",
          module(".maxnreg 32;\nmov.u32 %r1, 1;"),
          module("mov.u32 %r1, 1;", hdr=" .maxnreg 32"), ParseError,
          "{at}: unknown directive .maxnreg in a function body; allowed here: .branchtargets, "
          ".callprototype, .calltargets, .const, .global, .loc, .local, .param, .pragma, .reg, "
          ".shared, .tex at '.maxnreg'", ".maxnreg", 1, col=True),
    _case("unknown-function-directive",
          module("mov.u32 %r1, 1;", hdr=" .maxntidx 32"),
          module("mov.u32 %r1, 1;", hdr=" .maxntid 32"), ParseError,
          "{at}: unknown directive .maxntidx in a function header; allowed here: "
          ".abi_preserve, .abi_preserve_control, .blocksareclusters, .explicitcluster, "
          ".maxclusterrank, .maxnctapersm, .maxnreg, .maxntid, .minnctapersm, .noreturn, "
          ".pragma, .reqnctapercluster, .reqntid at '.maxntidx'", ".maxntidx", 1, col=True),
    _case("duplicate-label",
          module("mov.u32 %r1, 1;\nL1:\nadd.u32 %r1, %r1, 1;\nL1:\nadd.u32 %r1, %r1, 1;"),
          module("mov.u32 %r1, 1;\nL1:\nadd.u32 %r1, %r1, 1;\nL2:\nadd.u32 %r1, %r1, 1;"),
          ParseError, "{at}: duplicate label 'L1' in this scope (first defined at line 13) "
          "at 'L1'", "L1:", 3, col=True, nth=1),
    _case("duplicate-entry",
          module("mov.u32 %r1, 1;", post=".visible .entry k()\n{\nret;\n}\n"),
          module("mov.u32 %r1, 1;", post=".visible .entry k2()\n{\nret;\n}\n"), ParseError,
          "{at}: duplicate definition of entry 'k' (first defined at line 4) at 'k'",
          "k()", 1, col=True),
    _case("entry-and-function-of-one-name",
          module("mov.u32 %r1, 1;", pre=".func k()\n{\nret;\n}\n"),
          module("mov.u32 %r1, 1;", pre=".func f()\n{\nret;\n}\n"), ParseError,
          "{at}: 'k' is defined as an entry here and as a function at line 4 at 'k'",
          "k(.param", 1, col=True),
    _case("duplicate-module-variable",
          module("mov.u32 %r1, 1;", pre=".global .u32 g;\n.global .u32 g;\n"),
          module("mov.u32 %r1, 1;", pre=".global .u32 g;\n.global .u32 h;\n"), ParseError,
          "{at}: duplicate definition of variable 'g' (first defined at line 4) at 'g'",
          "g;", 1, col=True, nth=1),
    _case("cluster-barrier-under-sm_80",
          module("barrier.cluster.arrive;\nbarrier.cluster.wait;\nmov.u32 %r1, 1;"),
          module("barrier.cluster.arrive;\nbarrier.cluster.wait;\nmov.u32 %r1, 1;",
                 tgt="sm_90"), ArchError,
          "{at}: barrier.cluster.arrive needs sm_90 (PTX ISA 7.8); kernel 'k' targets sm_80",
          "barrier.cluster.arrive", 1),
    _case("cluster-special-register-under-sm_80",
          module("mov.u32 %r1, %cluster_ctarank;\nadd.u32 %r1, %r1, 5;"),
          module("mov.u32 %r1, %cluster_ctarank;\nadd.u32 %r1, %r1, 5;", tgt="sm_90"),
          ArchError, "{at}: special register %cluster_ctarank needs sm_90 or higher; the "
          "module targets sm_80", "mov.u32 %r1, %cluster", 5),
    _case("cluster-directive-under-sm_80",
          module("mov.u32 %r1, 1;", hdr=" .reqnctapercluster 1"),
          module("mov.u32 %r1, 1;", hdr=" .reqnctapercluster 1", tgt="sm_90"), ArchError,
          "{at}: .reqnctapercluster needs sm_90 or higher; the module targets sm_80",
          ".reqnctapercluster", 1),
    _case("version-older-than-target",
          module("mov.u32 %r1, 1;", tgt="sm_90", ver="7.0"),
          module("mov.u32 %r1, 1;", tgt="sm_90", ver="7.8"), ParseError,
          "{at}: .version 7.0 does not support .target sm_90; it needs .version 7.8 or later "
          "at 'sm_90'", "sm_90", 1, col=True),
    _case("instruction-newer-than-version",
          module("elect.sync %r1|%p1, -1;\nmov.u32 %r1, 1;", tgt="sm_90", ver="7.8"),
          module("elect.sync %r2|%p1, -1;\nmov.u32 %r1, 1;", tgt="sm_90", ver="8.0"),
          ArchError, "{at}: elect.sync needs PTX ISA 8.0; kernel 'k' sets version=7.8",
          "elect.sync", 1),
    _case("unknown-target",
          module("mov.u32 %r1, 1;", tgt="sm_81"), module("mov.u32 %r1, 1;", tgt="sm_86"),
          ParseError, "{at}: unknown .target: allowed: sm_80, sm_86, sm_89, sm_90, sm_90a, "
          "sm_100, sm_100a, sm_100f, sm_101a, sm_103a, sm_110a, sm_120, sm_120a, sm_121a or "
          "'auto' at 'sm_81'", "sm_81", 1, col=True),
]


@pytest.mark.parametrize("bad,fixed,cls,message,value", CASES)
def test_parse_refuses_it_naming_the_line(bad, fixed, cls, message, value):
    with pytest.raises(cls) as e:
        parse(bad)
    assert type(e.value) is cls
    assert str(e.value) == message
    m = parse(fixed)                         # the twin parses, prints and re-parses the same
    assert parse(emit(m)) == m


@needs_ptxas
@pytest.mark.parametrize("bad,fixed,cls,message,value", CASES)
def test_ptxas_refuses_it_too_and_takes_the_twin(bad, fixed, cls, message, value):
    ok, err = ptxas_verdict(bad)
    assert not ok, f"ptxas takes what parse refuses: {message}"
    line = int(message.split(":")[1])
    # the same line (ptxas names a function header directive at the body's '{', the next
    # line), or a fatal error, which names none
    assert any(f"line {n};" in err for n in (line, line + 1)) or "fatal" in err, err
    assert ptxas_verdict(fixed) == (True, "")


@pytest.mark.parametrize("bad,fixed,cls,message,value", CASES)
def test_launch_refuses_it_before_running_and_runs_the_twin(bad, fixed, cls, message, value):
    out = np.full(1, 12345, np.uint32)
    with pytest.raises(cls) as e:
        launch(bad, "k", [out], block=(1, 1, 1))
    assert str(e.value) == message
    assert out[0] == 12345                   # nothing ran
    assert run(fixed) == value


@pytest.mark.parametrize("bad,fixed,cls,message,value", CASES[:3] + CASES[7:8] + CASES[12:13])
def test_transpile_command_exits_1_naming_the_line(bad, fixed, cls, message, value, tmp_path,
                                                     capsys):
    src = tmp_path / "k.ptx"
    src.write_text(bad)
    assert main(["transpile", str(src)]) == 1
    err = capsys.readouterr().err
    assert err == f"jax-pyptx transpile: {message.replace('<ptx>', str(src))}\n"
    src.write_text(fixed)
    assert main(["transpile", str(src), "-o", str(tmp_path / "k.py")]) == 0
    assert "@kernel(arch=" in (tmp_path / "k.py").read_text()


# ----------------------------------------------------------------------------- taken by both
TAKEN = [
    # an integer wider than the type: ptxas keeps its low bits (SASS: MOV R, 0x1170)
    pytest.param(module("mov.u16 %rs1, 70000;\ncvt.u32.u16 %r1, %rs1;"), 4464, id="u16-70000"),
    pytest.param(module("mov.u32 %r1, 2;\nadd.u32 %r1, %r1, 4294967297;"), 3, id="add-2**32+1"),
    pytest.param(module("mov.u32 %r1, -1;\nshr.u32 %r1, %r1, 28;"), 15, id="u32-minus-1"),
    # a shift past the width: all bits shifted out
    pytest.param(module("mov.u32 %r1, 1;\nshl.b32 %r1, %r1, 40;"), 0, id="shl-40"),
    # a decimal float for .b64: its double's bits
    pytest.param(module("mov.b64 %rd2, 1.5;\nmov.b64 {%r2, %r1}, %rd2;"), 0x3FF80000,
                 id="b64-decimal-float"),
    pytest.param(module("mov.b64 %rd2, 0d3FF8000000000000;\nmov.b64 {%r2, %r1}, %rd2;"),
                 0x3FF80000, id="b64-hex-double"),
    # a predicate immediate: any integer, non-zero is true
    pytest.param(module("vote.sync.ballot.b32 %r1, 1, -1;"), 1, id="vote-immediate-predicate"),
    pytest.param(module("mov.u32 %r1, 1;\nselp.b32 %r1, 9, 4, 0;"), 4, id="selp-false"),
    # one label name in a scope and in a nested one; a prototype, then its definition
    pytest.param(module("mov.u32 %r1, 1;\nL1:\n{\nL1:\nadd.u32 %r1, %r1, 1;\n}"), 2,
                 id="label-in-nested-scope"),
    pytest.param(module("mov.u32 %r1, 6;", pre=".func f();\n.func f()\n{\nret;\n}\n"), 6,
                 id="prototype-then-definition"),
]


@pytest.mark.parametrize("text,value", TAKEN)
def test_what_ptxas_takes_parses_and_runs_as_the_hardware_does(text, value):
    m = parse(text)
    assert parse(emit(m)) == m
    assert run(text) == value


@needs_ptxas
@pytest.mark.parametrize("text,value", TAKEN)
def test_ptxas_takes_them(text, value):
    assert ptxas_verdict(text) == (True, "")


def test_check_false_reads_what_ptxas_refuses():
    """``check=False`` is the syntax-only reading (tools that print PTX back as written)."""
    for p in CASES:
        bad = p.values[0]
        m = parse(bad, check=False)
        assert parse(emit(m), check=False) == m
