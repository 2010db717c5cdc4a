"""Issue 15, tracing attacks on ``ptx.inst``: unknown opcodes, immediates typed by the operand's
kind, immediates outside the ISA's ranges, and the architecture named before operand errors.

Each test reproduces the attack and checks the exact error (with the user's line) or the text
ptxas accepts.
"""
import pytest

from jax_pyptx import kernel, parse, ptx, reg
from jax_pyptx.errors import ArchError, InterpreterError, PtxTypeError, PtxValueError, TraceError, \
    ValidationError
from jax_pyptx.isa import check
from jax_pyptx.isa.model import parse_target
from jax_pyptx.types import b32, b64, bf16, f16, f32, pred, u32, u64

from .helpers import assemble, line_of


def _raises(k, cls):
    with pytest.raises(cls) as e:
        k.ptx()
    return str(e.value)


# ----------------------------------------------------------------------------- unknown opcodes
def test_unknown_opcode_names_the_line_and_the_closest_known_ones():
    @kernel(arch="sm_90a")
    def frob():
        r = reg.scalar(u32)
        ptx.inst.frobnicate(r)  # attack

    @kernel(arch="sm_90a")
    def typo():
        r = reg.scalar(f32)
        ptx.inst.addd.f32(r, r, 1.0)  # attack

    @kernel(arch="sm_90a")
    def compound():
        r = reg.scalar(u32)
        ptx.inst.mbarrier.try_wiat.parity.shared__cta.b64(r)  # attack

    assert _raises(frob, ValidationError) == (
        f"{line_of(frob.fn, '# attack')}: ptx.inst.frobnicate: the ISA table has no instruction "
        f"'frobnicate' (no known opcode is close); write an instruction the table lacks as "
        f"PTX text: ptx.raw(\"frobnicate ...;\")")
    assert _raises(typo, ValidationError) == (
        f"{line_of(typo.fn, '# attack')}: ptx.inst.addd.f32: the ISA table has no instruction "
        f"'addd' (closest known: add, addc); write an instruction the table lacks as PTX "
        f"text: ptx.raw(\"addd.f32 ...;\")")
    msg = _raises(compound, ValidationError)
    assert msg.startswith(f"{line_of(compound.fn, '# attack')}: ptx.inst.mbarrier.try_wiat"
                          f".parity.shared::cta.b64: the ISA table has no instruction "
                          f"'mbarrier.try_wiat' (closest known: mbarrier.try_wait, ")


def test_the_cta_qualified_barrier_spelling_is_known_and_validated():
    @kernel(arch="sm_90a")
    def k():
        ptx.inst.bar.cta.sync(16)  # attack

    assert _raises(k, PtxValueError) == (
        f"{line_of(k.fn, '# attack')}: bar.cta.sync operand 1: immediate 16 is out of range; "
        f"allowed: 0..15")


def test_raw_text_is_the_escape_for_what_the_table_lacks():
    @kernel(arch="sm_90a")
    def k():
        a, b = reg.scalar(u32, 1), reg.scalar(u32, 2)
        d = reg.scalar(u32)
        ptx.raw(f"vadd.s32.s32.s32.sat {d.name}, {a.name}, {b.name};\nmembar.gl;")
        ptx.ret()

    text = k.ptx()
    assert "\tvadd.s32.s32.s32.sat \t%r2, %r0, %r1;\n\tmembar.gl;\n\tret;\n" in text
    assemble(k)


def test_raw_text_the_interpreter_cannot_run_is_an_error_not_skipped():
    @kernel(arch="sm_90a")
    def k():
        r = reg.scalar(u32, 1)
        ptx.raw(f"frobnicate.b32 {r.name};")  # raw
        ptx.ret()

    with pytest.raises(InterpreterError) as e:
        k.interpret()
    assert str(e.value).startswith(
        f"{line_of(k.fn, '# raw')}: the interpreter cannot decode this instruction: "
        f"frobnicate.b32: the ISA table has no instruction 'frobnicate'")


