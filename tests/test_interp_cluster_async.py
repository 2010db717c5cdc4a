"""Clusters with the asynchronous machinery: remote mbarrier arrivals through mapa, bulk copies
multicast to the CTAs of a ctaMask (each one's data at the same offset, each one's mbarrier
completing its bytes), st.async / red.async into other CTAs' shared memory with complete_tx on
their mbarriers, and the real nvcc cluster-multicast kernel of the Hopper corpus."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from jax_pyptx.errors import (
    DeadlockError, InterpreterError, MisalignedAccessError, RaceError, UninitializedReadError,
)
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state.tensormap import tensor_map
from jax_pyptx.toolchain import ptxas_check

from .corpus_hopper import cases as C

CORPUS = pathlib.Path(__file__).parent / "corpus" / "cuda"

HDR = ".version 8.1\n.target sm_90a\n.address_size 64\n"


def entry(body, params=".param .u64 y", decls=""):
    return HDR + f""".visible .entry k({params})
{{
    .reg .u32 %r<32>; .reg .u64 %rd<8>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 8 .b64 bar;
    {decls}
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %cluster_nctarank;
    mov.u32 %r4, bar;
    setp.eq.u32 %p1, %r1, 0;                  // %p1: thread 0 of its CTA
{body}
    barrier.cluster.arrive.aligned;           // no CTA exits while others may still write it
    barrier.cluster.wait.aligned;
    ret;
}}"""


def store_words(regs):
    return """
    mov.u32 %r28, %ctaid.x; mov.u32 %r29, %ntid.x;
    mad.lo.u32 %r28, %r28, %r29, %r1;
    ld.param.u64 %rd6, [y];
""" + f"    mul.wide.u32 %rd7, %r28, {4 * len(regs)};\n    add.u64 %rd6, %rd6, %rd7;\n" + \
        "".join(f"    st.global.u32 [%rd6+{4 * i}], {r};\n" for i, r in enumerate(regs))


INIT = """
    @%p1 mbarrier.init.shared::cta.b64 [bar], COUNT;
    fence.mbarrier_init.release.cluster;
    barrier.cluster.arrive.relaxed.aligned;   // every CTA's mbarrier exists before anyone uses it
    barrier.cluster.wait.aligned;
"""


# ----------------------------------------------------------------------------- remote arrive
def test_remote_mbarrier_arrive_through_mapa():
    """Thread 0 of every CTA arrives on rank 0's mbarrier (count = cluster size) twice; rank 0
    waits for both phases and counts them."""
    body = INIT.replace("COUNT", "%r3") + """
    mapa.shared::cluster.u32 %r5, %r4, 0;
    mov.u32 %r10, 0;                          // phase
    mov.u32 %r11, 0;
PHASE:
    @%p1 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r5];
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra NEXT;
WAIT:
    mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [bar], %r10;
    @!%p3 bra WAIT;
    add.u32 %r11, %r11, 1;
NEXT:
    barrier.cluster.arrive.aligned;           // rank 0 saw the phase before the next arrivals
    barrier.cluster.wait.aligned;
    xor.b32 %r10, %r10, 1;
    setp.eq.u32 %p2, %r10, 1;
    @%p2 bra PHASE;
