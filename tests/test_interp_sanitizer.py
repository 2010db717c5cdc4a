"""Planted bugs of every sanitizer kind are reported with what a user needs to fix them (the
instruction, the thread and CTA, the address and the allocation it missed, where each warp is
parked); the fixed kernels run clean."""
from __future__ import annotations

import numpy as np
import pytest

import jax_pyptx
from jax_pyptx.errors import (
    DeadlockError, DivergenceError, InterpreterError, MisalignedAccessError, OutOfBoundsError, SourceLoc,
    UninitializedReadError,
)
from jax_pyptx.interpret import launch

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

COPY = HDR + """
.visible .entry copy(.param .u64 x, .param .u64 y, .param .u32 n)
{
    .reg .u32 %r<6>; .reg .u64 %rd<6>; .reg .f32 %f<3>; .reg .pred %p1;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r4, [n];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    CHECK
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.u64 %rd5, %rd2, %rd3;
    st.global.f32 [%rd5], %f1;
DONE:
    ret;
}
"""
BOUNDS = "setp.ge.u32 %p1, %r1, %r4;\n    @%p1 bra DONE;"


def test_out_of_bounds_global_load_names_everything():
    x = np.arange(250, dtype=np.float32)
    y = np.zeros(256, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(COPY.replace("CHECK", ""), "copy", [x, y, np.uint32(250)], grid=2, block=128)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:18: out-of-bounds global load ld.global.f32 %f1, [%rd4]; by thread (122,0,0) of CTA (1,0,0): ")
    assert "address 0x" in msg and "is 4 bytes past the end of allocation #0 (param 'x'" in msg
    assert "1000 bytes at 0x" in msg and "[instruction #" in msg and "of copy]" in msg
    # the fixed kernel runs clean
    launch(COPY.replace("CHECK", BOUNDS), "copy", [x, y, np.uint32(250)], grid=2, block=128)
    np.testing.assert_array_equal(y[:250], x)


def test_out_of_bounds_global_store():
    x = np.arange(256, dtype=np.float32)
    y = np.zeros(200, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds global store st.global.f32 \[%rd5\], %f1; by "
                                               r"thread \(72,0,0\) of CTA \(1,0,0\).*allocation #1 \(param 'y'"):
        launch(COPY.replace("CHECK", ""), "copy", [x, y, np.uint32(256)], grid=2, block=128)


def test_null_and_wild_pointers():
    y = np.zeros(4, np.float32)
    with pytest.raises(OutOfBoundsError, match="null pointer"):
        launch(COPY.replace("CHECK", ""), "copy", [None, y, np.uint32(4)], block=4)


def test_misaligned_global_and_shared():
    x = np.zeros(64, np.float32)
    bad = COPY.replace("CHECK", "").replace("mul.wide.u32 %rd3, %r1, 4;", "mul.wide.u32 %rd3, %r1, 4;\n add.u64 %rd3, %rd3, 2;")
    with pytest.raises(MisalignedAccessError, match=r"misaligned global load .* by thread \(0,0,0\) of CTA "
                                                    r"\(0,0,0\): address 0x[0-9a-f]+ is not aligned to 4 bytes"):
        launch(bad, "copy", [x, x, np.uint32(64)], block=32)
    sh = HDR + """
    .visible .entry k()
    {
        .reg .u32 %r<3>; .reg .f32 %f<5>;
        .shared .align 16 .b8 buf[256];
        mov.u32 %r1, %tid.x;
        shl.b32 %r1, %r1, 2;
        mov.u32 %r2, buf;
        add.u32 %r2, %r2, %r1;
        st.shared.f32 [%r2], 0f3F800000;
        ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r2];
        ret;
    }"""
    with pytest.raises(MisalignedAccessError, match=r"misaligned shared load ld.shared.v4.f32 .* by thread "
                                                    r"\(1,0,0\).*shared address 0x4 is not aligned to 16 bytes"):
        launch(sh, "k", [], block=32)


SMEM = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .f32 %f<3>;
    .shared .align 4 .b8 tile[128];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.u32 %r4, %r3, %r2;
    cvt.rn.f32.u32 %f1, %r1;
    WRITE
    bar.sync 0;
    xor.b32 %r5, %r2, 4;
    add.u32 %r5, %r3, %r5;
    ld.shared.f32 %f2, [%r5];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f2;
    ret;
}
"""


def test_uninitialized_shared_read():
    y = np.zeros(32, np.float32)
    bad = SMEM.replace("WRITE", "setp.ne.u32 %p1, %r1, 5;\n @%p1 st.shared.f32 [%r4], %f1;").replace(
        ".reg .f32 %f<3>;", ".reg .f32 %f<3>; .reg .pred %p1;")
    with pytest.raises(UninitializedReadError) as ei:
        launch(bad, "k", [y], block=32)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:20: uninitialized shared load ld.shared.f32 %f2, [%r5]; by thread (4,0,0) of CTA (0,0,0): ")
    assert "shared address 0x14 'tile' (+20) is read before any thread of this CTA wrote it" in msg
    launch(SMEM.replace("WRITE", "st.shared.f32 [%r4], %f1;"), "k", [y], block=32)
    np.testing.assert_array_equal(y, np.arange(32, dtype=np.float32).reshape(16, 2)[:, ::-1].reshape(-1))


def test_out_of_bounds_shared_names_the_layout():
    y = np.zeros(64, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds shared store .* by thread \(32,0,0\).*shared address "
                                               r"0x80 is 4 bytes past the end of shared memory of this CTA "
                                               r"\(128 bytes: 'tile' 128 bytes at 0x0\)"):
        launch(SMEM.replace("WRITE", "st.shared.f32 [%r4], %f1;"), "k", [y], block=64)


def test_uninitialized_register():
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p1;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 16;
        @%p1 mov.u32 %r2, 7;
        add.u32 %r3, %r2, %r1;
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd3, %rd1, %rd2;
        st.global.u32 [%rd3], %r3;
        ret;
    }"""
    y = np.zeros(32, np.uint32)
    # memcheck's rule: reported where the undefined bits reach memory, naming where they came from
    with pytest.raises(UninitializedReadError, match=r"undefined bits of register %r3 \(bits 0-31, from uninitialized "
                                                     r"register %r2 read by <ptx>:12: add.u32 %r3, %r2, %r1\) reach "
                                                     r"memory or an address: st.global.u32 \[%rd3\], %r3; "
                                                     r"by thread \(16,0,0\) of CTA \(0,0,0\)"):
        launch(prog, "k", [y], block=32)
    # with the sanitizer off the kernel runs (the register reads as zero)
    launch(prog, "k", [y], block=32, sanitize=False)
    assert y.tolist() == [7 + i for i in range(16)] + list(range(16, 32))
    launch(prog.replace("@%p1 mov.u32 %r2, 7;", "selp.u32 %r2, 7, 0, %p1;"), "k", [y], block=32)
    assert y.tolist() == [7 + i for i in range(16)] + list(range(16, 32))



