"""Hopper and Blackwell GEMM kernels (PTX text) for the interpreter tests and benchmarks/interpret.py:
a TMA + wgmma pipeline and a TMA + tcgen05 tile. Plain generators of PTX; the host side builds
the tensor maps with ``jax_pyptx.interpret.tensor_map``.

``hopper_gemm(bk=, stages=)``: C[M, N] (f32) = A[M, K] @ B[K, N] for bf16 A and B^T (``Bt``,
N x K, row-major), one 128 x 128 tile per CTA (grid (N/128, M/128)), two consumer
warpgroups (rows 0-63 and 64-127), a ``stages``-deep ring of shared-memory stages that thread
0 fills with TMA (``cp.async.bulk.tensor.2d``, swizzle = the K extent of a stage: 32/64/128
bytes for bk = 16/32/64) and mbarrier ``complete_tx``; each k tile is bk/16 wgmma m64n128k16
(descriptor advanced 32 bytes per step inside the swizzle atom).

``tcgen05_tile(n=, k=)``: one 128 x n tile, K = k: TMA loads of A (128 x k) and B^T (n x k)
with 128B swizzling, thread 0 issues k/16 tcgen05.mma m128 n k16 and commits to an mbarrier,
every warp reads its 32 lanes of D with tcgen05.ld.32x32b.
"""
from __future__ import annotations

import numpy as np

HOPPER_HDR = ".version 8.4\n.target sm_90a\n.address_size 64\n"
BLACKWELL_HDR = ".version 8.7\n.target sm_100a\n.address_size 64\n"
SWIZZLE = {16: (32, 3), 32: (64, 2), 64: (128, 1)}      # bk -> (swizzle bytes, wgmma code)


