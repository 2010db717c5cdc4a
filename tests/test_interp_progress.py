"""Interpreter limits (issue 15): warps spinning forever on memory nothing will change are
reported like a deadlock, with each warp's line, long before the instruction limit; legitimate
spin loops (a consumer polling a flag or an mbarrier while a producer still runs, loops with a
counter) run to completion; max_steps and timeout on launch, kernel.interpret, JAX and torch."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx import Tile, configure, kernel, ptx, reg
from jax_pyptx.errors import DeadlockError, InterpreterError, InterpreterLimitError
from jax_pyptx.interpret import launch
from jax_pyptx.types import u32, u64

from .helpers import line_of

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"

# warp 0 spins on a global flag; warps 1-3 wait for it at bar.sync. SET decides who sets it.
FLAG = HDR + """
.visible .entry k(.param .u64 flag, .param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [y];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra OTHERS;
SPIN:
    ld.volatile.global.u32 %r2, [%rd1];
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra SPIN;
    bra.uni DONE;
OTHERS:
    SET
DONE:
    bar.sync 0;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}
"""

# the other warps first count to 2000 in registers (a long computation that is not a spin),
# then one of them sets the flag
PRODUCER = """mov.u32 %r3, 0;
WORK:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 2000;
    @%p2 bra WORK;
    setp.eq.u32 %p2, %r1, 32;
    @%p2 st.volatile.global.u32 [%rd1], 1;"""


def test_spin_on_a_flag_nobody_sets_is_reported_like_a_deadlock():
    flag = np.zeros(1, np.uint32)
    y = np.zeros(128, np.uint32)
    stats = {}
    with pytest.raises(DeadlockError) as ei:
        launch(FLAG.replace("SET", ""), "k", [flag, y], block=128, stats=stats)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:16: no progress: the warps that can run spin in loops that can never exit (each "
                          "went round its loop and came back to the same state, and for ")
    assert ("the loops only read memory that nothing running writes and every other warp is parked: a flag or "
            "mbarrier that is never set?)") in msg
    assert ("  CTA (0,0,0) warp 0 lanes 0-31: spins in the loop from <ptx>:14 (instruction #5 of k) "
            "`ld.volatile.global.u32 %r2, [%rd1];` to <ptx>:16 (instruction #7 of k) `@%p2 bra SPIN;`") in msg
    for w in (1, 2, 3):
        assert (f"  CTA (0,0,0) warp {w} lanes 0-31: at <ptx>:21 (instruction #9 of k) `bar.sync 0;` waits on "
                f"barrier 0 (96 of 128 threads arrived)") in msg
    # the fixed kernel: the producer warps set the flag after a long computation
    launch(FLAG.replace("SET", PRODUCER), "k", [flag, y], block=128)
    assert y.tolist() == list(range(128)) and flag[0] == 1


def test_wait_for_a_cta_of_a_later_batch_names_the_batches():
    """CTA 0 waits for a flag the last CTA of a large grid sets: the CTAs of a batch run to the
    end before the next batch starts, and the report says so."""
    prog = HDR + """
.visible .entry k(.param .u64 flag)
{
    .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p<3>;
    ld.param.u64 %rd1, [flag];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %nctaid.x;
    sub.u32 %r2, %r2, 1;
    setp.eq.u32 %p1, %r1, %r2;
    @%p1 st.volatile.global.u32 [%rd1], 1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
SPIN:
    ld.volatile.global.u32 %r3, [%rd1];
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra SPIN;
DONE:
    ret;
}"""
    launch(prog, "k", [np.zeros(1, np.uint32)], grid=64, block=256)      # one batch: fine
    with pytest.raises(DeadlockError, match=r"the interpreter runs the grid's 128 CTAs in batches of 64: a CTA "
                                            r"only sees what CTAs of its own batch write"):
        launch(prog, "k", [np.zeros(1, np.uint32)], grid=128, block=256)


def test_bare_infinite_loop_and_mutual_spin_are_reported():
    with pytest.raises(DeadlockError, match=r"(?s)no progress: .* spins in the loop from <ptx>:7 \(instruction #0 of "
                                            r"k\) `bra L;` to <ptx>:7"):
        launch(HDR + ".visible .entry k()\n{\nL:\n bra L;\n}", "k", [], block=32)
    # warp 0 waits for warp 1's flag and warp 1 for warp 0's: both are listed
    prog = HDR + """