def test_register_written_by_one_warp_is_uninitialized_for_the_other():
    """Warp 0 writes %r2 and reads it twice (its slots are known written after the first
    read); warp 1 never writes it: its read after the join is still reported, for thread 32."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<5>; .reg .u64 %rd<4>; .reg .pred %p1;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd3, %rd1, %rd2;
        setp.lt.u32 %p1, %r1, 32;
        @!%p1 bra JOIN;
        mov.u32 %r2, 7;
        add.u32 %r3, %r2, %r1;
        add.u32 %r3, %r3, %r2;
        st.global.u32 [%rd3], %r3;
    JOIN:
        SINK
        ret;
    }"""
    y = np.zeros(64, np.uint32)
    launch(prog.replace("SINK", ""), "k", [y], block=64)
    assert y.tolist() == [14 + i for i in range(32)] + [0] * 32
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %r2: st.global.u32 "
                                                     r"\[%rd3\], %r2; by thread \(32,0,0\) of CTA \(0,0,0\)"):
        launch(prog.replace("SINK", "st.global.u32 [%rd3], %r2;"), "k", [y], block=64)


def test_groups_with_the_same_first_last_and_size_are_told_apart():
    """Threads {0, 2, 3} write %r2 and read it back; threads {0, 1, 3} (as many threads, the
    same first and last) then read it: thread 1 never wrote it and is reported."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<5>; .reg .u64 %rd<4>; .reg .pred %p<3>;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd3, %rd1, %rd2;
        setp.eq.u32 %p1, %r1, 1;
        @%p1 bra J1;
        mov.u32 %r2, 5;
        add.u32 %r3, %r2, %r1;
        st.global.u32 [%rd3], %r3;
    J1:
        setp.eq.u32 %p2, %r1, 2;
        @%p2 bra J2;
        SINK
    J2:
        ret;
    }"""
    y = np.zeros(4, np.uint32)
    launch(prog.replace("SINK", ""), "k", [y], block=4)
    assert y.tolist() == [5, 0, 7, 8]
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %r2: st.global.u32 "
                                                     r"\[%rd3\], %r2; by thread \(1,0,0\) of CTA \(0,0,0\)"):
        launch(prog.replace("SINK", "st.global.u32 [%rd3], %r2;"), "k", [y], block=4)

