"""The ISA table against real PTX: every instruction of the corpus (nvcc for sm_80/sm_90a/sm_100a,
Triton, the project's own kernels; ptxas accepts every file) validates against the table for the
file's own ``.target`` and ``.version``, and the corpus uses no instruction the table lacks.

The spellings the corpus taught the table (one-element vectors in ld/st, float immediates in
bit-typed moves, compiler modifier orders, coordinate operands, ``d|p`` destinations) are pinned
below, each line checked against both the table and ptxas, with the misspellings next to them.
"""
import re

import pytest

from jax_pyptx import emit, kernel, parse, ptx, reg
from jax_pyptx.errors import PtxError, ValidationError
from jax_pyptx.ir.nodes import Block, Instruction
from jax_pyptx.isa import TABLE, check
from jax_pyptx.isa.model import parse_target
from jax_pyptx.types import u32, u64

from .corpus import corpus_files, read, target_of
from .isa_util import ptxas_errors

FILES = corpus_files()
_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.M)


def _walk(stmts):
    for s in stmts:
        if type(s) is Block:
            yield from _walk(s.body)
        elif type(s) is Instruction:
            yield s


def instructions(rel):
    """(target, version, [instructions]) of corpus file ``rel``."""
    text = read(rel)
    version = tuple(int(x) for x in _VERSION.search(text).groups())
    module = parse(text, rel)
    ins = [s for f in module.items if getattr(f, "body", None) for s in _walk(f.body)]
    return parse_target(target_of(text)), version, ins


def rejected(rel):
    target, version, ins = instructions(rel)
    out = []
    for s in ins:
        try:
            check(s, target, version)
        except PtxError as e:
            out.append(str(e))
    return out


@pytest.mark.parametrize("rel", FILES)
def test_every_corpus_instruction_validates(rel):
    assert rejected(rel) == []


def test_corpus_uses_only_instructions_the_table_knows():
    """Names the table lacks are allowed by design (check() returns None for them); the corpus
    uses none: call, brx.idx, alloca, wmma, tex/tld4/suld/sust, tensormap.replace and mma.sp are
    all in the table."""
    names, total = {}, 0
    for rel in FILES:
        for s in instructions(rel)[2]:
            total += 1
            if s.opcode not in TABLE:
                names[s.opcode] = names.get(s.opcode, 0) + 1
    assert names == {}
    assert total > 40_000 and len(FILES) > 100


# ----------------------------------------------------------------------------- spellings
# (line, the table and ptxas accept it), for sm_90a at PTX ISA 8.7
SPELLINGS = (
    # a scalar ld/st operand in braces (Triton), and only there
    ("ld.global.b32 {%r1}, [%rd1];", True),
    ("st.global.b16 [%rd1], {%rs1};", True),
    ("ld.global.v2.b32 {%r1}, [%rd1];", False),
    ("ld.global.b32 {%r1, %r2}, [%rd1];", False),
    ("add.u32 {%r1}, %r2, %r3;", False),
    # hex float immediates: bit types of their width only
    ("mov.b32 %r1, 0fFF800000;", True),
    ("mov.b64 %rd1, 0d7FF0000000000000;", True),
    ("mov.b64 %rd1, 0f3F800000;", False),
    ("mov.u32 %r1, 0f3F800000;", False),
    ("add.u32 %r1, %r1, 0f3F800000;", False),
    # pack / unpack: halves or quarters of the type
    ("mov.b16 %rs1, {%rc1, %rc2};", True),
    ("mov.b64 {%rs1, %rs2, %rs3, %rs4}, %rd1;", True),
    ("mov.b32 %r1, {%r2, %r3};", False),
    # the orders compilers emit for atom / red
    ("atom.global.gpu.acq_rel.add.u32 %r1, [%rd1], %r2;", True),
    ("atom.global.acq_rel.gpu.cas.b32 %r1, [%rd1], %r2, %r3;", True),
    ("atom.add.release.gpu.u32 %r1, [%rd1], %r2;", True),
    ("red.global.gpu.add.u32 [%rd1], %r2;", True),
    # d[|p], d|p, p[|q] and lone predicate destinations
    ("shfl.sync.idx.b32 %r1|%p1, %r2, 0, 31, -1;", True),
    ("shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;", True),
    ("shfl.sync.idx.b32 %p1, %r2, 0, 31, -1;", False),
    ("match.all.sync.b32 %r1|%p1, %r2, -1;", True),
    ("match.all.sync.b32 %p1, %r2, -1;", False),
    ("match.any.sync.b32 %r1|%p1, %r2, -1;", False),
    ("elect.sync %r1|%p1, -1;", True),
    ("elect.sync _|%p1, -1;", True),
    ("elect.sync %r1, -1;", False),
    ("elect.sync %p1, -1;", False),
    ("lop3.or.b32 _|%p1, %r2, %r3, %r4, 0x80, %p2;", True),
    ("lop3.or.b32 %r1, %r2, %r3, %r4, 0x80, %p2;", False),
    ("lop3.or.b32 %p1, %r2, %r3, %r4, 0x80, %p2;", False),
    ("setp.eq.u32 _|%p1, %r1, %r2;", True),
    ("vote.sync.any.pred %p1|%p2, %p3, -1;", False),
    ("testp.finite.f32 %p1|%p2, %f1;", False),
    ("isspacep.global %p1|%p2, %rd1;", False),
    # [tmap, {coords}]: as many coordinates as dimensions; a plain address has none
    ("cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2}];", True),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2, %r3, %r1}];", False),
    ("tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r2}];", True),
    ("tex.a1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2}];", False),
    ("suld.b.2d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];", True),
    ("suld.b.2d.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5, %r6}];", False),
)
DECLS = (".reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<4>; .reg .f32 %f<8>; "
         ".reg .b16 %rs<8>; .reg .b8 %rc<4>;")