.visible .entry k(.param .u64 f)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [f];
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    xor.b32 %r3, %r2, 1;
    mul.wide.u32 %rd2, %r3, 4;
    add.u64 %rd2, %rd1, %rd2;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra W0;
W1:
    ld.volatile.global.u32 %r4, [%rd2];
    setp.eq.u32 %p2, %r4, 0;
    @%p2 bra W1;
    ret;
W0:
    ld.volatile.global.u32 %r4, [%rd2];
    setp.eq.u32 %p2, %r4, 0;
    @%p2 bra W0;
    ret;
}"""
    with pytest.raises(DeadlockError) as ei:
        launch(prog, "k", [np.zeros(2, np.uint32)], block=64)
    msg = str(ei.value)
    assert ("warp 0 lanes 0-31: spins in the loop from <ptx>:22 (instruction #12 of k) `ld.volatile.global.u32 "
            "%r4, [%rd2];` to <ptx>:24 (instruction #14 of k) `@%p2 bra W0;`") in msg
    assert "warp 1 lanes 0-31: spins in the loop from <ptx>:17 (instruction #8 of k)" in msg
    assert "every other warp is parked" not in msg


def test_mbarrier_test_wait_spin_on_a_barrier_that_never_completes():
    prog = HDR + """
.visible .entry k(.param .u32 count)
{
    .reg .u32 %r<4>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 8 .b64 bar;
    ld.param.u32 %r3, [count];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [bar], %r3;
    bar.sync 0;
    @%p1 mbarrier.arrive.shared.b64 %st, [bar];
WAIT:
    mbarrier.test_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    ret;
}"""
    launch(prog, "k", [np.uint32(1)], block=64)
    # a failed test_wait parks until the phase changes (mbarrier model): a deadlock at once
    with pytest.raises(DeadlockError, match=r"at <ptx>:16 \(instruction #6 of k\) `mbarrier.test_wait.parity"
                                            r".shared.b64 %p2, \[bar\], 0;` waits on mbarrier at shared 0x0 for "
                                            r"phase parity 0 to complete \(current phase 0, 1 of 2 arrivals"):
        launch(prog, "k", [np.uint32(2)], block=64)


def test_consumer_spinning_while_the_producer_works_completes():
    """A consumer warp polls an mbarrier with test_wait and a shared flag with ld.volatile while
    the producer warp computes for a long time, stores, then arrives: never reported."""
    prog = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 data[32];
    .shared .align 4 .b32 flag;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [bar], 32;
    @%p1 st.volatile.shared.u32 [flag], 0;
    bar.sync 0;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra PRODUCER;
POLL:                                        // consumer: flag first, then the mbarrier
    ld.volatile.shared.u32 %r2, [flag];
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra POLL;
WAIT:
    mbarrier.test_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    and.b32 %r3, %r1, 31;
    shl.b32 %r3, %r3, 2;
    ld.shared.u32 %r4, [data+%r3];
    bra.uni OUT;
PRODUCER:
    mov.u32 %r5, 0;
    mov.u32 %r4, 0;
WORK:
    add.u32 %r4, %r4, %r1;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p2, %r5, 1500;
    @%p2 bra WORK;
    shl.b32 %r3, %r1, 2;
    st.shared.u32 [data+%r3], %r4;
    @%p1 st.volatile.shared.u32 [flag], 1;
    mbarrier.arrive.release.cta.shared.b64 %st, [bar];
OUT:
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r4;
    ret;
}""".replace("ld.shared.u32 %r4, [data+%r3];", "mov.u32 %r6, data;\n    add.u32 %r6, %r6, %r3;\n"
                                                 "    ld.shared.u32 %r4, [%r6];") \
        .replace("st.shared.u32 [data+%r3], %r4;", "mov.u32 %r6, data;\n    add.u32 %r6, %r6, %r3;\n"
                                                    "    st.shared.u32 [%r6], %r4;")
    y = np.zeros(64, np.uint32)
    launch(prog, "k", [y], block=64)
    want = [1500 * t for t in range(32)]
    assert y.tolist() == want + want


