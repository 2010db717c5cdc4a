"""The PTX parser: every construct it accepts, the IR it builds, and the errors it raises."""
from __future__ import annotations

import textwrap

import pytest

import jax_pyptx
from jax_pyptx import ParseError, emit, parse
from jax_pyptx.ir.nodes import (
    Addr, Block, Guard, Imm, Instruction, Label, Loc, Param, ParenList, Pragma,
    PredPair, RawDirective, Reg, RegDecl, Section, Sink, Sym, VarDecl, Vec,
)
from jax_pyptx.text.lexer import tokenize
from jax_pyptx.types import b8, b32, b64, f32, pred, u32, u64

HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def body_of(src: str, decls: str = ".reg .b32 %r<10>;\n.reg .b64 %rd<10>;\n.reg .pred %p<4>;\n"
            ".reg .f32 %f<4>;\n", keep_decls: bool = False, check: bool = True) -> list:
    text = HEAD + ".visible .entry k()\n{\n" + decls + textwrap.dedent(src) + "\n}\n"
    m = parse(text, check=check)
    assert parse(emit(m), check=check) == m
    return [s for s in m.functions[0].body if keep_decls or not isinstance(s, RegDecl)]


def one(src: str, **kw) -> Instruction:
    (ins,) = body_of(src, **kw)
    return ins


# ----------------------------------------------------------------------------- module
def test_module_header():
    m = parse(".version 9.0\n.target sm_80, debug\n.address_size 64\n")
    assert m.version == (9, 0) and m.target == ("sm_80", "debug") and m.address_size == 64
    assert m.items == []
    assert parse(".version 7.8 .target sm_90").address_size == 32   # the PTX default


def test_top_level_parse_delegates():
    assert jax_pyptx.parse(HEAD) == parse(HEAD)


def test_entry_params_and_directives():
    m = parse(HEAD + """
    .visible .entry kern(
        .param .u64 .ptr .global .align 16 kern_param_0,
        .param .u32 n,
        .param .align 64 .b8 tmap[128]
    )
    .maxntid 128, 1, 1
    .minnctapersm 2
    .maxnreg 168
    .explicitcluster
    .reqnctapercluster 2, 1, 1
    .pragma "nounroll";
    { ret; }
    """)
    (f,) = m.functions
    assert f.kind == ".entry" and f.linkage == ".visible" and f.name == "kern"
    assert f.params == [
        Param("kern_param_0", u64, ptr_space=".global", ptr_align=16),
        Param("n", u32),
        Param("tmap", b8, align=64, array=128),
    ]
    assert f.directives == [
        RawDirective(".maxntid", ("128, 1, 1",)), RawDirective(".minnctapersm", ("2",)),
        RawDirective(".maxnreg", ("168",)), RawDirective(".explicitcluster"),
        RawDirective(".reqnctapercluster", ("2, 1, 1",)),
        RawDirective(".pragma", ('"nounroll"',), terminated=True),
    ]
    assert f.body == [Instruction("ret")]


def test_funcs_prototypes_and_linkage():
    m = parse(HEAD + """
    .extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
    .weak .func (.param .align 16 .b8 ret[16]) pair(.reg .b32 x) .noreturn { ret; }
    .func helper { ret; }
    .entry bare { exit; }
    """)
    decl, pair, helper, bare = m.items
    assert decl.body is None and decl.linkage == ".extern"
    assert decl.ret_params == [Param("func_retval0", b32)]
    assert [p.name for p in decl.params] == ["a", "b"]
    assert pair.linkage == ".weak" and pair.noreturn
    assert pair.ret_params == [Param("ret", b8, align=16, array=16)]
    assert pair.params == [Param("x", b32, space=".reg")]
    assert helper.params == [] and helper.linkage == "" and helper.kind == ".func"
    assert bare.kind == ".entry" and bare.body == [Instruction("exit")]
    assert parse(emit(m)) == m