def test_raw_text_that_does_not_parse_names_the_line():
    @kernel(arch="sm_90a")
    def k():
        ptx.raw("add.u32 %r1, %r2 +;")  # bad

    assert _raises(k, TraceError).startswith(
        f"{line_of(k.fn, '# bad')}: ptx.raw: ptx.raw:1:")


# ----------------------------------------------------------------------------- immediates
def test_wgmma_scale_and_transpose_immediates_print_as_integers():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        acc = reg.array(f32, 64)
        da, db = reg.scalar(b64, 0), reg.scalar(b64, 0)
        p = reg.scalar(pred)
        ptx.inst.wgmma.fence.sync.aligned()
        ptx.inst.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16(acc, da, db, p, 1, 1, 0,
                                                                         0)
        ptx.inst.wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16(acc, da, db, 1, -1, 1,
                                                                         1, 0)
        ptx.inst.wgmma.commit_group.sync.aligned()
        ptx.inst.wgmma.wait_group.sync.aligned(0)
        ptx.ret()

    text = k.ptx()
    assert "%rd0, %rd1, %p0, 1, 1, 0, 0;\n" in text
    assert "%rd0, %rd1, 1, -1, 1, 1, 0;\n" in text
    assert "0x3F80" not in text
    assemble(k)


def test_typed_sources_take_the_operand_type_and_counts_stay_integers():
    @kernel(arch="sm_90a")
    def k():
        x = reg.scalar(f32, 0.0)
        ptx.inst.add.f32(x, x, 1)                   # an f32 source: 1.0
        w = reg.scalar(u64)
        ptx.inst.mul.wide.u32(w, reg.scalar(u32, 3), 5)
        h = reg.scalar(b32)
        ptx.inst.lop3.b32(h, h, h, h, 0xF0)         # immLut: a plain integer
        ptx.inst.setmaxnreg.inc.sync.aligned.u32(240)
        ptx.ret()

    text = k.ptx()
    assert "add.f32 \t%f0, %f0, 0f3F800000;" in text
    assert "mul.wide.u32 \t%rd0, %r0, 5;" in text
    assert "lop3.b32 \t%r1, %r1, %r1, %r1, 240;" in text
    assert "setmaxnreg.inc.sync.aligned.u32 \t240;" in text
    assemble(k)


def test_half_precision_immediates_are_refused_and_operators_use_a_register():
    @kernel(arch="sm_90a")
    def bad():
        h = reg.scalar(f16, 1.0)
        ptx.inst.add.f16(h, h, 1.0)  # attack

    assert _raises(bad, PtxTypeError) == (
        f"{line_of(bad.fn, '# attack')}: add.f16 operand 3: a .f16 operand cannot be an "
        f"immediate (got 0x3C00); put the value in a register first (mov.b16)")

    @kernel(arch="sm_90a")
    def ok():
        h = reg.scalar(f16, 1.0)
        b = reg.scalar(bf16, 2.0)
        _ = (h + 1.0, 2.0 * h, b - 1.5)
        ptx.ret()

    text = ok.ptx()
    assert "\tmov.b16 \t%h2, 0x3C00;\n\tadd.f16 \t%h3, %h0, %h2;\n" in text
    assert "\tmov.b16 \t%h6, 0x3FC0;\n\tsub.bf16 \t%h7, %h1, %h6;\n" in text
    assemble(ok)


# ----------------------------------------------------------------------------- ranges
def _one(build, arch="sm_90a"):
    @kernel(arch=arch, block=(128, 1, 1))
    def k():
        build()  # attack

    return k


def _tmem():
    return reg.scalar(u32, 0)