def test_spin_lock_that_is_never_released_and_an_atomic_counter_poll():
    """A cas spin lock on a lock that starts taken (nobody releases it) is reported; polling a
    counter with atom.add 0 until a producer warp has added to it completes."""
    lock = HDR + """
.visible .entry k(.param .u64 c)
{
    .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %q;
    ld.param.u64 %rd1, [c];
SPIN:
    atom.global.cas.b32 %r1, [%rd1], 0, 1;
    setp.ne.u32 %q, %r1, 0;
    @%q bra SPIN;
    atom.global.exch.b32 %r2, [%rd1], 0;
    ret;
}"""
    launch(lock, "k", [np.zeros(1, np.uint32)], block=64)        # a free lock: every thread gets it
    with pytest.raises(DeadlockError, match=r"spins in the loop from <ptx>:\d+ \(instruction #1 of k\) "
                                            r"`atom.global.cas.b32 %r1, \[%rd1\], 0, 1;`"):
        launch(lock, "k", [np.ones(1, np.uint32)], block=64)
    poll = HDR + """
.visible .entry k(.param .u64 c, .param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [c];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra PRODUCE;
POLL:
    atom.global.add.u32 %r2, [%rd1], 0;
    setp.lt.u32 %p2, %r2, 32;
    @%p2 bra POLL;
    bra.uni OUT;
PRODUCE:
    mov.u32 %r3, 0;
WORK:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 500;
    @%p2 bra WORK;
    red.global.add.u32 [%rd1], 1;
    mov.u32 %r2, 77;
OUT:
    ld.param.u64 %rd2, [y];
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r2;
    ret;
}"""
    c, y = np.zeros(1, np.uint32), np.zeros(64, np.uint32)
    launch(poll, "k", [c, y], block=64)
    assert c[0] == 32 and y.tolist() == [77] * 32 + [32] * 32


def test_bounded_pure_loop_is_never_reported():
    """A loop that only reads memory and counts runs for its full trip count."""
    prog = HDR + """
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p1;
    ld.param.u64 %rd1, [x];
    mov.u32 %r1, 0;
    mov.u32 %r2, 0;
L:
    ld.global.u32 %r3, [%rd1];
    add.u32 %r2, %r2, %r3;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 5000;
    @%p1 bra L;
    ld.param.u64 %rd2, [y];
    st.global.u32 [%rd2], %r2;
    ret;
}"""
    y = np.zeros(1, np.uint32)
    launch(prog, "k", [np.array([3], np.uint32), y], block=32)
    assert y[0] == 15000


# issue 23: warp 0 waits in a `while (flag == 0)` loop (the test at the head, a branch out of
# the loop) for a flag warp 1 sets only after `bar.sync 1, 64`, which warp 0 never reaches.
# ARRIVE: the fix, warp 0 arrives at barrier 1 first
NAMED = HDR + """.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<4>;
    .shared .align 4 .u32 flag;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.u32 [flag], 0;
    bar.sync 0;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra PRODUCER;
    ARRIVE
WAIT:
    ld.volatile.shared.u32 %r2, [flag];
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra DONE;
    bra.uni WAIT;
PRODUCER:
    bar.sync 1, 64;
    mov.u32 %r2, 7;
    st.volatile.shared.u32 [flag], %r2;
DONE:
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r2;
    ret;
}"""


def test_spin_on_a_flag_set_after_a_named_barrier_the_spinner_never_reaches():
    y = np.zeros(64, np.uint32)
    # max_steps: reported long before a limit (it used to run to the instruction limit)
    with pytest.raises(DeadlockError) as ei:
        launch(NAMED.replace("ARRIVE", ""), "k", [y], block=64, max_steps=100_000)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:19: no progress: the warps that can run spin in loops that can never exit")
    assert "the loops only read memory that nothing running writes and every other warp is parked" in msg
    assert msg.endswith(
        "\n  CTA (0,0,0) warp 0 lanes 0-31: spins in the loop from <ptx>:16 (instruction #6 of k) "
        "`ld.volatile.shared.u32 %r2, [flag];` to <ptx>:19 (instruction #9 of k) `bra.uni WAIT;`"
        "\n  CTA (0,0,0) warp 1 lanes 0-31: at <ptx>:21 (instruction #10 of k) `bar.sync 1, 64;` waits on "
        "barrier 1 (32 of 64 threads arrived)")
    assert y.tolist() == [0] * 64
    launch(NAMED.replace("ARRIVE", "bar.arrive 1, 64;"), "k", [y], block=64, max_steps=100_000)
    assert y.tolist() == [7] * 64


