"""Thread-block clusters in the interpreter: the cluster special registers, cluster launch
shapes, distributed shared memory (ld / st / atom / red on .shared::cluster through mapa,
generic addresses, getctarank) in 2- and 4-CTA clusters, barrier.cluster phases, and the
sanitizer's cluster rules (each planted bug reported with its PTX line, the fixed kernel clean)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import (
    DeadlockError, DivergenceError, InterpreterError, OutOfBoundsError, RaceError,
)
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def entry(body, params=".param .u64 y", decls="", directives=""):
    return HDR + f""".visible .entry k({params}){directives}
{{
    .reg .u32 %r<24>; .reg .u64 %rd<8>; .reg .pred %p<4>; .reg .b64 %st;
    {decls}
{body}
    ret;
}}"""


# global index of the thread (ctaid.x * ntid.x + tid.x) -> &y[idx * 4 bytes * W]
def store_words(regs):
    n = len(regs)
    return f"""
    mov.u32 %r20, %ctaid.x; mov.u32 %r21, %ntid.x; mov.u32 %r22, %tid.x;
    mad.lo.u32 %r20, %r20, %r21, %r22;
    ld.param.u64 %rd6, [y];
    mul.wide.u32 %rd7, %r20, {4 * n};
    add.u64 %rd6, %rd6, %rd7;
""" + "".join(f"    st.global.u32 [%rd6+{4 * i}], {r};\n" for i, r in enumerate(regs))


# ----------------------------------------------------------------------------- special registers
def test_cluster_special_registers_of_a_2x2_cluster():
    body = """
    mov.u32 %r1, %cluster_ctarank;  mov.u32 %r2, %cluster_nctarank;
    mov.u32 %r3, %cluster_ctaid.x;  mov.u32 %r4, %cluster_ctaid.y;
    mov.u32 %r5, %clusterid.x;      mov.u32 %r6, %clusterid.y;
    mov.u32 %r7, %nclusterid.x;     mov.u32 %r8, %nclusterid.y;
    mov.u32 %r9, %cluster_nctaid.x; mov.u32 %r10, %cluster_nctaid.y;
    mov.pred %p1, %is_explicit_cluster; selp.u32 %r11, 1, 0, %p1;
    mov.u32 %r12, %ctaid.x; mov.u32 %r13, %ctaid.y; mov.u32 %r14, %nctaid.x;
    mad.lo.u32 %r15, %r13, %r14, %r12;
    ld.param.u64 %rd6, [y];
    mul.wide.u32 %rd7, %r15, 44;
    add.u64 %rd6, %rd6, %rd7;
""" + "".join(f"    st.global.u32 [%rd6+{4 * i}], %r{i + 1};\n" for i in range(11))
    prog = entry(body)
    y = np.zeros((2, 4, 11), np.uint32)
    launch(prog, "k", [y], grid=(4, 2), block=1, cluster=(2, 2))
    for cy in range(2):
        for cx in range(4):
            assert y[cy, cx].tolist() == [
                (cx % 2) + 2 * (cy % 2), 4,        # rank, nctarank
                cx % 2, cy % 2,                    # cluster_ctaid
                cx // 2, cy // 2,                  # clusterid
                2, 1,                              # nclusterid
                2, 2,                              # cluster_nctaid
                1]                                 # is_explicit_cluster
    launch(prog, "k", [y], grid=(4, 2), block=1)
    assert y[1, 3].tolist() == [0, 1, 0, 0, 3, 1, 4, 2, 1, 1, 0]
    ptxas_check(prog, "sm_90a")


@pytest.mark.parametrize("grid", [(4, 2, 2), (8, 6, 4)])      # a batch of 16 CTAs, of 192
def test_cluster_ctarank_of_a_3d_grid_in_2x2x2_clusters(grid):
    # the special register, and the rank getctarank gives a CTA's own shared::cta address
    # (the batch's per-CTA ranks, ``LaunchState.cluster_rank``)
    body = """
    mov.u32 %r2, buf;
    getctarank.shared::cluster.u32 %r3, %r2;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r12, %ctaid.x; mov.u32 %r13, %ctaid.y; mov.u32 %r14, %ctaid.z;
    mov.u32 %r15, %nctaid.x; mov.u32 %r16, %nctaid.y;
    mad.lo.u32 %r17, %r14, %r16, %r13;
    mad.lo.u32 %r17, %r17, %r15, %r12;
    ld.param.u64 %rd6, [y];
    mul.wide.u32 %rd7, %r17, 8;
    add.u64 %rd6, %rd6, %rd7;
    st.global.u32 [%rd6], %r1;
    st.global.u32 [%rd6+4], %r3;