RANGES = [
    ("setmaxnreg", lambda: ptx.inst.setmaxnreg.inc.sync.aligned.u32(25), "sm_90a",
     "setmaxnreg.inc.sync.aligned.u32 operand 1: immediate 25 is out of range; allowed: 24..256, "
     "a multiple of 8"),
    ("setmaxnreg-high", lambda: ptx.inst.setmaxnreg.dec.sync.aligned.u32(264), "sm_90a",
     "setmaxnreg.dec.sync.aligned.u32 operand 1: immediate 264 is out of range; allowed: "
     "24..256, a multiple of 8"),
    ("bar.sync", lambda: ptx.inst.bar.sync(16), "sm_90a",
     "bar.sync operand 1: immediate 16 is out of range; allowed: 0..15"),
    ("bar.sync-count", lambda: ptx.inst.bar.sync(1, 33), "sm_90a",
     "bar.sync operand 2: immediate 33 is out of range; allowed: 0 or more, a multiple of 32"),
    ("bar.arrive-zero", lambda: ptx.inst.barrier.arrive(1, 0), "sm_90a",
     "barrier.arrive operand 2: immediate 0 is out of range; allowed: 32 or more, a multiple "
     "of 32"),
    ("pmevent", lambda: ptx.inst.pmevent(16), "sm_90a",
     "pmevent operand 1: immediate 16 is out of range; allowed: 0..15"),
    ("cp.async.cg", lambda: ptx.inst.cp.async_.cg.shared.global_(
        ptx.addr(reg.scalar(u64)), ptx.addr(reg.scalar(u64)), 8), "sm_90a",
     "cp.async.cg.shared.global operand 3: immediate 8 is out of range; allowed: 16 (with .cg)"),
    ("cp.async.ca", lambda: ptx.inst.cp.async_.ca.shared.global_(
        ptx.addr(reg.scalar(u64)), ptx.addr(reg.scalar(u64)), 12), "sm_90a",
     "cp.async.ca.shared.global operand 3: immediate 12 is out of range; allowed: 4, 8 or 16 "
     "(with .ca)"),
    ("mbarrier.init", lambda: ptx.inst.mbarrier.init.shared.b64(ptx.addr(reg.scalar(u64)), 0),
     "sm_90a", "mbarrier.init.shared.b64 operand 2: immediate 0 is out of range; allowed: "
     "1..1048575"),
    ("try_wait.parity", lambda: ptx.inst.mbarrier.try_wait.parity.shared.b64(
        reg.scalar(pred), ptx.addr(reg.scalar(u64)), 2), "sm_90a",
     "mbarrier.try_wait.parity.shared.b64 operand 3: immediate 2 is out of range; allowed: 0 "
     "or 1"),
    ("lop3", lambda: ptx.inst.lop3.b32(reg.scalar(b32), reg.scalar(b32), reg.scalar(b32),
                                       reg.scalar(b32), 256), "sm_90a",
     "lop3.b32 operand 5: immediate 256 is out of range; allowed: 0..255"),
    ("applypriority", lambda: ptx.inst.applypriority.global_.L2__evict_normal(
        ptx.addr(reg.scalar(u64)), 64), "sm_90a",
     "applypriority.global.L2::evict_normal operand 2: immediate 64 is out of range; allowed: "
     "128"),
    ("wgmma-scale", lambda: ptx.inst.wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16(
        reg.array(f32, 4), reg.scalar(b64), reg.scalar(b64), reg.scalar(pred), 2, 1, 0, 0),
     "sm_90a", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 operand 5: immediate 2 is "
     "out of range; allowed: -1 or 1"),
    ("wgmma-trans", lambda: ptx.inst.wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16(
        reg.array(f32, 4), reg.scalar(b64), reg.scalar(b64), reg.scalar(pred), 1, 1, 2, 0),
     "sm_90a", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 operand 7: immediate 2 is "
     "out of range; allowed: 0 or 1"),
    ("wgmma-scale-d", lambda: ptx.inst.wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16(
        reg.array(f32, 4), reg.scalar(b64), reg.scalar(b64), 2, 1, 1, 0, 0),
     "sm_90a", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 operand 4: immediate 2 is "
     "out of range; allowed: 0 or 1"),
    ("mma.sp-selector", lambda: ptx.inst.mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32(
        reg.array(f32, 4), reg.array(b32, 2), reg.array(b32, 2), reg.array(f32, 4),
        reg.scalar(b32), 4), "sm_90a",
     "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 operand 6: immediate 4 is out of "
     "range; allowed: 0..3"),
    ("tcgen05.alloc", lambda: ptx.inst.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(
        ptx.addr(_tmem()), 48), "sm_100a",
     "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 operand 2: immediate 48 is out "
     "of range; allowed: 32, 64, 128, 256 or 512"),
    ("tensormap.replace", lambda: ptx.inst.tensormap.replace.tile.elemtype.global_.b1024.b32(
        ptx.addr(reg.scalar(u64)), 16), "sm_100a",
     "tensormap.replace.tile.elemtype.global.b1024.b32 operand 2: immediate 16 is out of range; "
     "allowed: 0..15 (with .elemtype)"),
]


