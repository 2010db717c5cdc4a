"""Schedules (``interpret.schedule``): a kernel missing a wait computes right when asynchronous
work completes early ("eager", the default) and wrong when it completes at the last point the
ISA allows ("late") or at a random legal point ("random", reproducible from its seed); reports
name the schedule. The kernel library runs clean under every schedule."""
from __future__ import annotations

import numpy as np
import pytest

from examples import proof
from examples.library import entries
from jax_pyptx import configure, ptx_call
from jax_pyptx.errors import AsyncProxyError, PtxValueError, TensorMemoryError
from jax_pyptx.interpret import launch

# thread 0 copies 128 bytes of x into shared memory with a bulk copy counted on an mbarrier;
# every thread then (WAIT) reads its word and stores it to y
K = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y)
{
  .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>; .reg .b64 %st;
  .shared .align 128 .b8 buf[128];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [bar], 1;
  bar.sync 0;
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [bar], 128;
  @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 128, [bar];
WAIT
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.u32 %r3, %r3, %r2;
  ld.shared.u32 %r4, [%r3];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r4;
  ret;
}"""
WAIT = """L:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
  @!%p2 bra L;"""
X = np.arange(32, dtype=np.uint32) + 100


def run(wait, **kw):
    y = np.zeros(32, np.uint32)
    launch(K.replace("WAIT", wait), "k", [X, y], block=32, **kw)
    return y


@pytest.mark.parametrize("schedule,seed", [("eager", None), ("late", None), ("random", 0), ("random", 1)])
def test_the_fixed_kernel_runs_clean_under_every_schedule(schedule, seed):
    np.testing.assert_array_equal(run(WAIT, schedule=schedule, seed=seed), X)


def test_a_missing_wait_is_missed_eagerly_and_caught_late():
    np.testing.assert_array_equal(run("", sanitize=False), X)                   # eager: right by luck
    assert not (run("", sanitize=False, schedule="late") == X).any()           # late: the copy has not landed
    with pytest.raises(AsyncProxyError) as ei:
        run("", schedule="late")
    msg = str(ei.value)
    assert msg.startswith("<ptx>:21: the load reads shared address 0x0 'buf' (+0) that `@%p1 cp.async.bulk")
    assert msg.endswith("[under schedule='late': replay with these arguments]")


def test_a_wait_on_the_wrong_parity_is_caught_late():
    """A wait that the phase's parity already satisfies returns at once; under "late" it does not
    pull the copy in, so the read sees shared memory the copy has not written yet."""
    wrong = WAIT.replace("], 0;", "], 1;")
    with pytest.raises(AsyncProxyError, match=r"the load reads shared address 0x0 'buf' \(\+0\) that "):
        run(wrong, schedule="late")
    assert not (run(wrong, sanitize=False, schedule="late") == X).any()


def test_random_is_reproducible_and_names_its_seed():
    got = {s: tuple(run("", sanitize=False, schedule="random", seed=s)) for s in range(6)}
    assert {v == tuple(X) for v in got.values()} == {True, False}           # some seeds land early, some late
    assert all(tuple(run("", sanitize=False, schedule="random", seed=s)) == v for s, v in got.items())
    bad = next(s for s, v in got.items() if v != tuple(X))
    with pytest.raises(AsyncProxyError, match=rf"\[under schedule='random', seed={bad}: replay with these "
                                               rf"arguments\]$"):
        run("", schedule="random", seed=bad)


@pytest.mark.parametrize("kw,msg", [
    (dict(schedule="lazy"), "schedule='lazy' is not a schedule: use 'eager' (asynchronous work completes as "
                            "early as allowed), 'late' (as late as allowed) or 'random' (either, and warps in "
                            "random order, from seed=)"),
    (dict(schedule="random", seed=-1), "seed=-1 is not a seed: give a non-negative int"),
    (dict(schedule="late", seed=3), "seed=3 is only used with schedule='random' (schedule='late')"),
])
def test_schedule_arguments_are_checked(kw, msg):
    with pytest.raises(PtxValueError) as ei:
        run(WAIT, **kw)
    assert str(ei.value) == msg


# the asynchronous kernels of the library (TMA, mbarrier pipelines, wgmma, tcgen05, cp.async)
ASYNC = [e for e in entries() if e.name in ("ampere/gemm-bf16", "hopper/gemm-bf16", "hopper/attention-bf16",
                                             "blackwell/gemm-bf16", "blackwell/gemm_2sm-bf16")]


@pytest.mark.parametrize("schedule,seed", [("late", None)] + [("random", s) for s in range(5)])
@pytest.mark.parametrize("entry", ASYNC, ids=[e.name for e in ASYNC])
def test_the_async_library_kernels_run_clean_under_every_schedule(entry, schedule, seed):
    case = entry.cases[0]
    r = proof.run_case(entry, case, schedule=schedule, seed=seed)
    assert r.ok, f"{entry.name} {case.label} under {schedule} {seed}: {r.excess:.2f}x the allowed error"


LIB = entries()


@pytest.mark.parametrize("i", range(len(LIB)), ids=[e.name for e in LIB])
def test_the_whole_library_runs_clean_late_and_at_a_random_seed(i):
    """Every kernel under "late" and under one of 5 seeds (kernel i gets seed i % 5)."""
    entry = LIB[i]
    case = entry.cases[0]
    for schedule, seed in (("late", None), ("random", i % 5)):
        r = proof.run_case(entry, case, schedule=schedule, seed=seed)
        assert r.ok, f"{entry.name} {case.label} under {schedule} {seed}: {r.excess:.2f}x the allowed error"


def test_the_jax_path_takes_the_schedule_from_configure():
    entry = next(e for e in entries() if e.name == "hopper/gemm-bf16")
    k = entry.kernel()
    with pytest.raises(PtxValueError, match="seed=2 is only used with schedule='random'"):
        configure(k, schedule="late", seed=2)
    configure(k, schedule="random", seed=2)
    inputs = proof.make_inputs(entry, k, entry.cases[0].shape, seed=1)
    out = np.asarray(ptx_call(k, interpret=True)(*inputs))
    np.testing.assert_array_equal(out, k.interpret(*inputs))


def test_a_wgmma_operand_overwritten_before_its_wait_is_caught_late():
    """The stage a wgmma reads is refilled before the wait_group that retires it: right when
    the wgmma reads at issue (eager), wrong when it reads at its wait (late): on hardware the
    tensor core may still be reading."""
    from .mma_util import acc_matrix, rand, run_wgmma, wgmma_kernel
    from .test_interp_wgmma import kmajor_image, mma_line, ref_mma

    rng = np.random.default_rng(7)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    line = mma_line(8, "f32", "f16", "f16", scale_d="0")
    early, wait = line.rsplit("\n", 1)
    refill = ("\n  mov.u32 %r5, sm;\n  mul.lo.u32 %r6, %r1, 16;\n  add.u32 %r5, %r5, %r6;\n"
              "  mov.b32 %v0, 0;\n  st.shared.v4.b32 [%r5], {%v0, %v0, %v0, %v0};\n")  # A's 2048 bytes
    bad = wgmma_kernel(early + refill + wait, 4)
    good = wgmma_kernel(line + refill, 4)
    want = ref_mma(A, B, "f16")
    for ptx_text in (good, bad):
        np.testing.assert_allclose(acc_matrix(run_wgmma(ptx_text, img, 4, da, db, sanitize=False), 8), want,
                                   rtol=1e-6)                                 # eager: right
    np.testing.assert_allclose(acc_matrix(run_wgmma(good, img, 4, da, db, schedule="late"), 8), want, rtol=1e-6)
    assert not np.allclose(acc_matrix(run_wgmma(bad, img, 4, da, db, sanitize=False, schedule="late"), 8),
                           want)                                                # late: the refill is read
    with pytest.raises(AsyncProxyError, match=r"wgmma.*\[under schedule='late': replay with these arguments\]$"):
        run_wgmma(bad, img, 4, da, db, schedule="late")


def test_a_tcgen05_accumulator_read_without_waiting_is_caught_late():
    """Every warp reads D with tcgen05.ld without waiting on the mbarrier the commit arrives
    on: right when the mma runs at issue (eager); late, it runs when its commit arrives, which
    nothing waits for: after the kernel read D and deallocated the columns."""
    from .mma_util import idesc, run_tc, tc_kernel
    from .test_interp_tcgen05 import MMA, d_matrix, mma_image, rand, ref

    rng = np.random.default_rng(20)
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, 32), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    good = tc_kernel(issue=MMA.format(kind="f16", en=0))
    bad = good.replace("WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;\n  @!%p3 bra WAIT;\n",
                       "WAIT:\n")
    assert bad != good
    want = ref(A, B, "f16")
    args = (da, db, idesc("f16", 128, 32, "f32", "f16", "f16"))
    for schedule in ("eager", "late"):
        got = d_matrix(run_tc(good, img, *args, schedule=schedule), 128, 32)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(d_matrix(run_tc(bad, img, *args), 128, 32), want, rtol=1e-6, atol=1e-5)
    # late: the mma, still in flight when the kernel deallocates its columns, lands after that
    with pytest.raises(TensorMemoryError, match=r"tcgen05.mma.* uses TMEM column 0 after it was deallocated .*"
                                                r"\[under schedule='late': replay with these arguments\]$"):
        run_tc(bad, img, *args, schedule="late")


def test_a_tcgen05_st_read_back_before_its_wait_st_is_caught_late():
    """A warp stores a TMEM cell and loads it back with no tcgen05.wait::st between: it sees
    its store when the store lands at issue (eager), not when it lands at its wait (late)."""
    from jax_pyptx.errors import UninitializedReadError

    from .mma_util import run_tc, tc_kernel

    pre = ("  mov.b32 %d0, 7;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r7], {%d0};\n"
           "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%d1}, [%r7];\n  tcgen05.wait::ld.sync.aligned;\n"
           "  st.global.u32 [%aux], %d1;")
    ptx_text = tc_kernel(pre=pre, dump=32)
    for schedule, sanitize, want in (("eager", True, 7), ("late", False, 0)):
        aux = np.zeros(16, np.uint32)
        run_tc(ptx_text, dump=32, aux=aux, schedule=schedule, sanitize=sanitize)
        assert aux[0] == want, (schedule, aux[0])
    with pytest.raises(UninitializedReadError, match=r"tcgen05.ld.* reads TMEM lane 0 column 0, which no .*"
                                                     r"\[under schedule='late': replay with these arguments\]$"):
        run_tc(ptx_text, dump=32, schedule="late")
    fixed = tc_kernel(pre=pre.replace("  tcgen05.ld.", "  tcgen05.wait::st.sync.aligned;\n  tcgen05.ld."), dump=32)
    aux = np.zeros(16, np.uint32)
    run_tc(fixed, dump=32, aux=aux, schedule="late")
    assert aux[0] == 7


def test_an_st_async_destination_read_without_waiting_is_caught_late():
    """Each CTA st.asyncs into its right neighbour, which reads the words without waiting on
    the mbarrier that counts them: right when the stores land at issue (eager), stale when they
    land as a wait needs the phase (late)."""
    from .test_interp_cluster_async import ST_ASYNC, WAIT, entry, store_words

    store = "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8], %r10, [%r9];"
    body = (ST_ASYNC.replace("STORE", store).replace("BYTES", "128").replace("SHIFT", "4")
            .replace("barrier.cluster.arrive.relaxed.aligned;", "barrier.cluster.arrive.aligned;"))
    init = ("    mov.u32 %r20, buf;\n    shl.b32 %r21, %r1, 4;\n    add.u32 %r20, %r20, %r21;\n"
            "    st.shared.v4.u32 [%r20], {%r3, %r3, %r3, %r3};\n")

    def run_it(wait, **kw):
        prog = entry(init + body.replace("WAIT_FOR_DATA", wait) + store_words(["%r14"]),
                     decls=".shared .align 16 .b32 buf[128];")
        y = np.zeros((4, 32), np.uint32)
        launch(prog, "k", [y], grid=4, block=32, cluster=4, **kw)
        return y

    want = np.array([[((c - 1) % 4) * 1000 + t for t in range(32)] for c in range(4)], np.uint32)
    np.testing.assert_array_equal(run_it(WAIT, schedule="late"), want)          # fixed: right late too
    np.testing.assert_array_equal(run_it("", sanitize=False), want)              # eager: right by luck
    assert (run_it("", sanitize=False, schedule="late") == 4).all()               # late: not landed yet


def test_a_bulk_store_source_overwritten_before_its_wait_is_caught_late():
    """Thread 0 stores a shared buffer to global memory with a bulk copy; every thread then
    overwrites the buffer before cp.async.bulk.wait_group.read: the copy still reads it on a
    GPU. Eagerly the copy read it at issue; late, it reads at the wait."""
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y)
{
  .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>;
  .shared .align 128 .b8 buf[128];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, buf;
  add.u32 %r4, %r4, %r3;
  st.shared.u32 [%r4], %r2;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [buf], 128;
  @%p1 cp.async.bulk.commit_group;
  bar.sync 0;
  st.shared.u32 [%r4], 0;
  @%p1 cp.async.bulk.wait_group.read 0;
  ret;
}"""

    def run_it(**kw):
        y = np.zeros(32, np.uint32)
        launch(text, "k", [X, y], block=32, **kw)
        return y

    np.testing.assert_array_equal(run_it(sanitize=False), X)                    # eager: read at issue
    assert not run_it(sanitize=False, schedule="late").any()                     # late: reads the zeros
    with pytest.raises(AsyncProxyError, match=r"\[under schedule='late': replay with these arguments\]$"):
        run_it(schedule="late")