def _spelling_module():
    body = "\n".join("\t" + line for line, _ in SPELLINGS)
    return (".version 8.7\n.target sm_90a\n.address_size 64\n\n.visible .entry k()\n{\n"
            f"\t{DECLS}\n{body}\n\tret;\n}}\n")


def test_spellings_agree_with_ptxas():
    text = _spelling_module()
    target = parse_target("sm_90a")
    fn = parse(text, check=False).items[-1]       # (lines ptxas refuses too)
    ins = [s for s in _walk(fn.body)][:len(SPELLINGS)]
    errs = ptxas_errors(text, "sm_90a", (8, 7))
    assert 0 not in errs, errs.get(0)
    first = text.split("\n").index("\t" + SPELLINGS[0][0]) + 1
    got = []
    for i, ((line, ok), s) in enumerate(zip(SPELLINGS, ins)):
        try:
            table = check(s, target, (8, 7)) is not None
        except PtxError:
            table = False
        got.append((line, table, first + i not in errs))
    assert got == [(line, ok, ok) for line, ok in SPELLINGS]


def test_other_orders_are_accepted_but_the_dsl_emits_the_isa_order():
    @kernel(arch="sm_90a")
    def k():
        a = ptx.addr(reg.from_(ptx.special.globaltimer(), u64))
        ptx.atomic.atom("add", a, reg.scalar(u32, 1), space="global", sem="acq_rel",
                        scope="gpu")
        ptx.ret()

    assert "\tatom.acq_rel.gpu.global.add.u32 \t" in k.ptx()
    target = parse_target("sm_90a")
    ins = [s for s in _walk(parse(_spelling_module(), check=False).items[-1].body)]
    triton = next(s for s in ins if s.opcode == "atom" and s.modifiers[:2] == (".global", ".gpu"))
    assert check(triton, target).name == "atom"
    # any order ptxas takes is taken (tests/test_isa_orders.py), and printed as written
    odd = _spelling_module().replace("atom.global.gpu.acq_rel.add.u32", "atom.u32.global.add")
    bad = next(s for s in _walk(parse(odd, check=False).items[-1].body)
               if s.opcode == "atom" and s.modifiers[0] == ".u32")
    assert check(bad, target).name == "atom"
    assert "\tatom.u32.global.add \t%r1, [%rd1], %r2;" in emit(parse(odd, check=False))
    at = odd.split("\n").index("\tatom.u32.global.add.u32 %r1, [%rd1], %r2;".replace(
        ".u32 %r1", " %r1")) + 1
    errs = ptxas_errors(odd, "sm_90a", (8, 7))
    assert errs and at not in errs and 0 not in errs       # ptxas takes the line as well
    # an order ptxas refuses (it reads .expect_tx as part of the name) names the ISA's order
    wrong = parse(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry w()\n{\n"
                  ".reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
                  "mbarrier.arrive.release.expect_tx.cta.shared.b64 %rd1, [%rd0], %r1;\n}\n",
                  check=False)
    bad = next(s for s in _walk(wrong.items[-1].body))
    with pytest.raises(ValidationError, match=r"mbarrier\.arrive\.release\.expect_tx\.cta\."
                                              r"shared\.b64: modifiers out of order; write "
                                              r"mbarrier\.arrive\.expect_tx\.release\.cta"
                                              r"\.shared\.b64"):
        check(bad, target)