@pytest.mark.parametrize("build, arch, message", [r[1:] for r in RANGES],
                         ids=[r[0] for r in RANGES])
def test_immediates_out_of_the_isa_range_are_refused(build, arch, message):
    # the user's line is the lambda's (the first frame outside the package)
    k = _one(build, arch)
    assert _raises(k, PtxValueError) == f"{__file__}:{build.__code__.co_firstlineno}: {message}"


def test_the_same_ranges_hold_for_parsed_ptx():
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.entry k()\n{\n"
            "\tbar.sync \t16;\n\tret;\n}\n")
    ins = parse(text, check=False).items[0].body[0]
    with pytest.raises(PtxValueError) as e:
        check(ins, parse_target("sm_90a"))
    assert str(e.value) == "<ptx>:6: bar.sync operand 1: immediate 16 is out of range; " \
        "allowed: 0..15"
    with pytest.raises(PtxValueError) as e2:          # parse checks it too (ptxas refuses it)
        parse(text)
    assert str(e2.value) == str(e.value)


# ----------------------------------------------------------------------------- arch first
def test_a_blackwell_instruction_on_hopper_names_the_arch_even_with_bad_operands():
    @kernel(arch="sm_90a")
    def operands():
        r = reg.scalar(f32)
        ptx.inst.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(r)  # attack

    @kernel(arch="sm_90a")
    def modifiers():
        ptx.inst.tcgen05.mma.cta_group__3.kind__f16(1, 2, 3)  # attack

    @kernel(arch="sm_90a")
    def gated():
        r = reg.scalar(b32)
        ptx.inst.ld.global_.v8.f32(r, r)  # attack

    need = "needs sm_100a or sm_101a or sm_103a or sm_110a (PTX ISA 8.6); kernel"
    assert _raises(operands, ArchError) == (
        f"{line_of(operands.fn, '# attack')}: tcgen05.alloc.cta_group::1.sync.aligned"
        f".shared::cta.b32 {need} 'operands' targets sm_90a")
    assert _raises(modifiers, ArchError) == (
        f"{line_of(modifiers.fn, '# attack')}: tcgen05.mma.cta_group::3.kind::f16 {need} "
        f"'modifiers' targets sm_90a")
    assert _raises(gated, ArchError).startswith(
        f"{line_of(gated.fn, '# attack')}: ld.global.v8.f32 needs sm_100")


def test_typed_wrappers_name_the_arch_before_their_argument_checks():
    from jax_pyptx import smem

    @kernel(arch="sm_90a")
    def alloc():
        s = smem.alloc(u32, (1,))
        ptx.tcgen05.alloc(s, 48)  # attack

    @kernel(arch="sm_80")
    def maxnreg():
        ptx.misc.setmaxnreg(25)  # attack

    @kernel(arch="sm_90a")
    def maxnreg_ok_arch():
        ptx.misc.setmaxnreg(25)  # attack

    assert _raises(alloc, ArchError) == (
        f"{line_of(alloc.fn, '# attack')}: ptx.tcgen05.alloc needs sm_100a or sm_101a or "
        f"sm_103a or sm_110a (PTX ISA 8.6); kernel 'alloc' targets sm_90a")
    assert _raises(maxnreg, ArchError).startswith(
        f"{line_of(maxnreg.fn, '# attack')}: ptx.misc.setmaxnreg needs sm_90a or sm_100a")
    assert _raises(maxnreg_ok_arch, PtxValueError) == (
        f"{line_of(maxnreg_ok_arch.fn, '# attack')}: ptx.misc.setmaxnreg: count=25 is not "
        f"allowed; allowed: 24..256, multiple of 8")
