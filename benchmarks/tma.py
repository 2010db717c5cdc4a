"""Interpreter speed of the asynchronous-copy half: TMA loads and stores, mbarrier rings.

    PYTHONPATH=. python3 benchmarks/tma.py

Rows: one 128x64 bf16 TMA load with the 128B swizzle (16 KiB; per copy, waited on each time);
a 3-stage TMA producer/consumer ring over an mbarrier pair per stage that streams the A
(128x64) and B (64x128) bf16 tiles of a 128x128 output tile for K = 64 * stages (one warp
produces, a 128-thread warpgroup consumes: the loads of a TMA + wgmma pipeline without the
wgmma); the corpus's 2-D TMA tile case. Times are the best of 5 warm launches.
"""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ml_dtypes  # noqa: E402

from jax_pyptx.interpret import launch, tensor_map  # noqa: E402

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"

LOADS = HDR + """
.visible .entry loads(.param .align 64 .b8 tm[128], .param .u32 n)
{
    .reg .u32 %r<10>; .reg .u64 %rd<4>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 1024 .b8 buf[16384];
    .shared .align 8 .b64 bar;
    ld.param.u32 %r9, [n];
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mov.u32 %r4, 0;
L:
    mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 16384;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {0, 0}], [%r2];
    and.b32 %r5, %r4, 1;
W:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r5;
    @!%p1 bra W;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r9;
    @%p2 bra L;
    ret;
}
"""

RING = HDR + """
.visible .entry ring(.param .align 64 .b8 ta[128], .param .align 64 .b8 tb[128], .param .u32 kt)
{
    .reg .u32 %r<30>; .reg .u64 %rd<4>; .reg .pred %p<6>; .reg .b64 %st;
    .shared .align 1024 .b8 sa[49152];
    .shared .align 1024 .b8 sb[49152];
    .shared .align 8 .b64 full[3];
    .shared .align 8 .b64 empty[3];
    ld.param.u32 %r20, [kt];
    mov.b64 %rd1, ta;
    cvta.param.u64 %rd1, %rd1;
    mov.b64 %rd2, tb;
    cvta.param.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, full;
    mov.u32 %r3, empty;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    @%p1 mbarrier.init.shared::cta.b64 [%r2+8], 1;
    @%p1 mbarrier.init.shared::cta.b64 [%r2+16], 1;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 128;
    @%p1 mbarrier.init.shared::cta.b64 [%r3+8], 128;
    @%p1 mbarrier.init.shared::cta.b64 [%r3+16], 128;
    bar.sync 0;
    setp.ge.u32 %p2, %r1, 128;
    mov.u32 %r4, 0;                     // k tile
    @%p2 bra PRODUCER;
CONSUMER:
    rem.u32 %r5, %r4, 3;
    div.u32 %r6, %r4, 3;
    and.b32 %r7, %r6, 1;                // phase parity of this stage's use
    shl.b32 %r8, %r5, 3;
    add.u32 %r9, %r2, %r8;
    add.u32 %r10, %r3, %r8;
CW:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r9], %r7;
    @!%p3 bra CW;
    mbarrier.arrive.shared::cta.b64 %st, [%r10];
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p4, %r4, %r20;
    @%p4 bra CONSUMER;
    bra DONE;
PRODUCER:
    setp.ne.u32 %p5, %r1, 128;
    @%p5 bra DONE;
PL:
    rem.u32 %r5, %r4, 3;
    div.u32 %r6, %r4, 3;
    and.b32 %r7, %r6, 1;
    xor.b32 %r11, %r7, 1;               // the empty barrier's previous phase
    shl.b32 %r8, %r5, 3;
    add.u32 %r9, %r2, %r8;
    add.u32 %r10, %r3, %r8;
    setp.lt.u32 %p3, %r4, 3;
    @%p3 bra ISSUE;
PW:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r10], %r11;
    @!%p4 bra PW;
ISSUE:
    mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r9], 32768;
    mov.u32 %r12, sa;
    mov.u32 %r13, sb;
    mul.lo.u32 %r14, %r5, 16384;
    add.u32 %r12, %r12, %r14;
    add.u32 %r13, %r13, %r14;
    shl.b32 %r15, %r4, 6;               // k offset in elements
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r12], [%rd1, {%r15, 0}], [%r9];
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r13], [%rd2, {%r15, 0}], [%r9];
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p4, %r4, %r20;
    @%p4 bra PL;
DONE:
    ret;
}
"""


def best(fn, reps=5):
    fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    rows = []
    A = np.random.default_rng(0).standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    n = 50
    tm = tensor_map(A, box=(64, 128), swizzle=128)
    t = best(lambda: launch(LOADS, "loads", [tm, np.uint32(n)], block=1))
    rows.append(("TMA load 128x64 bf16, 128B swizzle (per copy)", t / n * 1e3, "ms"))
    for kt in (3, 12):
        a = np.random.default_rng(1).standard_normal((128, 64 * kt)).astype(ml_dtypes.bfloat16)
        b = np.random.default_rng(2).standard_normal((128, 64 * kt)).astype(ml_dtypes.bfloat16)
        ta, tb = tensor_map(a, box=(64, 128), swizzle=128), tensor_map(b, box=(64, 128), swizzle=128)
        t = best(lambda: launch(RING, "ring", [ta, tb, np.uint32(kt)], block=160))
        rows.append((f"3-stage TMA ring, A 128x64 + B 64x128 bf16, {kt} k-tiles", t * 1e3, "ms"))
    from tests.corpus_hopper import cases as C
    from tests.test_interp_corpus_tma import host_tensor_map
    case = next(c for c in C.CASES if c.name == "tma_tile")

    def tile():
        arrays = C.make_arrays(case)
        launch(case.text(), case.entry, C.param_values(case, arrays, host_tensor_map),
               grid=case.grid, block=case.block)
    rows.append(("corpus tma_tile (6 CTAs, load + store)", best(tile) * 1e3, "ms"))
    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'time':>9}")
    for name, v, unit in rows:
        print(f"{name:<{w}}  {v:>7.2f} {unit}")


if __name__ == "__main__":
    main()
