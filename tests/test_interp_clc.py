"""clusterlaunchcontrol (sm_100): try_cancel cancels a cluster that has not started yet (the
interpreter starts clusters batch by batch, so a persistent kernel steals the clusters of
later batches), query_cancel decodes the response; with .multicast::cluster::all the response
reaches every CTA of the cluster. Errors: get_first_ctaid of a failed request, a try_cancel
after a CTA observed a failure, a misaligned response buffer, a register that is not a
response."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError, InterpreterError
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

LAUNCH = sys.modules["jax_pyptx.interpret.launch"]
HDR = ".version 8.6\n.target sm_100a\n.address_size 64\n"

# every CTA works on the tile of its ctaid, then steals tiles by cancelling clusters that have
# not started: out[tile, i] += 100 * tile + i (a reduction: a tile done twice shows), who[tile]
# = the CTA that did it
PERSISTENT = HDR + """
.visible .entry k(.param .u64 out, .param .u64 who)
{
    .reg .u32 %r<20>; .reg .u64 %rd<10>; .reg .pred %p<5>; .reg .b64 %st; .reg .b128 %resp;
    .shared .align 16 .b8 resp[16];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [who];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, resp;
    mov.u32 %r4, bar;
    mov.u32 %r5, 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r4], 1;
    bar.sync 0;
LOOP:
    mad.lo.u32 %r6, %r2, 32, %r1;
    mul.wide.u32 %rd3, %r6, 4;
    add.u64 %rd4, %rd1, %rd3;
    mad.lo.u32 %r7, %r2, 100, %r1;
    red.global.add.u32 [%rd4], %r7;
    mul.wide.u32 %rd5, %r2, 4;
    add.u64 %rd6, %rd2, %rd5;
    mov.u32 %r8, %ctaid.x;
    @%p1 st.global.u32 [%rd6], %r8;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r4], 16;
    @%p1 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r3], [%r4];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;
    @!%p2 bra WAIT;
    xor.b32 %r5, %r5, 1;
    ld.shared.b128 %resp, [%r3];
    clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p3, %resp;
    @!%p3 bra DONE;
    clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r2, %resp;
    bar.sync 0;
    bra LOOP;
DONE:
    ret;
}
"""


def _line(text, needle):
    return next(i + 1 for i, t in enumerate(text.splitlines()) if needle in t)


def run(text, grid, batch_slots, cluster=None, block=32):
    out = np.zeros((grid, 32), np.uint32)
    who = np.full(grid, 99, np.uint32)
    st = {}
    old = LAUNCH.MAX_BATCH_SLOTS
    LAUNCH.MAX_BATCH_SLOTS = batch_slots
    try:
        launch(text, "k", [out, who], grid=grid, block=block, cluster=cluster, stats=st)
    finally:
        LAUNCH.MAX_BATCH_SLOTS = old
    return out, who, st


WANT = np.arange(8)[:, None] * 100 + np.arange(32)


def test_ptxas_accepts_the_kernels():
    ptxas_check(PERSISTENT, "sm_100a")
    ptxas_check(MULTICAST, "sm_100a")


def test_every_cluster_started_so_every_request_fails():
    out, who, st = run(PERSISTENT, 8, 1 << 14)          # the whole grid is one batch
    np.testing.assert_array_equal(out, WANT)
    np.testing.assert_array_equal(who, np.arange(8))
    assert st["ctas"] == 8 and st["batches"] == 1


def test_two_ctas_steal_the_six_that_never_start():
    out, who, st = run(PERSISTENT, 8, 64)               # batches of 2 CTAs: 0 and 1 start
    np.testing.assert_array_equal(out, WANT)            # each tile exactly once
    # CTA 0 requests first (thread order of the batch), and they alternate: 2->0, 3->1, ...
    np.testing.assert_array_equal(who, [0, 1, 0, 1, 0, 1, 0, 1])
    assert st["ctas"] == 2 and st["batches"] == 1


MULTICAST = HDR + """
.visible .entry k(.param .u64 out, .param .u64 who)
{
    .reg .u32 %r<20>; .reg .u64 %rd<10>; .reg .pred %p<5>; .reg .b64 %st; .reg .b128 %resp;
    .shared .align 16 .b8 resp[16];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [who];
    mov.u32 %r1, %tid.x;
    mov.u32 %r9, %cluster_ctarank;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, resp;
    mov.u32 %r4, bar;
    mov.u32 %r5, 0;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p4, %r9, 0;
    and.pred %p4, %p4, %p1;
    @%p1 mbarrier.init.shared::cta.b64 [%r4], 1;
    fence.mbarrier_init.release.cluster;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
LOOP:
    mad.lo.u32 %r6, %r2, 32, %r1;
    mul.wide.u32 %rd3, %r6, 4;
    add.u64 %rd4, %rd1, %rd3;
    mad.lo.u32 %r7, %r2, 100, %r1;
    red.global.add.u32 [%rd4], %r7;
    mul.wide.u32 %rd5, %r2, 4;
    add.u64 %rd6, %rd2, %rd5;
    mov.u32 %r8, %ctaid.x;
    @%p1 st.global.u32 [%rd6], %r8;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r4], 16;
    @%p4 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [%r3], [%r4];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;
    @!%p2 bra WAIT;
    xor.b32 %r5, %r5, 1;
    ld.shared.b128 %resp, [%r3];
    clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p3, %resp;
    @!%p3 bra DONE;
    clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r10, %r11, %r12, _}, %resp;
    add.u32 %r2, %r10, %r9;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    bra LOOP;