DIVERGE = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p<2>;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    mul.lo.u32 %r3, %r1, 3;
    ODD_EXTRA
    bra JOIN;
EVEN:
    add.u32 %r3, %r1, 100;
JOIN:
    JOIN_EXTRA
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""


def test_divergent_barrier():
    y = np.zeros(64, np.uint32)
    bad = DIVERGE.replace("ODD_EXTRA", "bar.sync 0;").replace("JOIN_EXTRA", "mov.u32 %r4, %r3;")
    with pytest.raises(DivergenceError) as ei:
        launch(bad, "k", [y], block=64)
    msg = str(ei.value)
    assert msg.startswith("divergent warp-synchronous instruction")
    assert "CTA (0,0,0) warp 0 lanes 1,3,5" in msg and "`bar.sync 0;`" in msg
    assert "waits for lanes 0,2,4" in msg
    fixed = DIVERGE.replace("ODD_EXTRA", "").replace("JOIN_EXTRA", "bar.sync 0;\n mov.u32 %r4, %r3;")
    launch(fixed, "k", [y], block=64)
    t = np.arange(64)
    assert y.tolist() == np.where(t % 2 == 0, t + 100, 3 * t).tolist()


def test_divergent_shfl_full_mask():
    y = np.zeros(32, np.uint32)
    bad = DIVERGE.replace("ODD_EXTRA", "shfl.sync.bfly.b32 %r4, %r3, 1, 31, -1;").replace(
        "JOIN_EXTRA", "mov.u32 %r4, %r3;")
    with pytest.raises(DivergenceError, match=r"lanes 1,3,5.*`shfl.sync.bfly.b32 %r4, %r3, 1, 31, -1;` waits for "
                                              r"lanes 0,2,4"):
        launch(bad, "k", [y], block=32)
    # a shfl after reconvergence is fine; a membermask of the odd lanes inside the branch too
    good = DIVERGE.replace("ODD_EXTRA", "shfl.sync.bfly.b32 %r5, %r3, 2, 31, 0xaaaaaaaa;").replace(
        "JOIN_EXTRA", "shfl.sync.bfly.b32 %r4, %r3, 1, 31, -1;")
    launch(good, "k", [y], block=32)
    t = np.arange(32)
    v = np.where(t % 2 == 0, t + 100, 3 * t)
    assert y.tolist() == v[t ^ 1].tolist()


def test_predicated_off_lanes_of_aligned_mma():
    prog = HDR + """
    .visible .entry k()
    {
        .reg .u32 %r<2>; .reg .b32 %a<4>; .reg .b32 %b<2>; .reg .f32 %c<4>; .reg .pred %p1;
        mov.u32 %r1, %tid.x;
        mov.b32 %a0, 0; mov.b32 %a1, 0; mov.b32 %a2, 0; mov.b32 %a3, 0; mov.b32 %b0, 0; mov.b32 %b1, 0;
        mov.f32 %c0, 0f00000000; mov.f32 %c1, 0f00000000; mov.f32 %c2, 0f00000000; mov.f32 %c3, 0f00000000;
        setp.lt.u32 %p1, %r1, 16;
        @%p1 mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%c0,%c1,%c2,%c3}, {%a0,%a1,%a2,%a3}, {%b0,%b1}, {%c0,%c1,%c2,%c3};
        ret;
    }"""
    with pytest.raises(DivergenceError, match=r"divergent warp-synchronous instruction: warp 0 needs all threads of "
                                              r"the warp \(.aligned\) but lanes 16-31 are predicated off"):
        launch(prog, "k", [], block=32)


def test_thread_not_in_membermask():
    prog = HDR + """
    .visible .entry k()
    {
        .reg .u32 %r<3>;
        mov.u32 %r1, %tid.x;
        shfl.sync.idx.b32 %r2, %r1, 0, 31, 0x0000ffff;
        ret;
    }"""
    with pytest.raises(DivergenceError, match=r"thread is not in the instruction's membermask 0x0000ffff: "
                                              r"shfl.sync.idx.b32 .* by thread \(16,0,0\)"):
        launch(prog, "k", [], block=32)