""" + store_words(["%r11"])
    prog = entry(body)
    y = np.zeros((8, 32), np.uint32)
    launch(prog, "k", [y], grid=8, block=32, cluster=4)
    assert y[0::4].tolist() == [[2] * 32] * 2 and (y[1:4] == 0).all() and (y[5:8] == 0).all()
    ptxas_check(prog, "sm_90a")
    # rank 3 never arrives: rank 0 waits forever, reported with the barrier's state
    stuck = prog.replace("@%p1 mbarrier.arrive", "setp.ne.u32 %p3, %r2, 3;\n    and.pred %p3, %p3, %p1;\n"
                                                  "    @%p3 mbarrier.arrive")
    with pytest.raises(DeadlockError) as ei:
        launch(stuck, "k", [y], grid=4, block=32, cluster=4)
    msg = str(ei.value)
    assert ("CTA (0,0,0) warp 0 lanes 0-31: at <ptx>:30 (instruction #17 of k) `mbarrier.try_wait.parity.acquire"
            ".cluster.shared::cta.b64 %p3, [bar], %r10;` waits on mbarrier at shared 0x0 for phase parity 0 to "
            "complete (current phase 0, 1 of 4 arrivals pending, tx-count 0)") in msg
    assert ("CTA (3,0,0) warp 0 lanes 0-31: at <ptx>:35 (instruction #21 of k) `barrier.cluster.wait.aligned;` "
            "waits on barrier.cluster (phase 1: 96 of 128 live threads of the cluster arrived)") in msg


# ----------------------------------------------------------------------------- multicast
MULTICAST = """
    setp.eq.u32 %p2, %r2, 0;
    and.pred %p2, %p2, %p1;                   // thread 0 of rank 0 issues the copy
    shr.u32 %r6, MASK, %r2;
    and.b32 %r6, %r6, 1;
    setp.eq.u32 %p3, %r6, 1;                  // %p3: this CTA is in the mask
    and.pred %p1, %p1, %p3;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [bar], 64;
    ld.param.u64 %rd1, [x];
    mov.u32 %r7, buf;
    @%p2 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r7], [%rd1], 64, [bar], MASK;
    @!%p3 bra SKIP;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
    @!%p1 bra WAIT;
    and.b32 %r8, %r1, 15;
    shl.b32 %r8, %r8, 2;
    add.u32 %r8, %r7, %r8;
    ld.shared.u32 %r9, [%r8];
    bra.uni OUT;
SKIP:
    mov.u32 %r9, 0xdead;
OUT:
"""


@pytest.mark.parametrize("mask", [0b1111, 0b1010, 0b0001, 0b0110])
def test_bulk_copy_multicast_to_the_ctas_of_the_mask(mask):
    body = INIT.replace("COUNT", "1") + MULTICAST.replace("MASK", str(mask)) + store_words(["%r9"])
    prog = entry(body, params=".param .u64 x, .param .u64 y", decls=".shared .align 16 .b32 buf[16];")
    x = (np.arange(16, dtype=np.uint32) * 7 + 3)
    y = np.zeros((8, 32), np.uint32)
    launch(prog, "k", [x, y], grid=8, block=32, cluster=4)
    for cta in range(8):
        want = np.tile(x, 2) if mask >> (cta % 4) & 1 else np.full(32, 0xdead)
        assert y[cta].tolist() == want.tolist(), cta
    ptxas_check(prog, "sm_90a")


TENSOR_MULTICAST = HDR + """.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 y)
{
    .reg .u32 %r<16>; .reg .u64 %rd<8>; .reg .pred %p<4>; .reg .b64 %st; .reg .b16 %rs1;
    .shared .align 8 .b64 bar;
    .shared .align 128 .b32 tile[128];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [bar], 1;
    fence.mbarrier_init.release.cluster;
    barrier.cluster.arrive.relaxed.aligned;
    barrier.cluster.wait.aligned;
    shr.u32 %r3, MASK, %r2;
    and.b32 %r3, %r3, 1;
    setp.eq.u32 %p3, %r3, 1;                  // in the mask
    and.pred %p2, %p1, %p3;
    @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [bar], 512;
    setp.eq.u32 %p2, %r2, 1;
    and.pred %p2, %p2, %p1;                   // rank 1 issues the 16 x 8 f32 box at (0, 8)
    mov.u64 %rd1, tmap;
    mov.u32 %r4, tile;
    mov.u32 %r5, bar;
    mov.u16 %rs1, MASK;
    mov.u32 %r6, 0;
    mov.u32 %r7, 8;
    @%p2 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r4], [%rd1, {%r6, %r7}], [%r5], %rs1;
    mov.u32 %r10, 0xdead;
    @!%p3 bra OUT;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;
    @!%p1 bra WAIT;
    shl.b32 %r8, %r1, 2;
    add.u32 %r8, %r4, %r8;
    ld.shared.u32 %r10, [%r8];