# issue 23: warp 0 counts its polls of a flag; SET: warp 1 sets it after some work (the fix),
# or returns without setting it (the bug)
COUNTED = HDR + """.visible .entry k(.param .u64 flag, .param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<4>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, 0;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra PRODUCER;
SPIN:
    add.u32 %r3, %r3, 1;
    ld.volatile.global.u32 %r2, [%rd1];
    setp.eq.u32 %p2, %r2, 0;
    EXIT
    @%p2 bra SPIN;
    bra.uni OUT;
PRODUCER:
    mov.u32 %r4, 0;
WORK:
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p3, %r4, 300;
    @%p3 bra WORK;
    setp.eq.u32 %p3, %r1, 32;
    SET
    mov.u32 %r3, %r4;
OUT:
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}"""


def test_spin_that_counts_its_iterations_is_reported():
    flag, y = np.zeros(1, np.uint32), np.zeros(64, np.uint32)
    with pytest.raises(DeadlockError) as ei:
        launch(COUNTED.replace("SET", "").replace("EXIT", ""), "k", [flag, y], block=64, max_steps=100_000)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:18: no progress: the warps that can run spin in loops that can never exit")
    assert "the loops only read memory that nothing running writes: a flag or mbarrier that is never set?)" in msg
    assert msg.endswith("\n  CTA (0,0,0) warp 0 lanes 0-31: spins in the loop from <ptx>:14 (instruction #6 of k) "
                        "`add.u32 %r3, %r3, 1;` to <ptx>:18 (instruction #9 of k) `@%p2 bra SPIN;`")
    # the fix: warp 1 sets the flag after 300 iterations of work; warp 0 stores its poll count
    launch(COUNTED.replace("SET", "@%p3 st.volatile.global.u32 [%rd1], 1;").replace("EXIT", ""), "k",
           [flag, y], block=64)
    assert flag[0] == 1 and y[32:].tolist() == [300] * 32
    assert len(set(y[:32].tolist())) == 1 and y[0] >= 1
    # a spin that gives up after 3000 polls (the exit tests the counter) is bounded: it runs out
    flag[0] = 0
    launch(COUNTED.replace("SET", "").replace("EXIT", "setp.lt.and.u32 %p2, %r3, 3000, %p2;"), "k",
           [flag, y], block=64)
    assert y.tolist() == [3000] * 32 + [300] * 32


def test_inner_loop_whose_state_repeats_across_the_outer_loop_runs_to_the_end():
    """The inner loop reads memory and comes back to the same registers in every iteration of
    the outer loop, 251 backward branches apart: only the outer counter differs. Its state
    repeats, but not from one iteration to the next: never reported."""
    prog = HDR + """
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [x];
    mov.u32 %r1, 0;
    mov.u32 %r5, 0;
PRE:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p1, %r5, 6;
    @%p1 bra PRE;
OUTER:
    mov.u32 %r2, 0;
INNER:
    ld.global.u32 %r3, [%rd1];
    add.u32 %r2, %r2, %r3;
    setp.lt.u32 %p1, %r2, 251;
    @%p1 bra INNER;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p2, %r1, 40;
    @%p2 bra OUTER;
    ld.param.u64 %rd2, [y];
    st.global.u32 [%rd2], %r1;
    ret;
}"""
    y = np.zeros(1, np.uint32)
    launch(prog, "k", [np.ones(1, np.uint32), y], block=32)
    assert y[0] == 40


# ----------------------------------------------------------------------------- limits
# counts to 2**32: bounded (the exit tests the counter), so only a limit stops it
COUNT_FOREVER = HDR + """.visible .entry k()
{
.reg .u32 %r1; .reg .pred %p1;
mov.u32 %r1, 1;
L:
 add.u32 %r1, %r1, 1;
 setp.ne.u32 %p1, %r1, 0;
 @%p1 bra L;
}"""


