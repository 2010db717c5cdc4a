"""mbarrier objects as the PTX ISA defines them: phases and parity (with wraparound), arrival
counts, arrive_drop, expect_tx / complete_tx byte accounting, state tokens and pending_count,
test_wait / try_wait (parity and token forms, time limits), noComplete, inval,
cp.async.mbarrier.arrive(.noinc), parked waiters that do not burn the instruction budget, and
the sanitizer's reports (over-arrival, unbalanced tx-counts, deadlocks with barrier state)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx import parse
from jax_pyptx.errors import DeadlockError, InterpreterError, OutOfBoundsError, SanitizerError, UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.machine import mbarrier as MB
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def kern(body, params=".param .u64 out", extra=""):
    return HDR + f"""
.visible .entry k({params})
{{
    .reg .u32 %r<16>; .reg .u64 %rd<16>; .reg .pred %p<8>; .reg .b64 %st<8>;
    .shared .align 8 .b64 bar;
    .shared .align 8 .b64 bar2;
    {extra}
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
{body}
    ret;
}}
"""


def _ptxas_ok(text):
    """The hand-written kernels are real PTX: ptxas accepts them."""
    try:
        ptxas_check(text, "sm_90a")
    except Exception as e:          # no ptxas on this machine: nothing to check
        if "not found" in str(e) or "no ptxas" in str(e).lower():
            return
        raise


def run(body, n_out=16, block=1, ptxas=True, **kw):
    text = kern(body, **kw)
    if ptxas:
        _ptxas_ok(text)
    out = np.zeros(n_out, np.uint64)
    # ptxas=False: PTX ptxas refuses, run for the interpreter's own check (parse's is skipped)
    launch(text if ptxas else parse(text, check=False), "k", [out], block=block)
    return out


def store(i, reg, kind="u64"):
    return f"    st.global.{kind} [%rd1+{8 * i}], {reg};\n"


def test_phase_parity_wraps_around_every_two_phases():
    body = "    mbarrier.init.shared::cta.b64 [%r2], 1;\n"
    for i in range(5):
        body += (f"    mbarrier.arrive.shared::cta.b64 %st1, [%r2];\n"
                 f"    mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r2], {i & 1};\n"
                 f"    mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], {(i + 1) & 1};\n"
                 f"    selp.u64 %rd2, 1, 0, %p1;\n    selp.u64 %rd3, 2, 0, %p2;\n"
                 f"    or.b64 %rd2, %rd2, %rd3;\n" + store(2 * i, "%rd2") +
                 "    shr.u64 %rd4, %st1, 32;\n" + store(2 * i + 1, "%rd4"))
    out = run(body)
    # after arrival i the phase with parity i&1 is complete, the current one (parity (i+1)&1)
    # is not; the token carries the phase the thread arrived in: 0, 1, 2, 3, 4
    assert out[0:10:2].tolist() == [1] * 5
    assert out[1:10:2].tolist() == [0, 1, 2, 3, 4]


def test_token_waits_and_pending_count_with_counts():
    body = """
    mbarrier.init.shared.b64 [%r2], 3;
    mbarrier.arrive.shared.b64 %st1, [%r2], 2;
    mbarrier.pending_count.b64 %r3, %st1;
    mbarrier.test_wait.shared.b64 %p1, [%r2], %st1;
    selp.u32 %r4, 1, 0, %p1;
    mbarrier.arrive.shared.b64 %st2, [%r2];
    mbarrier.pending_count.b64 %r5, %st2;
    mbarrier.test_wait.shared.b64 %p2, [%r2], %st1;
    selp.u32 %r6, 1, 0, %p2;
    mbarrier.arrive.shared.b64 %st3, [%r2], 3;
    mbarrier.test_wait.shared.b64 %p3, [%r2], %st2;
    selp.u32 %r7, 1, 0, %p3;
    mbarrier.test_wait.shared.b64 %p4, [%r2], %st3;
    selp.u32 %r8, 1, 0, %p4;
    shr.u64 %rd5, %st3, 32;
    cvt.u32.u64 %r9, %rd5;