OUT:
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    mov.u32 %r11, %ctaid.x;
    mad.lo.u32 %r11, %r11, 128, %r1;
    ld.param.u64 %rd2, [y];
    mul.wide.u32 %rd3, %r11, 4;
    add.u64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r10;
    ret;
}"""


@pytest.mark.parametrize("mask", [0b1001, 0b0110, 0b1111])
def test_tma_tensor_multicast_with_a_cta_mask(mask):
    """Rank 1 loads rows 8..15 of a 16 x 16 fp32 tensor (box 16 x 8) multicast to the CTAs of
    the mask: each gets the box at the same offset of its shared memory, and the 512 bytes on
    its own mbarrier."""
    prog = TENSOR_MULTICAST.replace("MASK", str(mask))
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros((4, 128), np.uint32)
    launch(prog, "k", [tensor_map(x, box=(16, 8)), y], grid=4, block=128, cluster=4)
    box = x[8:16].reshape(-1).view(np.uint32)
    for r in range(4):
        want = box if mask >> r & 1 else np.full(128, 0xdead, np.uint32)
        assert y[r].tolist() == want.tolist(), r
    ptxas_check(prog, "sm_90a")


def test_multicast_mask_beyond_the_cluster():
    body = INIT.replace("COUNT", "1") + MULTICAST.replace("MASK", "0x12") + store_words(["%r9"])
    prog = entry(body, params=".param .u64 x, .param .u64 y", decls=".shared .align 16 .b32 buf[16];")
    with pytest.raises(InterpreterError, match=r"\.multicast::cluster: ctaMask 0x0012 names CTA ranks beyond the "
                                               r"cluster's 4 CTAs \(ranks 0-3\): @%p2 cp.async.bulk.shared::cluster"):
        launch(prog, "k", [np.zeros(16, np.uint32), np.zeros((4, 32), np.uint32)], grid=4, block=32, cluster=4)


def _tm(p, arr):
    return tensor_map(arr, box=p.box_dims, dtype=p.data_type, dims=p.global_dims, strides=p.global_strides,
                      element_strides=p.element_strides, interleave=p.interleave, swizzle=p.swizzle,
                      l2_promotion=p.l2_promotion, oob_fill=p.oob_fill)


def test_nvcc_cluster_multicast_kernel_of_the_corpus():
    """Real nvcc 13 output: TMA 2d loads multicast to both CTAs of each 2-CTA cluster (ctaMask
    0b11), then DSMEM stores into the peer and loads from it between cluster barriers."""
    case = C.CASE["cluster_multicast"]
    arrays = C.make_arrays(case)
    launch(case.text(), case.entry, C.param_values(case, arrays, _tm), grid=case.grid, block=case.block,
           cluster=case.cluster, smem=case.smem)
    for name, want in case.reference(arrays).items():
        # one fp32 multiply per element: the reference rounded once to fp32 is exact
        np.testing.assert_array_equal(arrays[name], want.astype(arrays[name].dtype))


# ----------------------------------------------------------------------------- st.async / red.async
ST_ASYNC = INIT.replace("COUNT", "1") + """
    add.u32 %r5, %r2, 1;
    rem.u32 %r5, %r5, %r3;                    // right neighbour
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [bar], BYTES;   // 32 threads' stores land here
    mov.u32 %r6, buf;
    shl.b32 %r7, %r1, SHIFT;
    add.u32 %r6, %r6, %r7;
    mapa.shared::cluster.u32 %r8, %r6, %r5;
    mapa.shared::cluster.u32 %r9, %r4, %r5;
    mad.lo.u32 %r10, %r2, 1000, %r1;
    add.u32 %r11, %r10, 500;
    add.u32 %r12, %r10, 700;
    add.u32 %r13, %r10, 900;
    STORE
    WAIT_FOR_DATA
    ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r6];