def hopper_gemm(bk: int = 64, stages: int = 3, n_tile: int = 128) -> str:
    """PTX of the pipelined TMA + wgmma GEMM (see the module doc); params: A map, B^T map, C, K."""
    sw, code = SWIZZLE[bk]
    a_bytes = 128 * bk * 2
    b_bytes = n_tile * bk * 2
    stage_bytes = a_bytes + b_bytes
    nacc = n_tile // 2
    acc = "{" + ", ".join(f"%c{i}" for i in range(nacc)) + "}"
    desc_hi = (16 >> 4) << 16 | ((8 * sw) >> 4) << 32 | code << 62       # LBO 16 (unused), SBO 8 rows
    mma = []
    for j in range(bk // 16):
        mma.append(f"  add.s64 %rd20, %da, {2 * j};\n  add.s64 %rd21, %db, {2 * j};\n"
                   f"  wgmma.mma_async.sync.aligned.m64n{n_tile}k16.f32.bf16.bf16 {acc}, %rd20, %rd21, %p9, 1, 1, 0, 0;\n"
                   f"  setp.eq.u32 %p9, %r1, %r1;")
    mma = "\n".join(mma)
    stores = "\n".join(f"  st.global.f32 [%rd30+{((8 * ((i // 2) % 2)) * n_tile * 0) + 4 * (8 * (i // 4) + i % 2)}], %c{i};"
                       if (i // 2) % 2 == 0 else
                       f"  st.global.f32 [%rd31+{4 * (8 * (i // 4) + i % 2)}], %c{i};" for i in range(nacc))
    return HOPPER_HDR + f"""
.visible .entry hopper_gemm(.param .align 64 .b8 tmA[128], .param .align 64 .b8 tmB[128], .param .u64 pc,
                            .param .u32 pk)
{{
  .reg .u32 %r<40>; .reg .u64 %rd<40>; .reg .b64 %da, %db, %da0, %db0; .reg .pred %p<12>;
  .reg .f32 %c<{nacc}>;
  .shared .align 1024 .b8 smem[{stages * stage_bytes}];
  .shared .align 8 .b64 full[{stages}];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ctaid.y;
  ld.param.u32 %r4, [pk];
  shr.u32 %r5, %r4, {bk.bit_length() - 1};           // k tiles
  shr.u32 %r6, %r1, 7;                                  // warpgroup
  setp.eq.u32 %p1, %r1, 0;
  mov.u32 %r7, smem;
  mov.u32 %r8, full;
  @!%p1 bra INITDONE;
""" + "\n".join(f"  mbarrier.init.shared::cta.b64 [full+{8 * s}], 1;" for s in range(stages)) + f"""
INITDONE:
  bar.sync 0;
  // prologue: thread 0 fills the first stages
  @!%p1 bra PRO_DONE;
  mov.u32 %r9, 0;
PRO:
  setp.ge.u32 %p2, %r9, {stages};
  setp.ge.u32 %p3, %r9, %r5;
  or.pred %p2, %p2, %p3;
  @%p2 bra PRO_DONE;
  mad.lo.u32 %r10, %r9, {stage_bytes}, %r7;           // stage base
  mad.lo.u32 %r11, %r9, 8, %r8;                       // its mbarrier
  mul.lo.u32 %r12, %r9, {bk};                         // k coordinate
  mul.lo.u32 %r13, %r3, 128;
  mul.lo.u32 %r14, %r2, {n_tile};
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r11], {stage_bytes};
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], [tmA, {{%r12, %r13}}], [%r11];
  add.u32 %r15, %r10, {a_bytes};
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r15], [tmB, {{%r12, %r14}}], [%r11];
  add.u32 %r9, %r9, 1;
  bra PRO;
PRO_DONE:
  setp.ne.u32 %p9, %r1, %r1;                          // scale-d false for the first mma
  mov.u32 %r16, 0;                                    // k tile
  mov.u32 %r17, 0;                                    // stage
  mov.u32 %r18, 0;                                    // phase parity
LOOP:
  setp.ge.u32 %p4, %r16, %r5;
  @%p4 bra EPI;
  mad.lo.u32 %r11, %r17, 8, %r8;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r11], %r18;
  @!%p5 bra WAIT;
  mad.lo.u32 %r10, %r17, {stage_bytes}, %r7;
  mad.lo.u32 %r19, %r6, {64 * bk * 2}, %r10;         // this warpgroup's 64 rows of A
  cvt.u64.u32 %rd1, %r19;
  shr.u64 %rd1, %rd1, 4;
  or.b64 %da, %rd1, {desc_hi};
  add.u32 %r20, %r10, {a_bytes};
  cvt.u64.u32 %rd2, %r20;
  shr.u64 %rd2, %rd2, 4;
  or.b64 %db, %rd2, {desc_hi};
  wgmma.fence.sync.aligned;
{mma}
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  bar.sync 0;                                         // every warpgroup is done with the stage
  add.u32 %r21, %r16, {stages};
  setp.lt.u32 %p6, %r21, %r5;
  and.pred %p6, %p6, %p1;
  @!%p6 bra NEXT;
  mul.lo.u32 %r12, %r21, {bk};
  mul.lo.u32 %r13, %r3, 128;
  mul.lo.u32 %r14, %r2, {n_tile};
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r11], {stage_bytes};
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], [tmA, {{%r12, %r13}}], [%r11];
  add.u32 %r15, %r10, {a_bytes};
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r15], [tmB, {{%r12, %r14}}], [%r11];
NEXT:
  add.u32 %r16, %r16, 1;
  add.u32 %r17, %r17, 1;
  setp.eq.u32 %p7, %r17, {stages};
  @!%p7 bra LOOP;
  mov.u32 %r17, 0;
  xor.b32 %r18, %r18, 1;
  bra LOOP;
EPI:
  // accumulator element i of thread t: row 16w + lane/4 + 8((i/2)%2), column 8(i/4) + 2(lane%4) + i%2
  ld.param.u64 %rd3, [pc];
  and.b32 %r22, %r1, 31;
  shr.u32 %r23, %r1, 5;
  shl.b32 %r24, %r23, 4;
  shr.u32 %r25, %r22, 2;
  add.u32 %r24, %r24, %r25;                           // row within the tile
  mad.lo.u32 %r24, %r3, 128, %r24;
  and.b32 %r26, %r22, 3;
  shl.b32 %r26, %r26, 1;
  mad.lo.u32 %r26, %r2, {n_tile}, %r26;
  ld.param.u32 %r27, [pk];
  mov.u32 %r28, %nctaid.x;
  mul.lo.u32 %r28, %r28, {n_tile};                    // N
  mad.lo.u32 %r29, %r24, %r28, %r26;
  mul.wide.u32 %rd4, %r29, 4;
  add.u64 %rd30, %rd3, %rd4;
  mul.wide.u32 %rd5, %r28, 32;                        // 8 rows
  add.u64 %rd31, %rd30, %rd5;
{stores}
  ret;
}}
"""


def tcgen05_tile(n: int = 256, k: int = 64) -> str:
    """PTX of the TMA + tcgen05 128 x n x k tile (see the module doc); params: A map, B^T map, C."""
    a_bytes, b_bytes = 128 * k * 2, n * k * 2
    ncols = 256 if n <= 256 else 512
    idesc = 1 << 4 | 1 << 7 | 1 << 10 | (n >> 3) << 17 | (128 >> 4) << 24
    desc_hi = (16 >> 4) << 16 | (1024 >> 4) << 32 | 1 << 46 | 2 << 61
    # K step j: 128-byte K atom j // 4 (A atoms 128 x 128 bytes apart, B atoms n x 128), 32 bytes in
    mma = "\n".join(f"  add.s64 %rd20, %da, {((j // 4) * 128 * 128 + (j % 4) * 32) >> 4};\n"
                    f"  add.s64 %rd21, %db, {((j // 4) * n * 128 + (j % 4) * 32) >> 4};\n"
                    f"  tcgen05.mma.cta_group::1.kind::f16 [%r30], %rd20, %rd21, %r31, {int(j > 0)};"
                    for j in range(k // 16))
    chunks = []
    for c0 in range(0, n, 128):
        m = min(128, n - c0)
        regs = ", ".join(f"%d{i}" for i in range(m))
        chunks.append(f"  add.u32 %r33, %r32, {c0};\n  tcgen05.ld.sync.aligned.32x32b.x{m}.b32 {{{regs}}}, [%r33];\n"
                      f"  tcgen05.wait::ld.sync.aligned;\n"
                      + "\n".join(f"  st.global.b32 [%rd8+{4 * (c0 + i)}], %d{i};" for i in range(m)))
    dumps = "\n".join(chunks)
    kb = k * 2
    atoms = kb // 128                # 128-byte K atoms per row
    return BLACKWELL_HDR + f"""
.visible .entry tcgen05_tile(.param .align 64 .b8 tmA[128], .param .align 64 .b8 tmB[128], .param .u64 pc)
{{
  .reg .u32 %r<40>; .reg .u64 %rd<30>; .reg .b64 %da, %db; .reg .pred %p<8>; .reg .b32 %d<128>;
  .shared .align 1024 .b8 smem[{a_bytes + b_bytes}];
  .shared .align 8 .b64 bar[2];
  .shared .align 4 .b32 tslot;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  setp.eq.u32 %p1, %r2, 0;
  setp.eq.u32 %p2, %r1, 0;
  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tslot], {ncols};
  @!%p2 bra INIT;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mbarrier.init.shared::cta.b64 [bar+8], 1;
INIT:
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r30, [tslot];
  mov.u32 %r7, smem;
  @!%p2 bra WAITLOAD;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], {a_bytes + b_bytes};
""" + "\n".join(
        f"  add.u32 %r10, %r7, {a * 128 * 128};\n"
        f"  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], "
        f"[tmA, {{{64 * a}, 0}}], [bar];" for a in range(atoms)) + "\n" + "\n".join(
        f"  add.u32 %r10, %r7, {a_bytes + a * n * 128};\n"
        f"  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], "
        f"[tmB, {{{64 * a}, 0}}], [bar];" for a in range(atoms)) + f"""
WAITLOAD:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
  @!%p3 bra WAITLOAD;
  @!%p2 bra WAITMMA;
  cvt.u64.u32 %rd1, %r7;
  shr.u64 %rd1, %rd1, 4;
  or.b64 %da, %rd1, {desc_hi};
  add.u32 %r11, %r7, {a_bytes};
  cvt.u64.u32 %rd2, %r11;
  shr.u64 %rd2, %rd2, 4;
  or.b64 %db, %rd2, {desc_hi};
  mov.u32 %r31, {idesc};
{mma}
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar+8];
WAITMMA:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar+8], 0;
  @!%p4 bra WAITMMA;
  tcgen05.fence::after_thread_sync;
  shl.b32 %r32, %r2, 21;
  add.u32 %r32, %r32, %r30;
  ld.param.u64 %rd7, [pc];
  mul.wide.u32 %rd6, %r1, {4 * n};
  add.u64 %rd8, %rd7, %rd6;
{dumps}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r30, {ncols};
  ret;
}}
"""


def hopper_gemm_args(A, Bt, C, bk=64, n_tile=128):
    """Launch arguments (tensor maps for A and B^T, C, K) and the launch shape."""
    from jax_pyptx.interpret.state.tensormap import tensor_map
    sw = SWIZZLE[bk][0]
    ta = tensor_map(A, box=(bk, 128), swizzle=sw)
    tb = tensor_map(Bt, box=(bk, n_tile), swizzle=sw)
    M, K = A.shape
    N = Bt.shape[0]
    return [ta, tb, C, np.uint32(K)], dict(grid=(N // n_tile, M // 128), block=256)


def tcgen05_tile_args(A, Bt, C):
    from jax_pyptx.interpret.state.tensormap import tensor_map
    ta = tensor_map(A, box=(64, 128), swizzle=128)
    tb = tensor_map(Bt, box=(64, Bt.shape[0]), swizzle=128)
    return [ta, tb, C], dict(block=128)