def test_max_steps_and_timeout_on_launch():
    with pytest.raises(InterpreterLimitError) as ei:
        launch(COUNT_FOREVER, "k", [], block=64, max_steps=5000)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:11: instruction limit of 5000 exceeded (an infinite loop?) at: @%p1 bra L; "
                          "[instruction #3 of k] (the limit is 5000 instructions per batch of CTAs; raise it "
                          "with max_steps=: an argument of jax_pyptx.interpret.launch and kernel.interpret, a "
                          "call option of ptx_call, or configure(kernel, max_steps=...) for the JAX and "
                          "PyTorch calls)\n")
    for w in (0, 1):
        assert f"\n  CTA (0,0,0) warp {w} lanes 0-31: at <ptx>:11 (instruction #3 of k) `@%p1 bra L;` runnable" in msg
    with pytest.raises(InterpreterLimitError, match=r"time limit of 0.2 s exceeded after \d+ instructions at: "
                                                    r".*\(the limit is 0.2 s, the default 300 s; raise it with "
                                                    r"timeout= \(math.inf for none\): an argument of "
                                                    r"jax_pyptx.interpret.launch and kernel.interpret, a call "
                                                    r"option of ptx_call, or configure\(kernel, timeout=...\) for "
                                                    r"the JAX and PyTorch calls\)"):
        launch(COUNT_FOREVER, "k", [], block=32, timeout=0.2)
    with pytest.raises(InterpreterError,
                       match=r"timeout must be a positive number of seconds \(math.inf for none\), got -1.0"):
        launch(COUNT_FOREVER, "k", [], timeout=-1)
    with pytest.raises(InterpreterError, match="max_steps must be a positive number of instructions, got 0"):
        launch(COUNT_FOREVER, "k", [], max_steps=0)