"""
    gx, gy, gz = grid
    y = np.zeros((gz, gy, gx, 2), np.uint32)
    prog = entry(body, decls=".shared .align 4 .b32 buf[4];")
    launch(prog, "k", [y], grid=grid, block=1, cluster=(2, 2, 2))
    z, yy, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    rank = x % 2 + 2 * (yy % 2 + 2 * (z % 2))
    np.testing.assert_array_equal(y[..., 0], rank)
    np.testing.assert_array_equal(y[..., 1], rank)
    ptxas_check(prog, "sm_90a")


def test_cluster_shape_from_directives_and_launch_checks():
    body = "    mov.u32 %r1, %cluster_nctarank; mov.u32 %r2, %cluster_ctarank;\n" + store_words(["%r1", "%r2"])
    prog = entry(body, directives=" .explicitcluster .reqnctapercluster 4, 1, 1")
    y = np.zeros((8, 2), np.uint32)
    launch(prog, "k", [y], grid=8)                                 # the kernel's own cluster shape
    assert y.tolist() == [[4, r % 4] for r in range(8)]
    with pytest.raises(InterpreterError, match=r"declares .reqnctapercluster 4, 1, 1 but the launch gives "
                                               r"cluster=\(2, 1, 1\); launch it with cluster=\(4, 1, 1\)"):
        launch(prog, "k", [y], grid=8, cluster=2)
    with pytest.raises(InterpreterError, match=r"grid \(6, 1, 1\) is not a multiple of the cluster shape \(4, 1, 1\)"):
        launch(prog, "k", [y], grid=6)
    free = entry(body)
    with pytest.raises(InterpreterError, match=r"cluster=\(32, 1, 1\) has 32 CTAs; a cluster has at most 16 CTAs "
                                               r"\(8 portably\)"):
        launch(free, "k", [np.zeros((32, 2), np.uint32)], grid=32, cluster=32)
    capped = entry(body, directives=" .maxclusterrank 2")
    with pytest.raises(InterpreterError, match=r"has 4 CTAs but the kernel declares .maxclusterrank 2"):
        launch(capped, "k", [y], grid=8, cluster=4)
    explicit = entry(body, directives=" .explicitcluster")
    with pytest.raises(InterpreterError, match="declares .explicitcluster but the launch gives no cluster shape"):
        launch(explicit, "k", [y], grid=8)
    launch(explicit, "k", [y], grid=8, cluster=2)
    assert y[:, 0].tolist() == [2] * 8
    ptxas_check(prog, "sm_90a")


# ----------------------------------------------------------------------------- distributed shared memory
RING = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %cluster_nctarank;
    add.u32 %r4, %r2, 1;
    rem.u32 %r4, %r4, %r3;                    // right neighbour
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.u32 %r5, %r5, %r6;                    // &buf[tid] (shared::cta)
    barrier.cluster.arrive.aligned;           // every CTA started (its shared memory exists)
    barrier.cluster.wait.aligned;
    mapa.shared::cluster.u32 %r7, %r5, %r4;   // &buf[tid] in the right neighbour
    mad.lo.u32 %r8, %r2, 1000, %r1;
    st.shared::cluster.u32 [%r7], %r8;        // remote store
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    ld.shared.u32 %r9, [%r5];                 // what the left neighbour stored here
    ld.shared::cluster.u32 %r10, [%r7];       // remote load: what this CTA stored there
    barrier.cluster.arrive.aligned;           // nobody exits while others may read its memory
    barrier.cluster.wait.aligned;
"""


@pytest.mark.parametrize("csize", [2, 4])
def test_dsmem_store_and_load_around_a_ring_of_ctas(csize):
    prog = entry(RING + store_words(["%r9", "%r10"]), decls=".shared .align 4 .b32 buf[64];")
    y = np.zeros((2 * csize, 64, 2), np.uint32)
    launch(prog, "k", [y], grid=2 * csize, block=64, cluster=csize)
    for cta in range(2 * csize):
        r = cta % csize
        left = (r - 1) % csize
        assert y[cta, :, 0].tolist() == [left * 1000 + t for t in range(64)]
        assert y[cta, :, 1].tolist() == [r * 1000 + t for t in range(64)]
    ptxas_check(prog, "sm_90a")


