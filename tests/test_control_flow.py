"""Structured control flow, labels, loops; executed shapes checked through ptxas."""
import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.errors import TraceError
from jax_pyptx.types import s32, u32

from .helpers import assemble, line_of
from .test_reg_ops import body


def test_if_elif_else_chain():
    @kernel(arch="sm_80")
    def k():
        t = reg.from_(ptx.special.tid.x(), u32)
        r = reg.scalar(u32, 0)
        with ptx.if_(t < 8):
            r.set(1)
        with ptx.elif_(t < 16):
            r.set(2)
        with ptx.elif_(t < 24):
            r.set(3)
        with ptx.else_():
            r.set(4)
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, %tid.x;", "mov.u32 %r1, 0;",
        "setp.lt.u32 %p0, %r0, 8;", "@!%p0 bra $L_else_0;", "mov.u32 %r1, 1;",
        "bra $L_endif_0;",
        "$L_else_0:", "setp.lt.u32 %p1, %r0, 16;", "@!%p1 bra $L_else_1;", "mov.u32 %r1, 2;",
        "bra $L_endif_0;",
        "$L_else_1:", "setp.lt.u32 %p2, %r0, 24;", "@!%p2 bra $L_else_2;", "mov.u32 %r1, 3;",
        "bra $L_endif_0;",
        "$L_else_2:", "mov.u32 %r1, 4;", "$L_endif_0:",
    ]
    assemble(k)


def test_range_with_register_bounds_and_continue():
    @kernel(arch="sm_80")
    def k():
        n = reg.from_(ptx.special.ntid.x(), u32)
        acc = reg.scalar(u32, 0)
        for i in ptx.range_(reg.scalar(u32, 1), n, 2):
            ptx.continue_(pred=(i == 5))
            acc += i
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, %ntid.x;", "mov.u32 %r1, 0;", "mov.u32 %r2, 1;", "mov.u32 %r3, %r2;",
        "$L_loop_0:", "setp.ge.u32 %p0, %r3, %r0;", "@%p0 bra $L_endloop_0;",
        "setp.eq.u32 %p1, %r3, 5;", "@%p1 bra $L_continue_0;", "add.u32 %r1, %r1, %r3;",
        "$L_continue_0:", "add.u32 %r3, %r3, 2;", "bra $L_loop_0;", "$L_endloop_0:",
    ]
    assemble(k)


def test_while_loop_and_labels_unique_per_trace():
    @kernel(arch="sm_80")
    def k():
        i = reg.scalar(s32, 10)
        with ptx.while_(lambda: i > 0):
            i -= 3
        with ptx.while_(lambda: i < 100):
            i += 7
            ptx.break_(pred=(i == 50))
        lbl = ptx.label("done")
        ptx.bra(lbl)
        ptx.place(lbl)
        ptx.ret()

    b = body(k)
    assert b[:6] == ["mov.s32 %r0, 10;", "$L_while_0:", "setp.gt.s32 %p0, %r0, 0;",
                     "@!%p0 bra $L_endwhile_0;", "sub.s32 %r0, %r0, 3;", "bra $L_while_0;"]
    assert "$L_while_1:" in b and "@%p2 bra $L_endwhile_1;" in b
    assert b[-2:] == ["bra $L_done_0;", "$L_done_0:"]
    # a second trace starts its labels at 0 again
    assert k.ptx() == k.ptx()
    assemble(k)


def test_static_range_unrolls():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(u32, 0)
        for j in ptx.static_range(3):
            a += j
        ptx.ret()

    assert body(k)[1:] == ["add.u32 %r0, %r0, 0;", "add.u32 %r0, %r0, 1;",
                           "add.u32 %r0, %r0, 2;"]


def test_nested_if_inside_loop():
    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(u32, 0)
        for i in ptx.range_(0, 4, type=u32):
            with ptx.if_(i == 2):
                a += 1
            with ptx.else_():
                a += 2
        ptx.ret()

    assemble(k)
    assert body(k).count("bra $L_endif_0;") == 1


def test_control_flow_errors():
    @kernel(arch="sm_80")
    def undefined_label():
        lbl = ptx.label("nowhere")
        ptx.bra(lbl)  # jump
        ptx.ret()

    with pytest.raises(TraceError) as e:
        undefined_label.ptx()
    assert str(e.value) == (f"{line_of(undefined_label.fn, '# jump')}: label $L_nowhere_0 is "
                            f"branched to but never placed (ptx.place(label))")

    @kernel(arch="sm_80")
    def orphan_else():
        with ptx.else_():  # orphan
            pass
        ptx.ret()

    with pytest.raises(TraceError) as e:
        orphan_else.ptx()
    assert str(e.value) == (f"{line_of(orphan_else.fn, '# orphan')}: ptx.else_ must directly "
                            f"follow a ptx.if_ or ptx.elif_ block")

    @kernel(arch="sm_80")
    def python_if():
        t = reg.from_(ptx.special.tid.x(), u32)
        if t < 4:  # py-if
            pass

    with pytest.raises(TraceError) as e:
        python_if.ptx()
    assert str(e.value) == (f"{line_of(python_if.fn, '# py-if')}: register %p0 has no value at "
                            f"trace time; use ptx.if_(...) / ptx.while_(...) for control flow "
                            f"on registers")

    @kernel(arch="sm_80")
    def bad_while():
        i = reg.scalar(u32, 0)
        with ptx.while_(i < 3):  # not callable
            pass

    with pytest.raises(TraceError, match="ptx.while_ needs a callable condition"):
        bad_while.ptx()

    @kernel(arch="sm_80")
    def stray_break():
        ptx.break_()  # stray
        ptx.ret()

    with pytest.raises(TraceError) as e:
        stray_break.ptx()
    assert str(e.value) == (f"{line_of(stray_break.fn, '# stray')}: ptx.break_ outside a "
                            f"ptx.while_ / ptx.range_ loop")
