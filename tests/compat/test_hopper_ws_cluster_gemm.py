"""A warp-specialized Hopper GEMM in the pyptx style, ``C = A @ B.T`` (bf16 in, f32 out):

* ``extern_smem="smem"``: shared memory is one window laid out by hand from ``smem.base()``
  (``mov.u32 %r, smem;``); the ``full`` / ``empty`` mbarrier rings are
  ``ptx.mbarrier.array(base, offset, STAGES)`` in it;
* a persistent tile loop over a schedule read from a global table ``S[t] = (m_pair,
  n_block)``: cluster ``c`` takes entries ``c, c + NCL, ...``;
* clusters of 2 CTAs along M: each CTA loads its own A tile, CTA rank 0 loads the shared B
  tile once and multicasts it to both (``multicast_mask=0b11``); each consumer frees a stage
  in both CTAs (``arrive_remote`` to ranks 0 and 1), so ``empty`` counts 2 arrivals;
* warpgroup 0 produces (one thread issues the TMA loads), warpgroup 1 consumes with wgmma;
* the epilogue stages the f32 tile in shared memory and stores it with a TMA store; M and N
  are not multiples of the tile, so the edge tiles' boxes hang over the tensor and the store
  writes only the elements inside it (the padded epilogue).

ptxas accepts it with no spills; the interpreter runs it (clusters, multicast, remote arrives,
the schedule) and matches NumPy."""
import re

import ml_dtypes
import numpy as np

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import bf16, f32, pred, u16, u32

from ..helpers import assemble
from ..pyptx_util import assert_gemm_close, body, header

BM, BN, BK, STAGES = 64, 32, 64, 2
NCL = 2                                   # clusters in the grid (persistent)
A_STAGE, B_STAGE = BM * BK * 2, BN * BK * 2
A_OFF, B_OFF = 0, STAGES * A_STAGE        # 128B-swizzled tiles on 1024-byte boundaries
C_OFF = B_OFF + STAGES * B_STAGE          # the epilogue's staging tile (BM x BN f32)
BAR_OFF = C_OFF + BM * BN * 4             # full[STAGES], then empty[STAGES]
SMEM = BAR_OFF + 2 * 8 * STAGES


@kernel(arch="sm_90a", block=(256, 1, 1), cluster=(2, 1, 1), extern_smem="smem", smem=SMEM,
        raw_directives=[("maxntid", (256, 1, 1))],
        in_specs=(Tile.wgmma_a("M", "K", bf16, tile_m=BM, tile_k=BK),
                  Tile.wgmma_a("N", "K", bf16, tile_m=BN, tile_k=BK),
                  Tile("T", 2, u32)),
        out_specs=(Tile("M", "N", f32, Layout.ROW, tma_box=(BM, BN)),),
        grid=(2 * NCL, 1, 1))