def test_dsmem_atomics_and_reductions_on_rank0():
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.v2.u32 [cnt], {%r1, %r1};  // cnt = {0, 0} in every CTA
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    mov.u32 %r3, cnt;
    mapa.shared::cluster.u32 %r4, %r3, 0;
    add.u32 %r5, %r2, 1;
    atom.shared::cluster.add.u32 %r6, [%r4], %r5;     // returns the running sum before it
    red.shared::cluster.max.u32 [%r4+4], %r1;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    ld.shared.v2.u32 {%r7, %r8}, [cnt];
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
""" + store_words(["%r6", "%r7", "%r8"])
    prog = entry(body, decls=".shared .align 8 .b32 cnt[2];")
    y = np.zeros((8, 32, 3), np.uint32)
    launch(prog, "k", [y], grid=8, block=32, cluster=4)
    for cl in range(2):
        c = y[4 * cl:4 * cl + 4]
        # rank 0 CTA holds the sum of (rank+1) over 32 threads x 4 CTAs and the max tid
        assert c[0, 0, 1] == 32 * (1 + 2 + 3 + 4) and c[0, 0, 2] == 31
        assert (c[1:, :, 1] == 0).all() and (c[1:, :, 2] == 0).all()
        # the old values are the partial sums of a sequential order: all distinct, from 0
        olds = np.sort(c[:, :, 0].reshape(-1))
        incs = np.sort(np.repeat(np.arange(1, 5), 32))
        assert olds[0] == 0 and len(set(olds.tolist())) == 128 and olds[-1] + 1 <= incs.sum()
    ptxas_check(prog, "sm_90a")


def test_dsmem_through_generic_addresses_and_getctarank():
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    cvta.shared.u64 %rd1, buf;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;                 // generic &buf[tid]
    mad.lo.u32 %r3, %r2, 100, %r1;
    st.u32 [%rd1], %r3;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    xor.b32 %r4, %r2, 1;
    mapa.u64 %rd3, %rd1, %r4;                 // generic address in the peer
    ld.u32 %r5, [%rd3];
    getctarank.u64 %r6, %rd3;
    getctarank.u64 %r7, %rd1;
    mov.u32 %r8, buf;
    mapa.shared::cluster.u32 %r9, %r8, %r4;
    getctarank.shared::cluster.u32 %r10, %r9;
    isspacep.shared::cta %p1, %rd3;       // the peer's memory is not in this CTA's window
    isspacep.shared::cluster %p2, %rd3;
    selp.u32 %r11, 1, 0, %p1; selp.u32 %r12, 1, 0, %p2;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
""" + store_words(["%r5", "%r6", "%r7", "%r10", "%r11", "%r12"])
    prog = entry(body, decls=".shared .align 4 .b32 buf[32];")
    y = np.zeros((4, 32, 6), np.uint32)
    launch(prog, "k", [y], grid=4, block=32, cluster=2)
    for cta in range(4):
        r = cta % 2
        peer = r ^ 1
        assert y[cta, :, 0].tolist() == [peer * 100 + t for t in range(32)]
        assert (y[cta, :, 1] == peer).all() and (y[cta, :, 2] == r).all() and (y[cta, :, 3] == peer).all()
        assert (y[cta, :, 4] == 0).all() and (y[cta, :, 5] == 1).all()
    ptxas_check(prog, "sm_90a")


# ----------------------------------------------------------------------------- barrier.cluster
def test_cluster_barrier_split_arrive_wait_orders_phases():
    """Each CTA increments a counter in rank 0 once per phase; after every wait, rank 0's
    counter holds exactly phase * csize: no CTA runs ahead of a phase. Warps of one CTA arrive
    at different times (warp 1 does extra work between arrive and wait)."""
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.u32 [cnt], 0;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    mov.u32 %r3, cnt;
    mapa.shared::cluster.u32 %r4, %r3, 0;
    mov.u32 %r10, 0;                          // phase
    mov.u32 %r11, 0;                          // failures
LOOP:
    @%p1 red.shared::cluster.add.u32 [%r4], 1;
    barrier.cluster.arrive.release.aligned;
    setp.lt.u32 %p2, %r1, 32;
    @%p2 bra WAIT;
    mov.u32 %r12, 0;
SPIN:                                         // warp 1: busy work between arrive and wait
    add.u32 %r12, %r12, 1;
    setp.lt.u32 %p3, %r12, 20;
    @%p3 bra SPIN;