def test_module_variables():
    m = parse(HEAD + """
    .const .align 4 .b8 coef[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 96, 64, 0, 0, 128, 191};
    .global .align 4 .u32 counter = 5;
    .global .align 8 .u64 ptr = generic(counter);
    .global .align 8 .u64 row = generic(arr)+32;
    .global .attribute(.managed) .align 4 .u32 managed = 7;
    .visible .global .align 4 .f32 mat[2][2] = {{0f3F800000, 0}, {0, 0f3F800000}};
    .extern .shared .align 16 .b8 smem[];
    .shared .align 8 .v2 .f32 pair;
    .global .s32 neg = -1;
    .alias fa, fb;
    """)
    coef, counter, ptr, row, managed, mat, smem, pair, neg, alias = m.items
    assert coef == VarDecl(".const", b8, "coef", align=4, dims=(16,), init=tuple(
        "0 0 128 63 0 0 0 64 0 0 96 64 0 0 128 191".split()))
    assert counter.init == "5" and counter.type is u32
    assert ptr.init == "generic(counter)" and row.init == "generic(arr) + 32"
    assert managed.attrs == (".attribute(.managed)",)
    assert mat.linkage == ".visible" and mat.dims == (2, 2)
    assert mat.init == (("0f3F800000", "0"), ("0", "0f3F800000"))
    assert smem == VarDecl(".shared", b8, "smem", align=16, dims=(None,), linkage=".extern")
    assert pair.vector == 2 and pair.type is f32
    assert neg.init == "-1"
    assert alias == RawDirective(".alias", ("fa, fb",), terminated=True)
    assert parse(emit(m)) == m


def test_file_section_and_loc():
    m = parse(HEAD + """
    .visible .entry k()
    {
    $L__func_begin0:
        .loc 1 5 0                     // trailing comment
        ret;
        .loc 2 155 14, function_name $L__info_string0, inlined_at 1 45 9
        ret;
    $L__func_end0:
    }
    .file 1 "tests/corpus/cuda/a.cu"
    .file 2 "/tmp/b.cu", 1700000000, 1234
    .section .debug_info
    {
    .b32 679
    .b8 2
    .b32 .debug_abbrev
    .b8 108,103,101
    .b64 $L__func_begin0
    $L__info_string0:
    .b8 95,90 // name
    }
    .section .debug_macinfo { }
    """)
    f, file1, file2, info, mac = m.items
    assert f.body[1] == Loc((1, 5, 0))
    assert f.body[3] == Loc((2, 155, "14,", "function_name", "$L__info_string0,", "inlined_at",
                             1, 45, 9))
    assert file1 == RawDirective(".file", ("1", '"tests/corpus/cuda/a.cu"'))
    assert file2 == RawDirective(".file", ("1700000000,",)[:0] + ("2", '"/tmp/b.cu",',
                                                                  "1700000000,", "1234"))
    assert info == Section(".debug_info", [
        RawDirective(".b32", ("679",)), RawDirective(".b8", ("2",)),
        RawDirective(".b32", (".debug_abbrev",)), RawDirective(".b8", ("108,103,101",)),
        RawDirective(".b64", ("$L__func_begin0",)), Label("$L__info_string0"),
        RawDirective(".b8", ("95,90",)),
    ])
    assert mac == Section(".debug_macinfo", [])
    assert parse(emit(m)) == m


# ----------------------------------------------------------------------------- declarations
def test_reg_declarations_and_types():
    body = body_of("""
        .reg .b32 %a<3>, %x, %y;
        .reg .v4 .f32 %v;
        .reg .align 16 .b64 %q;
        .reg .pred p;
        add.s32 %a1, %x, %y;
        @p bra done;
    done:
        ret;
    """, decls="", keep_decls=True)
    assert body[:5] == [
        RegDecl(b32, prefix="%a", count=3), RegDecl(b32, ("%x", "%y")),
        RegDecl(f32, ("%v",), vector=4), RegDecl(b64, ("%q",), align=16), RegDecl(pred, ("p",)),
    ]
    add = body[5]
    assert [o.type for o in add.operands] == [b32, b32, b32]
    assert body[6] == Instruction("bra", (), (Sym("done"),), Guard("p"))