def ws_cluster_gemm(A, B, S, C):
    K = A.shape[1]
    T = S.shape[0]
    k_tiles = K // BK
    base = smem.base()                                   # the extern window "smem"
    full = ptx.mbarrier.array(base, BAR_OFF, STAGES)
    empty = ptx.mbarrier.array(base, BAR_OFF + 8 * STAGES, STAGES)
    tid = reg.from_(ptx.special.tid.x(), u32)
    rank = reg.from_(ptx.sreg("%cluster_ctarank"), u32)
    cluster = reg.from_(ptx.special.ctaid.x(), u32) >> 1
    with ptx.if_(tid == 0):
        full.init_all(1)
        empty.init_all(2)                                # this CTA's consumer and the peer's
        ptx.fence.mbarrier_init()
    ptx.cluster.sync()
    (ps,) = ptx.global_ptrs(S)
    a_desc, b_desc, c_desc = A.tma_desc(), B.tma_desc(), C.tma_desc()
    m_pair, n_blk = reg.scalar(u32), reg.scalar(u32)
    more = reg.scalar(pred)
    t = reg.scalar(u32)

    def next_tile():
        """(m0, n0) of schedule entry t, read from the table."""
        entry = ps + (t << 3)
        ptx.inst.ld.global_.u32(m_pair, ptx.addr(entry))
        ptx.inst.ld.global_.u32(n_blk, ptx.addr(entry, 4))
        return ((m_pair << 1) + rank) * BM, n_blk * BN

    def advance():
        ptx.inst.add.u32(t, t, NCL)
        ptx.inst.setp.lt.u32(more, t, T)

    with ptx.if_(tid < 128):                             # producer warpgroup
        with ptx.if_(tid == 0):
            st = ptx.pipeline(STAGES)
            mask = reg.scalar(u16, 0b11)
            ptx.inst.mov.u32(t, cluster)
            with ptx.loop("producer_tiles", pred=more):
                m0, n0 = next_tile()
                for kt in range(k_tiles):
                    stage, phase = st.advance()
                    empty.at(stage).wait(phase ^ 1)
                    full.at(stage).arrive_expect_tx(A_STAGE + B_STAGE)
                    ptx.cp.async_.bulk.tensor_2d(
                        dst=ptx.addr(base + A_OFF + stage * A_STAGE), src=a_desc,
                        coord=(kt * BK, m0), mbar=full.at(stage).address())
                    with ptx.if_(rank == 0):             # B once, into both CTAs
                        ptx.cp.async_.bulk.tensor_2d(
                            dst=ptx.addr(base + B_OFF + stage * B_STAGE), src=b_desc,
                            coord=(kt * BK, n0), mbar=full.at(stage).address(),
                            multicast_mask=mask)
                advance()
    with ptx.else_():                                    # consumer warpgroup
        c = tid & 127
        st = ptx.pipeline(STAGES)
        acc = reg.wgmma_frag(m=64, n=BN, dtype=f32)
        # thread c of warp w holds rows 16w + c/4 (+8), columns 8j + 2(c%4) (+1)
        row = ((c >> 5) << 4) + ((c & 31) >> 2)
        c_thread = base + C_OFF + (row * BN + ((c & 3) << 1)) * 4
        ptx.inst.mov.u32(t, cluster)
        with ptx.loop("consumer_tiles", pred=more):
            m0, n0 = next_tile()
            for kt in range(k_tiles):
                stage, phase = st.advance()
                full.at(stage).wait(phase)
                da = ptx.wgmma.auto_descriptor(base + A_OFF + stage * A_STAGE, dtype=bf16,
                                               shape=(BM, BK), major="K")
                db = ptx.wgmma.auto_descriptor(base + B_OFF + stage * B_STAGE, dtype=bf16,
                                               shape=(BN, BK), major="K")
                ptx.wgmma.fence()
                for kk in range(BK // 16):
                    ptx.wgmma.mma_async(shape=f"m64n{BN}k16", dtype_d=f32, dtype_a=bf16,
                                        dtype_b=bf16, d=acc, a=da + 2 * kk, b=db + 2 * kk,
                                        scale_d=kt > 0 or kk > 0)
                ptx.wgmma.commit_group()
                ptx.wgmma.wait_group(0)
                with ptx.if_(c == 0):                    # the stage is free in both CTAs
                    empty.at(stage).arrive_remote(0)
                    empty.at(stage).arrive_remote(1)
            for j in range(BN // 8):                     # stage the tile, then one TMA store
                for h in range(2):
                    i = 4 * j + 2 * h
                    ptx.inst.st.shared.v2.f32(ptx.addr(c_thread, (8 * j + 8 * h * BN) * 4),
                                              [acc[i], acc[i + 1]])
            ptx.fence.proxy_async_shared_cta()
            ptx.bar.sync(1, 128)
            with ptx.if_(c == 0):
                ptx.cp.async_.bulk.tensor_2d.store(dst=c_desc, src=ptx.addr(base + C_OFF),
                                                   coord=(n0, m0))
                ptx.cp.async_.bulk.commit_group()
                ptx.cp.async_.bulk.wait_group(0, read=True)
            ptx.bar.sync(1, 128)                         # the staging tile is free again
            advance()
        with ptx.if_(c == 0):
            ptx.cp.async_.bulk.wait_group(0)
    ptx.cluster.sync()                                   # no CTA leaves while its peer
    ptx.ret()                                            # may still arrive on its barriers


SHAPE = dict(M=200, N=40, K=192, T=4)   # 4 x 2 tiles of 64 x 32, the last row and column
SCHEDULE = np.array([[1, 1], [0, 0], [1, 0], [0, 1]], np.uint32)   # (m_pair, n_block)


def test_ws_cluster_gemm_traces_in_the_documented_style():
    head = header(ws_cluster_gemm, **SHAPE)
    assert ".extern .shared .align 128 .b8 smem[];" in head
    assert ".explicitcluster\n.reqnctapercluster 2, 1, 1" in head
    lines = body(ws_cluster_gemm, **SHAPE)
    assert lines[:6] == ["ld.param.u64 %rd0, [S];", "cvta.to.global.u64 %rd1, %rd0;",
                         "ld.param.u64 %rd2, [A_tma_desc];", "ld.param.u64 %rd3, [B_tma_desc];",
                         "ld.param.u64 %rd4, [C_tma_desc];", "mov.u32 %r0, smem;"]
    assert [ln for ln in lines if ln.startswith("mbarrier.init")] == [
        f"mbarrier.init.shared::cta.b64 [%r0+{BAR_OFF + 8 * i}], {1 + i // STAGES};"
        for i in range(2 * STAGES)]
    text = "\n".join(lines)
    assert re.search(r"ld\.global\.u32 %r\d+, \[%rd\d+\];\nld\.global\.u32 %r\d+, "
                     r"\[%rd\d+\+4\];", text)                         # the schedule table
    assert text.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx"
                      "::bytes.multicast::cluster") == 3              # B, per K tile
    assert text.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 1
    assert text.count("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16") == 12
    assert text.count("mbarrier.arrive.shared::cluster.b64") == 6      # 2 per K tile
    rep = assemble(ws_cluster_gemm, **SHAPE)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)


def test_ws_cluster_gemm_matches_numpy_on_the_interpreter():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((200, 192)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((40, 192)).astype(ml_dtypes.bfloat16)
    c = ws_cluster_gemm.interpret(a, b, SCHEDULE, sanitize="strict")   # no findings at all
    assert c.shape == (200, 40) and c.dtype == np.float32
    assert_gemm_close(c, a, b, transpose_b=True)