"""
    for i, r in enumerate(("%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9")):
        body += f"    st.global.u32 [%rd1+{4 * i}], {r};\n"
    out = run(body).view(np.uint32)
    # count 2 of 3 leaves 1 pending, phase 0 not done; the third arrival completes phase 0
    # (token pending 0); an arrive with count 3 completes phase 1 at once; phase 1's token
    # names phase 1
    assert out[:7].tolist() == [1, 0, 0, 1, 1, 1, 1]


def test_arrive_drop_lowers_the_expected_count_of_later_phases():
    body = """
    mbarrier.init.shared.b64 [%r2], 2;
    mbarrier.arrive_drop.shared.b64 %st1, [%r2];
    mbarrier.test_wait.parity.shared.b64 %p1, [%r2], 0;
    mbarrier.arrive.shared.b64 %st2, [%r2];
    mbarrier.test_wait.parity.shared.b64 %p2, [%r2], 0;
    mbarrier.arrive.shared.b64 %st3, [%r2];
    mbarrier.test_wait.parity.shared.b64 %p3, [%r2], 1;
    selp.u32 %r3, 1, 0, %p1; selp.u32 %r4, 1, 0, %p2; selp.u32 %r5, 1, 0, %p3;
    st.global.u32 [%rd1], %r3; st.global.u32 [%rd1+4], %r4; st.global.u32 [%rd1+8], %r5;
"""
    out = run(body).view(np.uint32)
    # phase 0 needs 2 arrivals (the drop counts as one); phase 1 needs only 1
    assert out[:3].tolist() == [0, 1, 1]


def test_tx_count_accounting():
    body = """
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.complete_tx.shared::cta.b64 [%r2], 16;
    mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r2], 64;
    mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r2], 0;
    mbarrier.complete_tx.shared::cta.b64 [%r2], 32;
    mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    mbarrier.expect_tx.shared::cta.b64 [%r2], 8;
    mbarrier.complete_tx.shared::cta.b64 [%r2], 24;
    mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r2], 0;
    selp.u32 %r3, 1, 0, %p1; selp.u32 %r4, 1, 0, %p2; selp.u32 %r5, 1, 0, %p3;
    st.global.u32 [%rd1], %r3; st.global.u32 [%rd1+4], %r4; st.global.u32 [%rd1+8], %r5;