def test_body_variables_scopes_and_pragmas():
    body = body_of("""
        .local .align 8 .b8 __local_depot0[32];
        .shared .align 16 .b8 buf[1024];
        .pragma "nounroll";
        {
            .reg .b32 temp_param_reg;
            .param .b32 param0;
            st.param.b32 [param0+0], %r1;
            { .reg .pred q; setp.ne.b32 q, %r1, 0; }
        }
    """)
    depot, buf, prag, blk = body
    assert depot == VarDecl(".local", b8, "__local_depot0", align=8, dims=(32,))
    assert buf.space == ".shared" and buf.dims == (1024,)
    assert prag == Pragma("nounroll")
    assert isinstance(blk, Block)
    assert blk.body[1] == VarDecl(".param", b32, "param0")
    assert blk.body[2] == Instruction("st", (".param", ".b32"), (Addr(Sym("param0")), Reg("%r1")))
    inner = blk.body[3]
    assert isinstance(inner, Block)
    assert inner.body[1].operands[0] == Reg("q")


# ----------------------------------------------------------------------------- instructions
def test_opcode_split_matches_isa():
    ins = one("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
              "[%r1], [%rd1, {%r2, %r3}], [%r4];")
    assert ins.opcode == "cp.async.bulk.tensor"
    assert ins.modifiers == (".2d", ".shared::cluster", ".global",
                             ".mbarrier::complete_tx::bytes")
    assert ins.operands[1] == Addr(Reg("%rd1"), 0, (Vec((Reg("%r2"), Reg("%r3"))),))
    ins = one("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;")
    assert (ins.opcode, ins.modifiers) == ("mbarrier.try_wait", (".parity", ".shared::cta", ".b64"))
    ins = one("tcgen05.wait::ld.sync.aligned;", check=False)     # (sm_100a: syntax only)
    assert (ins.opcode, ins.modifiers) == ("tcgen05.wait::ld", (".sync", ".aligned"))
    ins = one("ld.global.nc.L1::no_allocate.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16];")
    assert ins.opcode == "ld" and ins.modifiers[2] == ".L1::no_allocate"


@pytest.mark.parametrize("src,operand", [
    ("mov.b32 %r1, 0f3F800000;", Imm("0f3F800000")),
    ("mov.b64 %rd1, 0d3FF0000000000000;", Imm("0d3FF0000000000000")),
    ("mov.b32 %r1, 0x7FFFFFFF;", Imm("0x7FFFFFFF")),
    ("mov.b32 %r1, -1;", Imm("-1")),
    ("mov.b32 %r1, 12U;", Imm("12U")),
    ("mov.u32 %r1, %tid.x;", Reg("%tid.x")),
    ("mov.u32 %r1, %cluster_ctarank;", Reg("%cluster_ctarank")),
    ("mov.u64 %rd1, smem;", Sym("smem")),
    ("mov.u64 %rd1, smem+128;", Sym("smem", 128)),
    ("mov.u64 %rd1, smem+-8;", Sym("smem", -8)),
    ("ld.u32 %r1, [%rd1];", Addr(Reg("%rd1"))),
    ("ld.u32 %r1, [%rd1+8];", Addr(Reg("%rd1"), 8)),
    ("ld.u32 %r1, [%rd1+-4];", Addr(Reg("%rd1"), -4)),
    ("ld.u32 %r1, [%rd1 - 4];", Addr(Reg("%rd1"), -4)),
    ("ld.u32 %r1, [%rd1+0x10];", Addr(Reg("%rd1"), 16)),
    ("ld.u32 %r1, [buf+4];", Addr(Sym("buf"), 4)),
    ("ld.u32 %r1, [1024];", Addr(None, 1024)),
    ("ld.v2.u32 {%r1, _}, [%rd1];", Vec((Reg("%r1"), Sink()))),
    ("mov.b32 %r1, (1 << 4);", Imm("(1<<4)")),
    ("mov.b32 %r1, 3 + 4*2;", Imm("3+4*2")),
    ("add.s32 %r1, %r1, -(2);", Imm("-(2)")),
    ("mov.b32 %r1, ~0x0F;", Imm("~0x0F")),
])
def test_operand_forms(src, operand):
    ins = one(src)
    assert operand in ins.operands