def test_deadlock_reports_every_warp():
    prog = HDR + """
    .visible .entry k()
    {
        .reg .u32 %r<2>; .reg .pred %p1;
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 32;
        @%p1 bra A;
        bar.sync 2, 64;
        ret;
    A:
        bar.sync 1, 64;
        ret;
    }"""
    with pytest.raises(DeadlockError) as ei:
        launch(prog, "k", [], block=64)
    msg = str(ei.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    assert "CTA (0,0,0) warp 0 lanes 0-31: at <ptx>:14 (instruction #5 of k) `bar.sync 1, 64;` waits on barrier 1 (32 of 64 threads arrived)" in msg
    assert "CTA (0,0,0) warp 1 lanes 0-31: at <ptx>:11 (instruction #3 of k) `bar.sync 2, 64;` waits on barrier 2 (32 of 64 threads arrived)" in msg
    launch(prog.replace("bar.sync 2, 64;", "bar.sync 1, 64;"), "k", [], block=64)


MBAR = HDR.replace("sm_80", "sm_90") + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<6>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 val;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r2], COUNT;
    bar.sync 0;
    setp.eq.u32 %p2, %r1, 32;
    @!%p2 bra WAIT;
    st.shared.u32 [val], 42;
    mbarrier.arrive.shared.b64 %st, [%r2];