WAIT:
    barrier.cluster.wait.acquire.aligned;
    add.u32 %r10, %r10, 1;
    ld.shared::cluster.u32 %r13, [%r4];
    mul.lo.u32 %r14, %r10, 4;
    setp.ne.u32 %p3, %r13, %r14;
    @%p3 add.u32 %r11, %r11, 1;
    barrier.cluster.arrive.aligned;           // everyone read before the next increments
    barrier.cluster.wait.aligned;
    setp.lt.u32 %p3, %r10, 5;
    @%p3 bra LOOP;
""" + store_words(["%r10", "%r11"])
    prog = entry(body, decls=".shared .align 4 .b32 cnt;")
    y = np.zeros((8, 64, 2), np.uint32)
    launch(prog, "k", [y], grid=8, block=64, cluster=4)
    assert (y[..., 0] == 5).all() and (y[..., 1] == 0).all()
    ptxas_check(prog, "sm_90a")


def test_exited_threads_do_not_hold_the_cluster_barrier():
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p1, %r2, 1;
    setp.ge.u32 %p2, %r1, 32;
    and.pred %p1, %p1, %p2;
    @%p1 exit;                                // warp 1 of rank 1 leaves early
    barrier.cluster.arrive;
    barrier.cluster.wait;
    mov.u32 %r3, 7;
""" + store_words(["%r3"])
    prog = entry(body)
    y = np.zeros((2, 64), np.uint32)
    launch(prog, "k", [y], grid=2, block=64, cluster=2)
    assert y[0].tolist() == [7] * 64 and y[1].tolist() == [7] * 32 + [0] * 32


# ----------------------------------------------------------------------------- sanitizer rules
def test_dsmem_access_after_the_owner_exited():
    """Rank 1 reads rank 0's shared memory after rank 0 exited: reported with the line; the
    fix (a cluster barrier before rank 0 exits) runs clean."""
    body = """
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r5, buf;
    st.shared.u32 [%r5], %r1;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra READER;
    SYNC
    exit;                                     // rank 0 leaves
READER:
    mapa.shared::cluster.u32 %r18, %r5, 0;
    ld.shared::cluster.u32 %r19, [%r18];
    SYNC
""" + store_words(["%r19"])
    bug = entry(body.replace("SYNC", ""), decls=".shared .align 4 .b32 buf;")
    y = np.zeros((2, 32), np.uint32)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(bug, "k", [y], grid=2, block=32, cluster=2)
    msg = str(ei.value)
    line = [i + 1 for i, t in enumerate(bug.splitlines()) if "ld.shared::cluster.u32 %r19" in t][0]
    assert msg.startswith(f"<ptx>:{line}: out-of-bounds shared load ld.shared::cluster.u32 %r19, [%r18]; by thread "
                          f"(0,0,0) of CTA (1,0,0): ")
    assert "is in the shared memory of CTA rank 0 (CTA (0,0,0)), which has exited" in msg
    assert "is a barrier.cluster before its exit missing?" in msg
    fixed = entry(body.replace("SYNC", "barrier.cluster.arrive.aligned;\n    barrier.cluster.wait.aligned;"),
                  decls=".shared .align 4 .b32 buf;")
    launch(fixed, "k", [y], grid=2, block=32, cluster=2)
    assert y[1].tolist() == [0] * 32
    ptxas_check(fixed, "sm_90a")


def test_mapa_rank_outside_the_cluster_and_cta_space_with_a_cluster_address():
    body = """
    mov.u32 %r1, buf;
    mov.u32 %r2, RANK;
    mapa.shared::cluster.u32 %r3, %r1, %r2;
    LOAD
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
"""
    prog = entry(body, decls=".shared .align 4 .b32 buf[4];")
    with pytest.raises(InterpreterError, match=r"mapa: target CTA rank 2 is not in the cluster \(it has 2 CTAs, "
                                               r"ranks 0-1\): mapa.shared::cluster.u32 %r3, %r1, %r2; by thread"):
        launch(prog.replace("RANK", "2").replace("LOAD", ""), "k", [None], grid=2, cluster=2)
    with pytest.raises(OutOfBoundsError, match=r"is a shared::cluster address \(from mapa, CTA rank 1\) but the access "
                                               r"names .shared::cta; use the .shared::cluster state space"):
        launch(prog.replace("RANK", "1").replace("LOAD", "ld.shared.u32 %r4, [%r3];"), "k", [None], grid=2,
               cluster=2)
    with pytest.raises(OutOfBoundsError, match=r"names CTA rank 3 but the cluster has 2 CTAs \(ranks 0-1\)"):
        launch(prog.replace("RANK", "1").replace("LOAD", "add.u32 %r3, %r3, 0x2000000;\n    ld.shared::cluster.u32 %r4, [%r3];"),
               "k", [None], grid=2, cluster=2)