def test_guards_predicates_and_pairs():
    a, b, c, d, e = body_of("""
        @%p1 bra $L__BB0_2;
        @!%p2 ret;
        setp.lt.s32 %p1|%p2, %r1, %r2;
        and.pred %p3, %p1, !%p2;
        elect.sync _|%p1, -1;
    $L__BB0_2:
    """)[:5]
    assert a.guard == Guard("%p1") and a.operands == (Sym("$L__BB0_2"),)
    assert b.guard == Guard("%p2", negated=True)
    assert c.operands[0] == PredPair(Reg("%p1"), Reg("%p2"))
    assert d.operands[2] == Reg("%p2", neg=True)
    assert e.operands[0] == PredPair(Sink(), Reg("%p1"))


def test_calls():
    body = body_of("""
        call.uni (retval0),
        _Z6addmulffi,
        (
        param0,
        param1
        );
        call.uni _Z3foov, ();
        prototype_3 : .callprototype (.param .b32 _) _ (.param .b32 _);
        call (retval0), %rd13, (param0), prototype_3;
    """)
    c1, c2, lab, proto, c3 = body
    assert c1 == Instruction("call", (".uni",), (
        ParenList((Sym("retval0"),)), Sym("_Z6addmulffi"),
        ParenList((Sym("param0"), Sym("param1")))))
    assert c2.operands == (Sym("_Z3foov"), ParenList(()))
    assert lab == Label("prototype_3")
    assert proto == RawDirective(".callprototype", ("(.param .b32 _) _ (.param .b32 _)",),
                                 terminated=True)
    assert c3.operands[1] == Reg("%rd13") and c3.operands[3] == Sym("prototype_3")


def test_wgmma_inline_asm_block():
    (blk,) = body_of("""
        {
        .reg .pred p;
        setp.ne.b32 p, %r1, 0;
        wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, p, 1, 1, 0, 0;
        }
    """)
    mma = blk.body[2]
    assert mma.opcode == "wgmma.mma_async"
    assert mma.operands[0] == Vec(tuple(Reg(f"%f{i}") for i in range(4)))
    assert mma.operands[3] == Reg("p", pred)
    assert mma.operands[4:] == (Imm("1"), Imm("1"), Imm("0"), Imm("0"))


def test_whitespace_and_comments_are_free():
    a = body_of("@%p1   bra.uni\t$L1 ; // c", decls=".reg .pred %p<2>;\n$L1:\n")
    b = body_of("@%p1 /* x */ bra.uni $L1;", decls=".reg .pred %p<2>;\n$L1:\n")
    assert a == b == [Label("$L1"), Instruction("bra", (".uni",), (Sym("$L1"),), Guard("%p1"))]


# ----------------------------------------------------------------------------- errors
ERRORS = [
    # (text after the header, expected line, column, token, message part)
    (".visible .entry k() {\n  mov.u32 %r1 %r2;\n}", 5, 15, "%r2", "expected ',' or ';'"),
    (".visible .entry k() {\n  frobnicate.u32 %r1;\n}", 5, 3, "frobnicate.u32", "unknown instruction"),
    (".visible .entry k() {\n  ld.u32 %r1, [%rd1+];\n}", 5, 21, "]", "expected an offset"),
    (".visible .entry k() {\n  ret;\n", 6, 1, "", "missing '}'"),
    (".visible .entry k( {\n}", 4, 20, "{", "expected .param or .reg"),
    (".reg .b32 %r;", 4, 1, ".reg", "not allowed at module scope"),
    (".global .b32 x = ;", 4, 18, ";", "initializer"),
    (".global .q32 x;", 4, 9, ".q32", "expected a PTX type"),
    (".visible .entry k() {\n  mov.u32 %r1, ?;\n}", 5, 16, "?", "unexpected character"),
    (".visible .entry k() {\n  .loc 1 x 2\n}", 5, 10, "x", ".loc takes"),
    (".visible .entry k() {\n  mov.u32 %r1, {%r1, [%rd1]};\n}", 5, 22, "[", "vector holds"),
    ('.file 1 "unterminated\n', 4, 9, '"unterminated', "unterminated string"),
]