"""
WAIT = """
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;"""


@pytest.mark.parametrize("form", ["u32", "v2.u32", "v4.b32", "u64"])
def test_st_async_into_the_neighbour_completes_its_mbarrier(form):
    store = {"u32": "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8], %r10, [%r9];",
             "v2.u32": "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.u32 [%r8], {%r10, %r11}, [%r9];",
             "v4.b32": "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r8], "
                       "{%r10, %r11, %r12, %r13}, [%r9];",
             "u64": "mov.b64 %rd2, {%r10, %r11};\n    "
                    "st.async.shared::cluster.mbarrier::complete_tx::bytes.u64 [%r8], %rd2, [%r9];"}[form]
    words = {"u32": 1, "v2.u32": 2, "v4.b32": 4, "u64": 2}[form]
    body = (ST_ASYNC.replace("STORE", store).replace("BYTES", str(32 * 4 * words)).replace("SHIFT", "4")
            .replace("WAIT_FOR_DATA", WAIT))
    # words the store does not write stay as initialized; the cluster barrier after the
    # initializing store releases it (a .relaxed arrival would leave it racing with the
    # neighbour's st.async: a write-write race)
    body = body.replace("barrier.cluster.arrive.relaxed.aligned;", "barrier.cluster.arrive.aligned;")
    prog = entry("    mov.u32 %r20, buf;\n    shl.b32 %r21, %r1, 4;\n    add.u32 %r20, %r20, %r21;\n"
                 "    st.shared.v4.u32 [%r20], {%r3, %r3, %r3, %r3};\n" + body
                 + store_words(["%r14", "%r15", "%r16", "%r17"]), decls=".shared .align 16 .b32 buf[128];")
    y = np.zeros((8, 32, 4), np.uint32)
    launch(prog, "k", [y], grid=8, block=32, cluster=4)
    for cta in range(8):
        left = (cta % 4 - 1) % 4
        base = left * 1000 + np.arange(32)
        full = [base, base + 500, base + 700, base + 900]
        for w in range(4):
            want = full[w] if w < words else np.full(32, 4)
            assert y[cta, :, w].tolist() == want.tolist(), (cta, w)
    ptxas_check(prog, "sm_90a")


def test_st_async_destination_read_before_the_mbarrier_wait_is_a_race():
    """Two st.async per thread into the neighbour (256 bytes expected); reading the destination
    between them, before the mbarrier phase completed, is reported; waiting first runs clean."""
    two = ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8], %r10, [%r9];\n    READ\n"
           "    st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8+4], %r11, [%r9];")
    body = ST_ASYNC.replace("BYTES", "256").replace("SHIFT", "4")
    # the initializing store is released by the cluster barrier (no write-write race with st.async)
    body = body.replace("barrier.cluster.arrive.relaxed.aligned;", "barrier.cluster.arrive.aligned;")
    decls = ".shared .align 16 .b32 buf[128];"
    init = ("    mov.u32 %r20, buf;\n    shl.b32 %r21, %r1, 4;\n    add.u32 %r20, %r20, %r21;\n"
            "    st.shared.v4.u32 [%r20], {%r3, %r3, %r3, %r3};\n")
    bug = entry(init + body.replace("STORE", two.replace("READ", "ld.shared.u32 %r18, [%r6];"))
                .replace("WAIT_FOR_DATA", WAIT) + store_words(["%r14"]), decls=decls)
    with pytest.raises(RaceError) as ei:
        launch(bug, "k", [np.zeros((4, 32), np.uint32)], grid=4, block=32, cluster=4)
    msg = str(ei.value)
    assert "race on shared load ld.shared.u32 %r18, [%r6]; by thread (0,0,0) of CTA (0,0,0)" in msg
    assert ("it reads shared address 0x10 ('buf' (+0)) that CTA rank 3 of the cluster (through distributed shared "
            "memory) stored since the last barrier") in msg
    fixed = entry(init + body.replace("STORE", two.replace("READ", "")).replace("WAIT_FOR_DATA", WAIT)
                  + store_words(["%r14", "%r15"]), decls=decls)
    y = np.zeros((4, 32, 2), np.uint32)
    launch(fixed, "k", [y], grid=4, block=32, cluster=4)
    assert y[1, :, 0].tolist() == list(range(32)) and y[1, :, 1].tolist() == list(range(500, 532))
    ptxas_check(fixed, "sm_90a")


def test_st_async_rules():
    store = "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r8], %r10, [MBAR];"
    body = (ST_ASYNC.replace("BYTES", "128").replace("SHIFT", "2").replace("WAIT_FOR_DATA", WAIT)
            .replace("ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r6];", "ld.shared.u32 %r14, [%r6];"))
    decls = ".shared .align 16 .b32 buf[32];"
    one = entry(body.replace("STORE", store.replace("MBAR", "%r9")), decls=decls)
    with pytest.raises(InterpreterError, match=r"st.async needs a cluster of more than one CTA \(%cluster_nctarank "
                                               r"is 1\): st.async"):
        launch(one, "k", [None], grid=2, block=32)
    split = entry(body.replace("STORE", "mapa.shared::cluster.u32 %r9, %r4, %r2;\n    " + store.replace("MBAR", "%r9")),
                  decls=decls)
    with pytest.raises(InterpreterError, match=r"st.async: the destination is in CTA rank 1 but the mbarrier in CTA "
                                               r"rank 0; both must be in the same CTA"):
        launch(split, "k", [None], grid=2, block=32, cluster=2)


RED = INIT.replace("COUNT", "1") + """
    mov.u32 %r6, cnt;
    setp.eq.u32 %p2, %r2, 0;
    @!%p2 bra SEND;
    @%p1 st.shared.u32 [cnt], INIT;
    mul.lo.u32 %r7, %r3, 32;
    sub.u32 %r7, %r7, 32;
    shl.b32 %r7, %r7, 2;                      // bytes: 4 per thread of the other CTAs
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [bar], %r7;
SEND:
    barrier.cluster.arrive.aligned;           // cnt is initialized before the reductions
    barrier.cluster.wait.aligned;
    @%p2 bra RECV;
    mapa.shared::cluster.u32 %r8, %r6, 0;
    mapa.shared::cluster.u32 %r9, %r4, 0;
    mad.lo.u32 %r10, %r2, 32, %r1;            // operand: rank*32 + tid
    VALUE
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.OP [%r8], %r10, [%r9];
    mov.u32 %r12, 0;
    bra.uni OUT;