@kernel(arch="sm_90a", in_specs=(Tile("N", u32),), out_specs=(Tile("N", u32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def spin_dsl(Flag, Out):
    tid = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(u32)
    ptx.label("spin")
    ptx.inst.ld.volatile.global_.u32(v, ptx.addr(Flag.ptr()))
    ptx.bra("spin", pred=v == 0)                                   # SPIN-LINE
    ptx.inst.st.global_.u32(ptx.addr(Out.ptr() + reg.cvt(tid, u64) * 4), v)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("N", u32),), out_specs=(Tile("N", u32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def count_dsl(X, Out, *, n=10**9):
    tid = reg.from_(ptx.special.tid.x(), u32)
    acc = reg.scalar(u32, 0)
    for _ in ptx.range_(0, n):
        acc += 3
    ptx.inst.st.global_.u32(ptx.addr(Out.ptr() + reg.cvt(tid, u64) * 4), acc)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("N", u32),), out_specs=(Tile("N", u32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def poll_dsl(Flag, Out):
    tid = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(u32, 0)
    polls = reg.scalar(u32, 0)
    with ptx.while_(lambda: v == 0):                               # POLL-LINE
        ptx.inst.ld.volatile.global_.u32(v, ptx.addr(Flag.ptr()))
        polls += 1
    ptx.inst.st.global_.u32(ptx.addr(Out.ptr() + reg.cvt(tid, u64) * 4), polls)
    ptx.ret()


def test_dsl_while_loop_that_counts_its_polls_names_the_users_line():
    """``ptx.while_`` tests at the head and branches out of the loop; the body counts polls."""
    with pytest.raises(DeadlockError) as ei:
        poll_dsl.interpret(np.zeros(32, np.uint32), max_steps=100_000)
    where = line_of(poll_dsl.fn, "POLL-LINE")
    msg = str(ei.value)
    assert msg.startswith(f"{where}: no progress: ")
    assert f"CTA (0,0,0) warp 0 lanes 0-31: spins in the loop from {where} (" in msg
    assert poll_dsl.interpret(np.full(32, 5, np.uint32)).tolist() == [1] * 32


def test_dsl_spin_names_the_users_line_and_limits_on_kernel_interpret():
    with pytest.raises(DeadlockError) as ei:
        spin_dsl.interpret(np.zeros(32, np.uint32))
    msg = str(ei.value)
    where = line_of(spin_dsl.fn, "SPIN-LINE")
    assert msg.startswith(f"{where}: no progress: ")
    assert f"to {where} (" in msg
    got = spin_dsl.interpret(np.full(32, 5, np.uint32))
    assert got.tolist() == [5] * 32
    with pytest.raises(InterpreterLimitError, match="instruction limit of 3000 exceeded"):
        count_dsl.interpret(np.zeros(32, np.uint32), max_steps=3000)
    with pytest.raises(InterpreterLimitError, match="time limit of 0.3 s exceeded"):
        count_dsl.interpret(np.zeros(32, np.uint32), timeout=0.3)
    assert count_dsl.interpret(np.zeros(32, np.uint32), n=100).tolist() == [300] * 32


def test_limits_through_jax_and_configure():
    import jax
    import jax.numpy as jnp

    from jax_pyptx import ptx_call

    # the error crosses XLA's host callback: its type there is the runtime's concern (issue 15),
    # the limit and its message are what this checks
    raised = (InterpreterLimitError, jax.errors.JaxRuntimeError)
    x = jnp.zeros(32, jnp.uint32)
    with pytest.raises(raised, match="instruction limit of 2000 exceeded"):
        ptx_call(count_dsl, max_steps=2000)(x)
    with pytest.raises(raised, match="time limit of 0.25 s exceeded"):
        jax.block_until_ready(ptx_call(count_dsl, timeout=0.25)(x))
    configure(count_dsl, max_steps=2500)
    try:
        with pytest.raises(raised, match="instruction limit of 2500 exceeded"):
            jax.block_until_ready(count_dsl(x))
        assert count_dsl(x, n=10).tolist() == [30] * 32
    finally:
        configure(count_dsl, max_steps=None)


def test_limits_through_torch():
    torch = pytest.importorskip("torch")
    from jax_pyptx import to_torch

    f = to_torch(count_dsl)
    configure(count_dsl, max_steps=1500)
    try:
        with pytest.raises(InterpreterLimitError, match="instruction limit of 1500 exceeded"):
            f(torch.zeros(32, dtype=torch.int32).to(torch.uint32))
    finally:
        configure(count_dsl, max_steps=None)
    configure(count_dsl, timeout=0.25)
    try:
        with pytest.raises(InterpreterLimitError, match="time limit of 0.25 s exceeded"):
            f(torch.zeros(32, dtype=torch.int32).to(torch.uint32))
    finally:
        configure(count_dsl, timeout=None)


WIDE = HDR + """.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p1;
    mov.u32 %r1, 0;
L:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 300;
    @%p1 bra L;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r2, %r2, %r3, %tid.x;
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r1;
    ret;
}"""

LINE = (r"jax_pyptx\.interpret: kernel 'k' running for \d+ s: [\d,]+ instructions \([\d,]+/s\), "
        r"(\d+) of 32 CTAs done, 16 running; stops at ")


def test_progress_line_on_stderr_for_a_long_launch(monkeypatch, capsys):
    """A launch running past PROGRESS_AFTER seconds prints a line on stderr every PROGRESS_EVERY
    seconds (lowered to 0 here): instructions, rate, CTAs done (two batches of 16 CTAs), and the
    limits, the default timeout included."""
    import math
    import re

    from jax_pyptx.interpret.scheduler import progress
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(progress, "PROGRESS_EVERY", 0.0)
    monkeypatch.setattr(progress, "TIME_CHECK_EVERY", 400)
    y = np.zeros(32 * 1024, np.uint32)
    launch(WIDE, "k", [y], grid=32, block=1024)
    assert y.tolist() == [300] * (32 * 1024)
    lines = capsys.readouterr().err.splitlines()
    tail = r"300 s \(timeout=\) or 50,000,000 instructions per batch \(max_steps=\)"
    done = [re.fullmatch(LINE + tail, s) for s in lines]
    assert lines and all(done), lines
    assert {m.group(1) for m in done} == {"0", "16"}
    launch(WIDE, "k", [y], grid=32, block=1024, timeout=math.inf, max_steps=10**6)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(re.fullmatch(LINE + r"1,000,000 instructions per batch \(max_steps=\)", s) for s in lines)