WAIT:
    mbarrier.try_wait.parity.shared.b64 %p1, [%r2], 0;
    @!%p1 bra WAIT;
    ld.shared.u32 %r3, [val];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"""


def test_mbarrier_wait_and_deadlock():
    y = np.zeros(64, np.uint32)
    launch(MBAR.replace("COUNT", "1"), "k", [y], block=64)
    assert (y == 42).all()
    with pytest.raises(DeadlockError) as ei:
        launch(MBAR.replace("COUNT", "2"), "k", [y], block=64)
    msg = str(ei.value)
    assert "`mbarrier.try_wait.parity.shared.b64 %p1, [%r2], 0;` waits on mbarrier at shared 0x0 for phase parity 0" in msg
    assert "(current phase 0, 1 of 2 arrivals pending, tx-count 0)" in msg


def test_errors_carry_the_source_location():
    """Traced kernels set Instruction.loc: the message starts with the user's file:line."""
    mod = jax_pyptx.parse(COPY.replace("CHECK", ""))
    fn = mod.function("copy")
    for i, s in enumerate(fn.body):
        if getattr(s, "opcode", None) == "ld" and ".global" in s.modifiers:
            s.loc = SourceLoc("my_kernel.py", 42)
    x = np.zeros(10, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(mod, "copy", [x, x, np.uint32(10)], block=32)
    assert str(ei.value).startswith("my_kernel.py:42: out-of-bounds global load")
    assert ei.value.loc == SourceLoc("my_kernel.py", 42)


def test_infinite_loop_is_stopped():
    # the exit tests a counter that changes every iteration (it would end after 2**32 of them),
    # so this is not a no-progress spin (test_interp_progress)
    prog = HDR + (".visible .entry k()\n{\n.reg .u32 %r1; .reg .pred %p1;\nmov.u32 %r1, 1;\nL:\n add.u32 %r1, %r1, 1;"
                  "\n setp.ne.u32 %p1, %r1, 0;\n @%p1 bra L;\n}")
    with pytest.raises(InterpreterError, match="instruction limit of 10000 exceeded"):
        launch(prog, "k", [], block=32, max_steps=10000)


def test_trap_and_unsupported_instruction():
    with pytest.raises(InterpreterError, match="the kernel executed trap"):
        launch(HDR + ".visible .entry k()\n{\n trap;\n}", "k", [], block=1)
    # an unsupported instruction on a path never taken does not stop the kernel
    prog = HDR + """.visible .entry k()
    {
        .reg .pred %p1; .reg .u32 %r1;
        mov.u32 %r1, %tid.x;
        setp.gt.u32 %p1, %r1, 100;
        @%p1 bra X;
        ret;
    X:
        brx.idx %r1, tgts;
        ret;
    }"""
    launch(prog, "k", [], block=32)


# ----------------------------------------------------------------------------- races
RACE = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .f32 %f<3>; .reg .pred %p;
    .shared .align 4 .b8 tile[256];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.u32 %r4, %r3, %r2;
    mov.u32 %r7, 0;
LOOP:
    add.u32 %r6, %r1, %r7;
    cvt.rn.f32.u32 %f1, %r6;
    st.shared.f32 [%r4], %f1;
    SYNC1
    xor.b32 %r5, %r2, 128;                // read the other warp's slot
    add.u32 %r5, %r3, %r5;
    ld.shared.f32 %f2, [%r5];
    SYNC2
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p, %r7, 3;
    @%p bra LOOP;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f2;
    ret;
}
"""


def test_missing_barrier_read_after_write_race():
    y = np.zeros(64, np.float32)
    with pytest.raises(jax_pyptx.errors.RaceError) as ei:
        launch(RACE.replace("SYNC1", "").replace("SYNC2", "bar.sync 0;"), "k", [y], block=64)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:22: race on shared load ld.shared.f32 %f2, [%r5]; by thread (0,0,0) of CTA (0,0,0): ")
    assert "it reads shared address 0x80 ('tile' (+128)) that warp 1 of this CTA stored since the last barrier" in msg
    assert "a bar.sync (__syncthreads) is missing between the store and this load" in msg


def test_missing_barrier_write_after_read_race():
    y = np.zeros(64, np.float32)
    with pytest.raises(jax_pyptx.errors.RaceError) as ei:
        launch(RACE.replace("SYNC1", "bar.sync 0;").replace("SYNC2", ""), "k", [y], block=64)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:18: race on shared store st.shared.f32 [%r4], %f1; by thread (0,0,0) of CTA (0,0,0): ")
    assert "it overwrites shared address 0x0 ('tile' (+0)) that warp 1 of this CTA loaded since the last barrier" in msg


def test_race_free_kernel_runs_clean_and_one_warp_needs_no_barrier():
    y = np.zeros(64, np.float32)
    launch(RACE.replace("SYNC1", "bar.sync 0;").replace("SYNC2", "bar.sync 0;"), "k", [y], block=64)
    t = np.arange(64)
    assert y.tolist() == ((t ^ 32) + 2).astype(np.float32).tolist()
    # a single warp reading its own lanes' stores needs no CTA barrier, only a bar.warp.sync
    # (without it, lanes of one warp race too: test_interp_recall_races)
    y = np.zeros(32, np.float32)
    one = RACE.replace("SYNC1", "bar.warp.sync -1;").replace("SYNC2", "bar.warp.sync -1;").replace(
        "xor.b32 %r5, %r2, 128;", "xor.b32 %r5, %r2, 4;")
    launch(one, "k", [y], block=32)
    assert y.tolist() == ((np.arange(32) ^ 1) + 2).astype(np.float32).tolist()
    # with the sanitizer off, the race is not reported (and the lock-step result comes back)
    y = np.zeros(64, np.float32)
    launch(RACE.replace("SYNC1", "").replace("SYNC2", ""), "k", [y], block=64, sanitize=False)
    assert y.tolist() == ((t ^ 32) + 2).astype(np.float32).tolist()


def test_cp_async_destination_read_before_its_wait_is_reported_even_over_old_data():
    """The destination already holds older data (a GPU returns either): reading it before
    cp.async.wait_group is reported, naming the cp.async; with the wait it reads the copy."""
    import numpy as np
    from jax_pyptx.errors import AsyncProxyError
    from jax_pyptx.interpret import launch

    ptx = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b8 buf[16];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, 1;
  st.shared.u32 [buf], %r1;
  cp.async.cg.shared.global [buf], [%rd1], 16;
  cp.async.commit_group;
  WAIT
  ld.shared.u32 %r2, [buf];
  st.global.u32 [%rd2], %r2;
  ret;
}
"""
    out = np.zeros(4, np.uint32)
    with pytest.raises(AsyncProxyError) as e:
        launch(ptx.replace("WAIT", ""), "k", [np.full(4, 2, np.uint32), out], block=1)
    assert str(e.value).startswith(
        "<ptx>:18: the load reads shared address 0x0 'buf' (+0) that `cp.async.cg.shared.global "
        "[buf], [%rd1], 16;` (<ptx>:15 (instruction #6 of k)) is still writing: complete it "
        "first (cp.async.commit_group, then cp.async.wait_group / cp.async.wait_all")
    launch(ptx.replace("WAIT", "cp.async.wait_group 0;"), "k", [np.full(4, 2, np.uint32), out],
           block=1)
    assert out[0] == 2