RECV:
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
    @!%p3 bra WAIT;
    ld.shared.u32 %r12, [cnt];
OUT:
"""


def _red_ref(op, init, vals):
    acc = init
    for v in vals:
        if op == "add.u32":
            acc = (acc + v) & 0xFFFFFFFF
        elif op == "min.u32":
            acc = min(acc, v)
        elif op == "max.s32":
            acc = max(acc, v)
        elif op == "inc.u32":
            acc = 0 if acc >= v else acc + 1
        elif op == "dec.u32":
            acc = v if acc == 0 or acc > v else acc - 1
        elif op == "and.b32":
            acc &= v
        elif op == "or.b32":
            acc |= v
        elif op == "xor.b32":
            acc ^= v
    return acc


@pytest.mark.parametrize("op,init,value", [
    ("add.u32", "5", ""), ("min.u32", "1000", ""), ("max.s32", "0", ""), ("inc.u32", "0", "mov.u32 %r10, 50;"),
    ("dec.u32", "3", "mov.u32 %r10, 70;"), ("and.b32", "0xffffffff", "not.b32 %r10, %r10;"), ("or.b32", "0", ""),
    ("xor.b32", "0", "")])
def test_red_async_on_rank0(op, init, value):
    body = RED.replace("OP", op).replace("INIT", init).replace("VALUE", value) + store_words(["%r12"])
    prog = entry(body, decls=".shared .align 4 .b32 cnt;")
    y = np.zeros((4, 32), np.uint32)
    launch(prog, "k", [y], grid=4, block=32, cluster=4)
    vals = []
    for r in (1, 2, 3):                       # in rank, then thread order
        for t in range(32):
            v = r * 32 + t
            v = {"inc.u32": 50, "dec.u32": 70, "and.b32": ~v & 0xFFFFFFFF}.get(op, v)
            vals.append(v)
    assert y[0].tolist() == [_red_ref(op, int(init, 0), vals)] * 32
    ptxas_check(prog, "sm_90a")


def test_red_async_rules():
    body = RED.replace("OP", "add.u32").replace("INIT", "0").replace("VALUE", "") + store_words(["%r12"])
    own = entry(body.replace("mapa.shared::cluster.u32 %r8, %r6, 0;", "mapa.shared::cluster.u32 %r8, %r6, %r2;")
                .replace("mapa.shared::cluster.u32 %r9, %r4, 0;", "mapa.shared::cluster.u32 %r9, %r4, %r2;"),
                decls=".shared .align 4 .b32 cnt;")
    with pytest.raises(InterpreterError, match="red.async: the destination is in the executing thread's own CTA; "
                                               "it must be another CTA of the cluster"):
        launch(own, "k", [np.zeros((4, 32), np.uint32)], grid=4, block=32, cluster=4)
    uninit = entry(body.replace("@%p1 st.shared.u32 [cnt], 0;", ""), decls=".shared .align 4 .b32 cnt;")
    with pytest.raises(UninitializedReadError, match=r"shared address 0x8 of CTA rank 0 is reduced before any thread "
                                                     r"of that CTA wrote it"):
        launch(uninit, "k", [np.zeros((4, 32), np.uint32)], grid=4, block=32, cluster=4)


# ----------------------------------------------------------------------------- nvcc corpus
@pytest.mark.parametrize("variant", ["sm90a", "sm90a_rdc"])
def test_nvcc_cluster_dsmem_kernels(variant):
    """cooperative_groups' cluster.sync / map_shared_rank (__cluster_dims__(2,1,1): the
    kernel's .reqnctapercluster gives the shape), and the inline-asm special registers, mapa,
    ld / atom on .shared::cluster and getctarank."""
    src = (CORPUS / f"cluster_dsmem.{variant}.ptx").read_text()
    out = np.zeros((4, 128), np.int32)
    launch(src, "_Z16cluster_exchangePi", [out], grid=4, block=128)
    for b in range(4):
        peer = (b % 2 + 1) % 2
        assert out[b].tolist() == [peer * 1000 + t + 2 for t in range(128)]
    if variant == "sm90a":
        got = np.zeros(4, np.uint32)
        launch(src, "_Z11cluster_asmPj", [got], grid=4, block=1, cluster=2)
        # got (the peer's slot before the add: its rank) + getctarank + %clusterid.x + %cluster_ctaid.x
        assert got.tolist() == [2 * ((b % 2) ^ 1) + b // 2 + b % 2 for b in range(4)]


def test_nvcc_async_remote_kernel_has_two_bugs_the_sanitizer_names():
    """The corpus' st.async / red.async kernel, as nvcc compiled it: its .v2 st.async writes 8
    bytes at box + 4, which is not 8-byte aligned (a GPU faults too); with that store split in
    two .u32 ones, its red.async adds to box[3], which nothing initialized. With both fixed (the
    sanitizer off for the second) each CTA holds what its peer sent: complete_tx of 16 bytes and
    the remote arrive complete the phase its threads wait on."""
    src = (CORPUS / "async_remote.sm90a.ptx").read_text()
    with pytest.raises(MisalignedAccessError, match=r"misaligned shared async store st.async.shared::cluster."
                                                    r"mbarrier::complete_tx::bytes.v2.u32 \[%r17\], \{%r18, %r19\}, "
                                                    r"\[%r8\]; by thread \(0,0,0\) of CTA \(0,0,0\): shared address 0xc is "
                                                    r"not aligned to 8 bytes"):
        launch(src, "_Z6remotePj", [np.zeros(8, np.uint32)], grid=2, block=32)
    v2 = "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.u32 [%r17], {%r18, %r19}, [%r8];"
    split = src.replace(v2, "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r17], %r18, [%r8];\n"
                            "\tst.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r17+4], %r19, [%r8];")
    assert split != src
    with pytest.raises(UninitializedReadError, match=r"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx"
                                                     r"::bytes.add.u32 .* shared address 0x14 of CTA rank 1 is reduced "
                                                     r"before any thread of that CTA wrote it"):
        launch(split, "_Z6remotePj", [np.zeros(8, np.uint32)], grid=2, block=32)
    out = np.zeros((2, 4), np.uint32)
    launch(split, "_Z6remotePj", [out], grid=2, block=32, sanitize=False)
    assert out.tolist() == [[1 + 7, 1, 2, 3], [0 + 7, 1, 2, 3]]
    ptxas_check(split, "sm_90a")