def test_a_late_wgmma_of_warpgroups_at_different_groups_completes_at_the_first_wait_retiring_it():
    """One late wgmma issued by a merged group whose warpgroups had different groups open
    (slots 0-1 in group 1, slots 2-3 in group 0): the wait_group 0 of the second warpgroup
    alone (its group 0 retired) completes it, before that warpgroup may refill the operands.
    Comparing the operation's largest tag with the waiters' largest limit left it pending, so
    its read came after that warpgroup's wait (a false "still writing" report under
    schedule="late")."""
    from types import SimpleNamespace

    from jax_pyptx.interpret.ops.wgmma import WgmmaState

    ctx = SimpleNamespace(N=4)
    st = WgmmaState.__new__(WgmmaState)
    done = []
    st.deferred = [(np.array([1, 1, 0, 0]), np.arange(4), lambda c: done.append("mma"))]
    st.run_deferred(ctx, np.array([0, 1]), np.array([0, 0]))      # first warpgroup: group 0 only
    assert done == [] and len(st.deferred) == 1
    st.run_deferred(ctx, np.array([2, 3]), np.array([0, 0]))      # second: its group 0 retires
    assert done == ["mma"] and st.deferred == []
    st.deferred = [(np.array([2, 2]), np.array([2, 3]), lambda c: done.append("other"))]
    st.run_deferred(ctx, np.array([0, 1]), np.array([5, 5]))      # not its slots
    assert done == ["mma"] and len(st.deferred) == 1
