"""Bad input raises at trace time with the user's file:line and an exact message."""
import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.errors import ArchError, PtxTypeError, TraceError, ValidationError
from jax_pyptx.types import f32, u32, u64

from .helpers import line_of


def test_wrong_operand_type():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(f32)
        b = reg.scalar(u32)
        ptx.inst.add.u32(b, a, b)  # wrong type
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# wrong type')}: add.u32 operand 2: register %f0 "
                            f"has type f32; expected s32/u32/b32 (instruction type .u32)")


def test_wrong_operand_count():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(u32)
        ptx.inst.add.u32(a, a)  # two operands
        ptx.ret()

    with pytest.raises(ValidationError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# two operands')}: add.u32 takes 3 operands "
                            f"(d:type s:type s:type); got 2")


def test_illegal_modifier_and_order():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(f32)
        b = reg.scalar(u32)
        p = reg.scalar(u64)
        ptx.inst.ld.f32.global_(a, ptx.addr(p))      # ptxas takes this order: kept as written
        ptx.inst.mul.u32.lo(b, b, b)  # order
        ptx.ret()

    with pytest.raises(ValidationError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# order')}: mul.u32.lo: modifiers out of "
                            f"order; write mul.lo.u32")

    @kernel(arch="sm_80")
    def k2():
        a = reg.scalar(f32)
        ptx.inst.add.fast.f32(a, a, a)  # bad mod
        ptx.ret()

    with pytest.raises(ValidationError) as e:
        k2.ptx()
    assert str(e.value).startswith(f"{line_of(k2.fn, '# bad mod')}: add.fast.f32: illegal "
                                   f"modifier .fast for add; allowed modifiers: ")


def test_instruction_above_arch():
    @kernel(arch="sm_80")
    def k():
        ptx.inst.wgmma.fence.sync.aligned()  # hopper only
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# hopper only')}: wgmma.fence.sync.aligned needs "
                            f"sm_90a (PTX ISA 8.0); kernel 'k' targets sm_80")


def test_special_register_above_arch():
    @kernel(arch="sm_80")
    def k():
        reg.from_(ptx.special.cluster_ctarank(), u32)  # cluster
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# cluster')}: %cluster_ctarank needs sm_90; "
                            f"kernel 'k' targets sm_80")


def test_explicit_version_too_low():
    @kernel(arch="sm_90a", version="7.8")
    def k():
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == ("kernel 'k': version=7.8 is below PTX ISA 8.0, which target sm_90a "
                            "and the instructions used need")


def test_version_derived_from_target_and_use():
    @kernel(arch="sm_90a")
    def plain():
        ptx.ret()

    @kernel(arch="sm_100a")
    def bw():
        ptx.ret()

    @kernel(arch="sm_80")
    def amp():
        ptx.ret()

    assert ".version 8.5\n" in plain.ptx()   # the documented defaults (issue 11)
    assert ".version 8.8\n" in bw.ptx()
    assert ".version 8.5\n" in amp.ptx()


def test_register_used_outside_its_trace():
    leaked = []

    @kernel(arch="sm_80")
    def first():
        leaked.append(reg.scalar(u32, 1))
        ptx.ret()

    @kernel(arch="sm_80")
    def second():
        r = reg.scalar(u32)
        ptx.inst.mov.u32(r, leaked[0])  # foreign
        ptx.ret()

    first.ptx()
    with pytest.raises(TraceError) as e:
        second.ptx()
    assert str(e.value) == (f"{line_of(second.fn, '# foreign')}: register %r0 (u32) belongs to "
                            f"kernel 'first', not to 'second' being traced now; registers live "
                            f"in the trace that created them")


def test_dsl_outside_a_trace():
    with pytest.raises(TraceError) as e:
        reg.scalar(u32)  # outside
    assert str(e.value) == (f"{line_of(test_dsl_outside_a_trace, '# outside')}: reg.scalar must "
                            f"run inside a @kernel function while it is traced (call "
                            f"kernel.ptx() or the kernel itself)")


def test_unknown_instruction_is_refused_and_raw_text_passes_it_through():
    # issue 15: ptx.inst of an opcode the ISA table does not know is an error (ptxas refuses
    # it too); ptx.raw is the explicit escape for an instruction the table lacks
    @kernel(arch="sm_90a")
    def k():
        ptx.inst.some_future_op.b32()  # unknown
        ptx.ret()

    with pytest.raises(ValidationError) as e:
        k.ptx()
    assert str(e.value) == (
        f"{line_of(k.fn, '# unknown')}: ptx.inst.some_future_op.b32: the ISA table has no "
        f"instruction 'some_future_op' (no known opcode is close); write an instruction the "
        f"table lacks as PTX text: ptx.raw(\"some_future_op.b32 ...;\")")

    @kernel(arch="sm_90a")
    def escaped():
        ptx.raw("some_future_op.b32;")
        ptx.ret()

    assert "\tsome_future_op.b32;\n\tret;\n" in escaped.ptx()


def test_arch_error_wins_over_a_type_error_from_another_form():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(f32)
        ptx.inst.min.f32(a, a, a, a)  # three-source min is sm_100
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# three-source')}: min.f32 needs sm_100 (PTX ISA "
                            f"8.8); kernel 'k' targets sm_80")


def test_cta_barrier_spelling_splits():
    from jax_pyptx.isa.opcodes import split_opcode

    assert split_opcode("barrier.cta.sync.aligned") == ("barrier.cta.sync", (".aligned",))