"""
    out = run(body).view(np.uint32)
    # tx: -16 (completed before expected), +64 -> 48 with no arrival pending, -32 -> 16,
    # +8 -> 24, -24 -> 0: only then does phase 0 complete
    assert out[:3].tolist() == [0, 0, 1]


def test_many_threads_arrive_in_thread_order_across_phases():
    """128 threads arrive on a count-32 barrier in one instruction: four phases complete, each
    thread's token names the phase it arrived in and what it left pending."""
    body = """
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r2], 32;
    bar.sync 0;
    mbarrier.arrive.shared.b64 %st1, [%r2];
    mul.wide.u32 %rd2, %r1, 8;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u64 [%rd3], %st1;
"""
    out = run(body, n_out=128, block=128)
    t = np.arange(128)
    assert (out >> 32).tolist() == (t // 32).tolist()
    assert (out & 0xFFFFFFFF).tolist() == (31 - t % 32).tolist()


def test_try_wait_timeout_returns_false_when_nothing_else_can_run():
    """A try_wait whose phase cannot complete while the thread waits returns false (its time
    limit expires) instead of hanging; the thread then arrives itself and waits again."""
    body = """
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0, 1000;
    selp.u32 %r3, 1, 0, %p1;
    st.global.u32 [%rd1], %r3;
    @!%p1 mbarrier.arrive.shared::cta.b64 %st1, [%r2];
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    selp.u32 %r4, 1, 0, %p2;
    st.global.u32 [%rd1+4], %r4;
"""
    out = run(body).view(np.uint32)
    assert out[:2].tolist() == [0, 1]


SPIN = """
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    mov.u32 %r5, 0;
    setp.lt.u32 %p2, %r1, 32;
    @!%p2 bra WAIT;
    // warp 0 works for a long time, then arrives
LOOP:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p3, %r5, 2000;
    @%p3 bra LOOP;
    @%p1 mbarrier.arrive.shared::cta.b64 %st1, [%r2];
    bra DONE;
WAIT:
    WAITOP
    @!%p4 bra WAIT;
DONE:
    mul.wide.u32 %rd2, %r1, 8;
    add.u64 %rd3, %rd1, %rd2;
    cvt.u64.u32 %rd4, %r5;
    st.global.u64 [%rd3], %rd4;
"""


@pytest.mark.parametrize("op", ["mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r2], 0;",
                                "mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r2], 0;"])
def test_waiting_warps_park_and_do_not_burn_the_budget(op):
    text = kern(SPIN.replace("WAITOP", op))
    _ptxas_ok(text)
    out = np.zeros(256, np.uint64)
    stats = {}
    launch(text, "k", [out], block=256, stats=stats)
    assert out.tolist() == [2000] * 32 + [0] * 224
    # warp 0 runs ~3 instructions per loop iteration; the seven waiting warps (one group) run
    # their wait a handful of times, not once per producer iteration
    assert stats["instructions"] < 3 * 2000 + 100


def test_cp_async_mbarrier_arrive_noinc():
    text = HDR + """
.visible .entry k(.param .u64 src, .param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b32 buf[32];
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 32;
    bar.sync 0;
    mov.u32 %r3, buf;
    mad.lo.u32 %r4, %r1, 4, %r3;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    xor.b32 %r5, %r1, 1;
    mad.lo.u32 %r6, %r5, 4, %r3;
    ld.shared.u32 %r7, [%r6];
    add.u64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r7;
    ret;
}
"""
    _ptxas_ok(text)
    src = np.arange(32, dtype=np.uint32) * 7
    out = np.zeros(32, np.uint32)
    launch(text, "k", [src, out], block=32)
    assert out.tolist() == (src[np.arange(32) ^ 1]).tolist()


# ----------------------------------------------------------------------------- sanitizer
def test_too_many_arrivals_are_reported():
    body = """
    mbarrier.init.shared.b64 [%r2], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r2], 128;
    mbarrier.arrive.shared.b64 %st2, [%r2];
"""
    with pytest.raises(SanitizerError) as e:
        run(body)
    assert ("too many arrivals on the mbarrier at shared 0x0: every arrival of the current phase "
            "happened but its tx-count is 128 (128 bytes expected by expect_tx never completed), so "
            "this arrive has no phase to count in: mbarrier.arrive.shared.b64 %st2, [%r2];") in str(e.value)
    with pytest.raises(SanitizerError, match="an arrive with count 3 finds 2 arrivals pending"):
        run("    mbarrier.init.shared.b64 [%r2], 2;\n    mbarrier.arrive.shared.b64 %st1, [%r2], 3;\n")


def test_an_arrive_count_outside_the_isa_range_names_its_thread():
    # thread 0 arrives with count 0; then thread 0 with 2^20 - 1 and thread 1 with twice that
    # (the ISA allows 1 .. 2^20 - 1): every count is checked before any arrival
    for sub, thread, got in (("mov.u32 %r3, %r1;", 0, 0), ("mad.lo.u32 %r3, %r1, 1048575, 1048575;", 1, 2097150)):
        with pytest.raises(InterpreterError) as e:
            run(f"    mbarrier.init.shared.b64 [%r2], 2;\n    {sub}\n"
                "    mbarrier.arrive.shared.b64 %st1, [%r2], %r3;\n", block=2)
        assert (f"mbarrier arrive count must be 1..1048575, got {got}: mbarrier.arrive.shared.b64 %st1, "
                f"[%r2], %r3; by thread ({thread},0,0) of CTA (0,0,0)") in str(e.value)


def test_no_complete_arrive_that_completes_is_reported():
    with pytest.raises(SanitizerError, match="mbarrier.arrive.noComplete completes the current phase"):
        run("    mbarrier.init.shared.b64 [%r2], 2;\n"
            "    mbarrier.arrive.noComplete.shared.b64 %st1, [%r2], 2;\n")
    run("    mbarrier.init.shared.b64 [%r2], 3;\n"
        "    mbarrier.arrive.noComplete.shared.b64 %st1, [%r2], 2;\n"
        "    mbarrier.arrive.shared.b64 %st1, [%r2];\n")


def test_use_before_init_and_after_inval():
    with pytest.raises(UninitializedReadError, match="mbarrier at shared address 0x0 arrived on before "
                                                     "mbarrier.init"):
        run("    mbarrier.arrive.shared.b64 %st1, [%r2];\n")
    with pytest.raises(UninitializedReadError, match="waited on before mbarrier.init"):
        run("    mbarrier.init.shared.b64 [%r2], 1;\n    mbarrier.inval.shared.b64 [%r2];\n"
            "    mbarrier.test_wait.parity.shared.b64 %p1, [%r2], 0;\n")
    with pytest.raises(InterpreterError, match="mbarrier.init count must be 1..1048575, got 0"):
        run("    mbarrier.init.shared.b64 [%r2], 0;\n", ptxas=False)


def test_unbalanced_tx_count_at_exit_is_reported():
    body = """
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r2], 4096;
    mbarrier.complete_tx.shared::cta.b64 [%r2], 1024;
"""
    with pytest.raises(SanitizerError) as e:
        run(body)
    msg = e.value.message
    assert str(e.value).startswith("<ptx>:17: unbalanced mbarrier transactions at kernel exit")
    assert ("CTA (0,0,0) mbarrier at shared 0x0: phase 0 (parity 0), 0 of 1 arrivals pending, "
            "tx-count 3072: 3072 bytes expected by expect_tx never completed; last changed by "
            "`mbarrier.complete_tx.shared::cta.b64 [%r2], 1024;` at <ptx>:") in msg


def test_deadlock_names_each_barrier_and_its_tx_count():
    body = """
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r2], 256;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
"""
    with pytest.raises(DeadlockError) as e:
        run(body, block=64)
    msg = str(e.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    assert ("CTA (0,0,0) warp 1 lanes 0-31: at <ptx>:20 (instruction #7 of k) "
            "`mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;` waits on mbarrier at shared 0x0 "
            "for phase parity 0 to complete (current phase 0, 0 of 1 arrivals pending, tx-count 256): "
            "256 bytes expected by expect_tx never completed; the tx-count was last changed by "
            "`@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r2], 256;` at <ptx>:18 "
            "(instruction #6 of k)") in msg


def test_plain_functions_for_other_parts_of_the_interpreter():
    """The API tcgen05.commit and cluster code call: arrive / expect_tx / complete_tx on an
    mbarrier named by (cta, shared offset)."""
    from jax_pyptx.interpret.launch import LaunchMemory, LaunchState, get_module, get_program
    from jax_pyptx.interpret.scheduler.context import Context
    text = kern("    mbarrier.init.shared.b64 [%r2], 2;\n")
    prog = get_program(get_module(text), "k")
    ctx = Context(prog, LaunchState((1, 1, 1), (32, 1, 1), (1, 1, 1), 0, LaunchMemory(prog), 1000), [0])
    MB.init(ctx, 0, 0, 2)
    assert MB.mbarrier_arrive(ctx, 0, 0) == MB.token(0, 1)
    MB.mbarrier_expect_tx(ctx, 0, 0, 100)
    assert MB.mbarrier_arrive(ctx, 0, 0) == MB.token(0, 0)
    st = MB.lookup(ctx, 0, 0)
    assert (st.phase, st.pending, st.tx) == (0, 0, 100)
    MB.mbarrier_complete_tx(ctx, 0, 0, 100)
    assert (st.phase, st.pending, st.expected, st.tx) == (1, 2, 2, 0)


def test_a_deferred_complete_tx_reports_as_the_thread_that_issued_it():
    """A copy's complete-tx applied later (``defer_complete_tx``) names the thread whose copy it
    was: thread ``lane`` of the group given (a TMA load at once passes its issuing threads and
    each box's lane), not the group's first."""
    from jax_pyptx.interpret.launch import LaunchMemory, LaunchState, get_module, get_program
    from jax_pyptx.interpret.machine.group import Group
    from jax_pyptx.interpret.scheduler.context import Context
    text = kern("    mbarrier.init.shared.b64 [%r2], 2;\n")
    prog = get_program(get_module(text), "k")
    ctx = Context(prog, LaunchState((1, 1, 1), (32, 1, 1), (1, 1, 1), 0, LaunchMemory(prog), 1000), [0])
    MB.init(ctx, 0, 0, 2)
    g = Group(np.arange(4, 8), 0, ctx.N)
    MB.defer_complete_tx(ctx, 0, 0, MB.MAX_TX, None, g, 1)
    MB.defer_complete_tx(ctx, 0, 0, 8, None, g, 2)       # (past -MAX_TX: thread 6 reports)
    with pytest.raises(SanitizerError, match=r"tx-count -1048583 leaves the range -1048575\.\.1048575.* "
                                             r"by thread \(6,0,0\)"):
        MB.flush(ctx)


def test_wait_on_several_mbarriers_names_the_first_thread_of_an_uninitialized_one():
    """Threads 0-1 wait on an initialized mbarrier and already see its phase done, 2-3 on one
    never initialized: the report names the first thread that waits on the latter."""
    body = """
    mbarrier.init.shared.b64 [%r2], 4;
    mbarrier.arrive.shared.b64 %st1, [%r2];
    mov.u32 %r3, bar2;
    setp.ge.u32 %p2, %r1, 2;
    selp.u32 %r4, %r3, %r2, %p2;
    mbarrier.test_wait.parity.shared.b64 %p1, [%r4], 0;
"""
    with pytest.raises(UninitializedReadError) as e:
        run(body, block=4)
    assert "mbarrier at shared address 0x8 waited on before mbarrier.init" in str(e.value)
    assert "by thread (2,0,0) of CTA (0,0,0)" in str(e.value)
    # the same wait with both initialized: the parity form answers per mbarrier
    out = run(body.replace("    mov.u32 %r3, bar2;", "    mov.u32 %r3, bar2;\n"
                           "    mbarrier.init.shared.b64 [%r3], 1;")
              + "    selp.u64 %rd2, 1, 0, %p1;\n    mul.wide.u32 %rd3, %r1, 8;\n"
                "    add.u64 %rd3, %rd1, %rd3;\n    st.global.u64 [%rd3], %rd2;\n", block=4)
    assert out[:4].tolist() == [1, 1, 0, 0]


# a role waiting on its CTA's mbarrier: warp 1 of each of two CTAs (runs of slots, one CTA each),
# answered once a run (``mbarrier_ops._all_done``)
ROLE_WAIT = HDR + """
.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<4>;
    .shared .align 8 .b64 bar[2];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r2, 0;
    INIT_GUARD
    mov.u32 %r3, bar;
    @%p1 mbarrier.init.shared.b64 [%r3], 1;
    bar.sync 0;
    mul.lo.u32 %r4, %r2, OFFSET;
    add.u32 %r3, %r3, %r4;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra DONE;
    mbarrier.try_wait.parity.shared.b64 %p3, [%r3], PARITY;
    selp.u64 %rd2, 1, 2, %p3;
    mad.lo.u32 %r5, %r2, 32, %r1;
    mul.wide.u32 %rd3, %r5, 8;
    add.u64 %rd3, %rd1, %rd3;
    st.global.u64 [%rd3], %rd2;
DONE:
    ret;
}
"""


def _role_wait(monkeypatch, parity=1, guard="", offset=0):
    from jax_pyptx.interpret.ops import mbarrier_ops
    seen = []
    real = mbarrier_ops._all_done

    def counted(*a):
        ok = real(*a)
        seen.append(ok)
        return ok
    monkeypatch.setattr(mbarrier_ops, "_all_done", counted)
    text = ROLE_WAIT.replace("PARITY", str(parity)).replace("INIT_GUARD", guard).replace("OFFSET", str(offset))
    _ptxas_ok(text)
    out = np.zeros(96, np.uint64)
    launch(text, "k", [out], grid=2, block=64, timeout=10.0)
    return out, seen


def test_a_role_waiting_on_its_ctas_mbarrier_is_answered_once_a_run(monkeypatch):
    out, seen = _role_wait(monkeypatch)            # parity 1 of a fresh mbarrier: done
    assert seen == [True]
    assert out[32:96].tolist() == [1] * 64


def test_a_role_whose_phase_is_not_done_parks_as_before(monkeypatch):
    # parity 0 of a fresh mbarrier: not done; the threads park until nothing else can run, and
    # their try_wait's time limit expires (false), as thread by thread
    out, seen = _role_wait(monkeypatch, parity=0)
    assert seen[0] is False
    assert out[32:96].tolist() == [2] * 64


def test_a_role_waiting_with_operands_of_one_parity_is_answered_once_a_run(monkeypatch):
    # each thread's operand 2 * tid + 1: different values, every one of parity 1 (done)
    out, seen = _role_wait(monkeypatch, parity="%r6", guard="shl.b32 %r6, %r1, 1; or.b32 %r6, %r6, 1;")
    assert seen == [True]
    assert out[32:96].tolist() == [1] * 64


def test_a_role_waiting_with_operands_of_both_parities_parks_those_not_done(monkeypatch):
    # operand (tid + 1) & 1: the first waiting thread (tid 32) and every even one wait on parity
    # 1 (done), the odd ones on parity 0 (not done: they park, and their time limit expires)
    out, seen = _role_wait(monkeypatch, parity="%r6", guard="add.u32 %r6, %r1, 1; and.b32 %r6, %r6, 1;")
    assert seen[0] is False
    assert out[32:96].tolist() == [1, 2] * 32


@pytest.mark.parametrize("guard, offset, error, what", [
    ("and.pred %p1, %p1, %p2;", 0, UninitializedReadError, "waited on before mbarrier.init"),
    ("", 4, InterpreterError, "shared address 0x4 is not aligned to 8 bytes"),
    ("", 16, OutOfBoundsError, "shared address 0x10 is 8 bytes past the end of shared memory of this CTA "
                               "(16 bytes: 'bar' 16 bytes at 0x0)"),
])
def test_a_role_waiting_on_a_bad_mbarrier_names_the_first_thread_of_its_cta(monkeypatch, guard, offset,
                                                                           error, what):
    # CTA 1's mbarrier is not initialized, or its address is misaligned or past the end of
    # shared memory: the report names its first waiting thread, as a thread by thread wait does
    with pytest.raises(error) as e:
        _role_wait(monkeypatch, guard=guard, offset=offset)
    assert what in str(e.value) and "by thread (32,0,0) of CTA (1,0,0)" in str(e.value)


def test_a_few_threads_arrive_in_thread_order_across_phases():
    """Lane 0 of each of 8 warps arrives on a count-2 barrier in one instruction (a few threads:
    taken one at a time): four phases complete, each thread's token names the phase it arrived
    in and what it left pending; the barrier then waits in phase 4 with both arrivals pending."""
    body = """
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r2], 2;
    bar.sync 0;
    and.b32 %r3, %r1, 31;
    setp.eq.u32 %p2, %r3, 0;
    @!%p2 bra DONE;
    mbarrier.arrive.shared.b64 %st1, [%r2];
    shr.u32 %r4, %r1, 5;
    mul.wide.u32 %rd2, %r4, 8;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u64 [%rd3], %st1;
    @%p1 mbarrier.arrive.shared.b64 %st2, [%r2];
    @%p1 st.global.u64 [%rd1+64], %st2;
DONE:
"""
    out = run(body, n_out=9, block=256)
    w = np.arange(8)
    assert (out[:8] >> 32).tolist() == (w // 2).tolist()
    assert (out[:8] & 0xFFFFFFFF).tolist() == (1 - w % 2).tolist()
    assert [int(out[8]) >> 32, int(out[8]) & 0xFFFFFFFF] == [4, 1]


def test_a_completed_phase_wakes_the_groups_parked_on_it_that_the_scheduler_holds():
    # machine.mbarrier.wake: of the groups listed as parked on the mbarrier, those in
    # ctx.groups still waiting on it stop waiting; one the scheduler does not hold keeps
    # waiting and stays listed; one woken since, or parked on another mbarrier, is dropped:
    # what a scan of ctx.groups finds, over random lists
    from types import SimpleNamespace

    from jax_pyptx.interpret.machine.group import Group

    rng = np.random.default_rng(3)
    key, other = (1, 64), (0, 64)
    for trial in range(200):
        gs = [Group(np.arange(i, i + 1), 0, 16) for i in range(8)]
        listed, held = [], []
        for h in gs:
            kind = rng.integers(4)      # 0: waits on key, 1: on other, 2: woken, 3: not a waiter
            if kind == 0:
                h.wait = ("mbar", *key, 0, "try", 5)
            elif kind == 1:
                h.wait = ("mbar", *other, 0, "try", 5)
            if kind < 3:
                listed += [h] * int(rng.integers(1, 3))       # (parked on key once or twice)
            if rng.integers(4):
                held.append(h)
        ctx = SimpleNamespace(groups=held, mbar_waiters={key: listed} if listed else {})
        want = [h for h in held if h.wait is not None and h.wait[:3] == ("mbar", *key)]
        waiting = [h for h in gs if h.wait is not None and h.wait[:3] == ("mbar", *key) and h not in held]
        if key in ctx.mbar_waiters:
            MB.wake(ctx, key)
        assert all(h.wait is None for h in want)
        assert all(h.wait is not None and h.wait[:3] == ("mbar", *key) for h in waiting)
        assert all(h.wait is not None for h in gs if h.wait is not None and h.wait[1:3] == other)
        kept = ctx.mbar_waiters.get(key, [])
        assert sorted(id(h) for h in kept) == sorted(id(h) for h in waiting) and \
            len(kept) == len({id(h) for h in kept})