DONE:
    ret;
}
"""


def test_multicast_response_reaches_every_cta_of_the_cluster():
    # clusters of 2, one cluster per batch: cluster 0 (CTAs 0, 1) cancels clusters 1, 2, 3 and
    # each CTA takes the tile of its rank in the cancelled cluster
    out, who, st = run(MULTICAST, 8, 64, cluster=(2, 1, 1))
    np.testing.assert_array_equal(out, WANT)
    np.testing.assert_array_equal(who, [0, 1] * 4)
    assert st["ctas"] == 2


def test_get_first_ctaid_of_a_failed_request():
    bad = PERSISTENT.replace("    @!%p3 bra DONE;\n", "")
    ptxas_check(bad, "sm_100a")
    with pytest.raises(InterpreterError) as e:
        run(bad, 2, 1 << 14)
    line = _line(bad, "get_first_ctaid::x")
    assert str(e.value) == (
        f"<ptx>:{line}: clusterlaunchcontrol.query_cancel.get_first_ctaid of a request that failed (no "
        f"cluster was cancelled): the ISA leaves the result undefined; test is_canceled first: "
        f"clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r2, %resp; by thread (0,0,0) of "
        f"CTA (0,0,0) [instruction #26 of k]")


def test_try_cancel_after_an_observed_failure():
    bad = PERSISTENT.replace("@!%p3 bra DONE;", "@!%p3 bra LOOP;")
    ptxas_check(bad, "sm_100a")
    with pytest.raises(InterpreterError) as e:
        run(bad, 1, 1 << 14)
    line = _line(bad, "clusterlaunchcontrol.try_cancel")
    assert str(e.value).startswith(
        f"<ptx>:{line}: clusterlaunchcontrol.try_cancel issued by a CTA that has observed a failed request "
        f"(query_cancel.is_canceled was false); the ISA leaves that undefined: stop requesting once a "
        f"request fails: ")


def test_misaligned_response_and_a_register_that_is_no_response():
    bad = PERSISTENT.replace("[%r3], [%r4];", "[%r3+8], [%r4];")
    with pytest.raises(InterpreterError) as e:
        run(bad, 1, 1 << 14)
    assert "clusterlaunchcontrol.try_cancel: the response at shared address 0x8 is not 16-byte aligned" \
        in str(e.value)
    bad = PERSISTENT.replace("ld.shared.b128 %resp, [%r3];", "mov.b128 %resp, {%rd1, %rd2};")
    ptxas_check(bad, "sm_100a")
    with pytest.raises(InterpreterError) as e:
        run(bad, 1, 1 << 14)
    assert "is not a response written by clusterlaunchcontrol.try_cancel" in str(e.value)


def test_response_read_before_the_mbarrier_completes():
    bad = PERSISTENT.replace("""WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;
    @!%p2 bra WAIT;
    xor.b32 %r5, %r5, 1;
    ld.shared.b128 %resp, [%r3];""", """    ld.shared.b128 %resp, [%r3];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r5;
    @!%p2 bra WAIT;
    xor.b32 %r5, %r5, 1;""")
    ptxas_check(bad, "sm_100a")
    with pytest.raises(AsyncProxyError) as e:
        run(bad, 2, 1 << 14)
    line = _line(bad, "ld.shared.b128 %resp")
    assert str(e.value).startswith(
        f"<ptx>:{line}: the load reads shared address 0x0 'resp' (+0) of CTA (0,0,0) that "
        f"`@%p1 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r3], "
        f"[%r4];` (<ptx>:{line - 1} (instruction #20 of k)) is still writing: its mbarrier at shared 0x10")