def test_cluster_barrier_misuse():
    wait_only = entry("    barrier.cluster.wait;\n")
    with pytest.raises(DeadlockError, match=r"barrier.cluster.wait by a thread that has not performed "
                                            r"barrier.cluster.arrive since its last wait: it would wait for its "
                                            r"own arrival forever: barrier.cluster.wait; by thread \(0,0,0\)"):
        launch(wait_only, "k", [None], grid=2, cluster=2)
    twice = entry("""
    mov.u32 %r1, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 1;
    @%p1 bra ONCE;
    barrier.cluster.arrive;                   // rank 0 arrives here and again below
ONCE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
""")
    with pytest.raises(DivergenceError, match="barrier.cluster.arrive by a thread that already arrived in this "
                                              "phase of the cluster barrier"):
        launch(twice, "k", [None], grid=2, block=2, cluster=2)
    # .aligned: every thread of the warp must execute it
    div = entry("""
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 barrier.cluster.arrive.aligned;
    @%p1 barrier.cluster.wait.aligned;
""")
    with pytest.raises(DivergenceError, match="lanes 16-31 are predicated off"):
        launch(div, "k", [None], grid=2, block=32, cluster=2)
    launch(div.replace(".aligned", ""), "k", [None], grid=2, block=32, cluster=2)


def test_cluster_barrier_deadlock_names_the_phase():
    """Warp 1 of rank 1 waits on the cluster barrier while warp 0 of its CTA waits for it at
    bar.sync: the report names both and the cluster barrier's arrivals."""
    body = """
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %tid.x;
    setp.eq.u32 %p1, %r1, 1;
    setp.lt.u32 %p2, %r2, 32;
    and.pred %p1, %p1, %p2;
    @%p1 bra STUCK;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    bra.uni DONE;
STUCK:
    bar.sync 0;                               // needs warp 1, which waits on the cluster
DONE:
"""
    with pytest.raises(DeadlockError) as ei:
        launch(entry(body), "k", [None], grid=2, block=64, cluster=2)
    msg = str(ei.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    assert ("CTA (0,0,0) warp 0 lanes 0-31: at <ptx>:16 (instruction #7 of k) `barrier.cluster.wait.aligned;` "
            "waits on barrier.cluster (phase 0: 96 of 128 live threads of the cluster arrived)") in msg
    assert ("CTA (1,0,0) warp 0 lanes 0-31: at <ptx>:19 (instruction #9 of k) `bar.sync 0;` waits on barrier 0 "
            "(32 of 64 threads arrived)") in msg


def test_dsmem_race_without_cluster_synchronization():
    """A remote store and the owner's load with nothing in between that synchronizes the
    cluster is a race; a relaxed arrive does not order it either; release/acquire does."""
    body = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.u32 %r5, %r5, %r6;
    st.shared.u32 [%r5], 0;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra READ;
    mapa.shared::cluster.u32 %r7, %r5, 1;
    st.shared::cluster.u32 [%r7], 55;         // rank 0 writes into rank 1
READ:
    SYNC
    ld.shared.u32 %r9, [%r5];
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
""" + store_words(["%r9"])
    prog = entry(body, decls=".shared .align 4 .b32 buf[32];")
    y = np.zeros((2, 32), np.uint32)
    with pytest.raises(RaceError) as ei:
        launch(prog.replace("SYNC", ""), "k", [y], grid=2, block=32, cluster=2)
    msg = str(ei.value)
    assert "race on shared load ld.shared.u32 %r9, [%r5]; by thread (0,0,0) of CTA (1,0,0)" in msg
    assert "that CTA rank 0 of the cluster (through distributed shared memory) stored since the last barrier" in msg
    assert "a barrier.cluster (arrive.release + wait) or an mbarrier wait of the owning CTA is missing" in msg
    relaxed = "barrier.cluster.arrive.relaxed.aligned;\n    barrier.cluster.wait.aligned;"
    with pytest.raises(RaceError):
        launch(prog.replace("SYNC", relaxed), "k", [y], grid=2, block=32, cluster=2)
    launch(prog.replace("SYNC", relaxed.replace(".relaxed", ".release")), "k", [y], grid=2, block=32, cluster=2)
    assert y[0].tolist() == [0] * 32 and y[1].tolist() == [55] * 32
    ptxas_check(prog.replace("SYNC", relaxed), "sm_90a")