@pytest.mark.parametrize("text,line,col,token,msg", ERRORS)
def test_errors_have_position_and_token(text, line, col, token, msg):
    with pytest.raises(ParseError) as ei:
        parse(HEAD + text, "bad.ptx")
    e = ei.value
    assert msg in str(e)
    assert (e.line, e.column, e.token) == (line, col, token)
    assert e.source == "bad.ptx" and str(e).startswith(f"bad.ptx:{line}:{col}:")


@pytest.mark.parametrize("text", [
    "", "garbage", ".version", ".version 8", ".version 8.0 .target", ".version x.y",
    HEAD + ".visible", HEAD + ".entry", HEAD + ".entry k(", HEAD + "{" * 500,
    HEAD + ".visible .entry k() {" + "{" * 200 + "}" * 200 + "}",
    HEAD + ".global .b8 x[] = {" * 300, "\x00\x01", HEAD + ".section .debug_info { .b8 1 2 }",
])
def test_only_parse_errors_escape(text):
    with pytest.raises(ParseError):
        parse(text)


def test_non_text_input():
    with pytest.raises(ParseError):
        parse(None)
    with pytest.raises(ParseError):
        parse(b"\xff\xfe")
    assert parse(HEAD.encode()).version == (8, 0)


def test_lexer_tokens():
    toks = tokenize("@!%p1 ld.global.v4.f32 {%f1}, [%rd1+-4]; // x\n0f3F800000 1.5e3 .shared::cta")
    assert [(t.kind, t.text) for t in toks] == [
        ("punct", "@"), ("punct", "!"), ("name", "%p1"), ("name", "ld.global.v4.f32"),
        ("punct", "{"), ("name", "%f1"), ("punct", "}"), ("punct", ","), ("punct", "["),
        ("name", "%rd1"), ("punct", "+"), ("punct", "-"), ("num", "4"), ("punct", "]"),
        ("punct", ";"), ("num", "0f3F800000"), ("num", "1.5e3"), ("dir", ".shared::cta"),
    ]


# ----------------------------------------------------------------------------- DSL agreement
def test_parsed_ir_equals_traced_ir():
    """Text the DSL emits parses back to the very module the DSL traced."""
    from jax_pyptx import kernel, ptx, reg
    from jax_pyptx.types import u32 as U32

    @kernel(arch="sm_90a", raw_params=[("out", "u64"), ("n", "u32")], reqntid=(128, 1, 1))
    def tiny():
        tid = reg.from_(ptx.special.tid.x(), U32)
        n = ptx.param_value("n")
        with ptx.if_(tid < n):
            x = tid * 3 + 1
            ptx.inst.mov.u32(tid, x)
        for i in ptx.range_(0, n):
            tid += i
        ptx.inst.mbarrier.try_wait.parity.shared__cta.b64(reg.scalar("pred"), ptx.addr(0),
                                                          tid)
        ptx.ret()

    traced = tiny.module()
    assert parse(tiny.ptx()) == traced


def test_instructions_carry_their_source_line():
    from jax_pyptx import parse

    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
            "  .reg .b32 %r<3>;\n  .reg .pred %p<2>;\n  mov.u32 %r1, 5;\n"
            "  @%p1 add.u32 %r2, %r1, 1;\n  { ret; }\n}\n")
    body = parse(text, source="k.ptx").functions[0].body
    ins = [s for s in body if hasattr(s, "opcode")]
    assert [str(i.loc) for i in ins] == ["k.ptx:8", "k.ptx:9"]
    assert str(body[-1].body[0].loc) == "k.ptx:10"
