"""A block RMSNorm in the pyptx style: one CTA of four warps per row. Each warp reduces its
sum of squares with shuffles, lane 0 writes it to ``partials[warp, 0]``; after a barrier
thread 0 adds the four partials (``ptx.inst.add.f32(total, total, partials[i, 0])``: a 2-d
element read is a value), writes ``rstd`` to ``stats[0, 0]``, and every thread reads it back
(``ptx.inst.mov.f32(rstd, stats[0, 0])``)."""
import numpy as np

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import f32, u32

from ..helpers import assemble
from ..pyptx_util import body

WARPS = 4
THREADS = 32 * WARPS
EPS = 1e-6


@kernel(arch="sm_90a", block=(THREADS, 1, 1),
        in_specs=(Tile("M", "N", f32, Layout.ROW), Tile("N", f32)),
        out_specs=(Tile("M", "N", f32, Layout.ROW),),
        grid=lambda M, N: (M, 1, 1))
def block_rms_norm(X, W, Y):
    N = X.shape[1]
    per = N // THREADS                              # columns per thread, THREADS apart
    px, pw, py = ptx.global_ptrs(X, W, Y)
    partials = smem.alloc(f32, (WARPS, 1))
    stats = smem.alloc(f32, (1, 1))
    tid = reg.from_(ptx.special.tid.x(), u32)
    row = reg.from_(ptx.special.ctaid.x(), u32)
    warp = tid >> 5
    lane = tid & 31
    off = (row * N + tid) * 4                      # byte offset of this thread's first column
    xs = reg.array(f32, per)
    ws = reg.array(f32, per)
    ss = reg.scalar(f32, 0.0)
    for j in range(per):
        ptx.inst.ld.global_.f32(xs[j], ptx.addr(px + off, 4 * THREADS * j))
        ptx.inst.ld.global_.f32(ws[j], ptx.addr(pw + (tid << 2), 4 * THREADS * j))
        ptx.inst.fma.rn.f32(ss, xs[j], xs[j], ss)
    ptx.warp.reduce_sum(ss)
    with ptx.if_(lane == 0):
        partials[warp, 0] = ss
    ptx.bar.sync(0)
    with ptx.if_(tid == 0):
        total = reg.scalar(f32, 0.0)
        for i in range(WARPS):
            ptx.inst.add.f32(total, total, partials[i, 0])
        ms = reg.scalar(f32)
        ptx.inst.fma.rn.f32(ms, total, 1.0 / N, EPS)
        r = reg.scalar(f32)
        ptx.inst.rsqrt.approx.f32(r, ms)
        stats[0, 0] = r
    ptx.bar.sync(0)
    rstd = reg.scalar(f32)
    ptx.inst.mov.f32(rstd, stats[0, 0])
    for j in range(per):
        y = reg.scalar(f32)
        ptx.inst.mul.f32(y, xs[j], rstd)
        ptx.inst.mul.f32(y, y, ws[j])
        ptx.inst.st.global_.f32(ptx.addr(py + off, 4 * THREADS * j), y)
    ptx.ret()


def test_block_rms_norm_traces_with_element_reads():
    lines = body(block_rms_norm, M=4, N=256)
    i = lines.index("ld.shared.f32 %f11, [smem_0];")
    assert lines[i - 1:i + 10] == [
        "mov.f32 %f10, 0f00000000;",
        "ld.shared.f32 %f11, [smem_0];", "add.f32 %f10, %f10, %f11;",
        "ld.shared.f32 %f12, [smem_0+4];", "add.f32 %f10, %f10, %f12;",
        "ld.shared.f32 %f13, [smem_0+8];", "add.f32 %f10, %f10, %f13;",
        "ld.shared.f32 %f14, [smem_0+12];", "add.f32 %f10, %f10, %f14;",
        "fma.rn.f32 %f15, %f10, 0f3B800000, 0f358637BD;", "rsqrt.approx.f32 %f16, %f15;"]
    j = lines.index("ld.shared.f32 %f18, [smem_1];")
    assert lines[j - 3:j + 2] == ["st.shared.f32 [smem_1], %f16;", "$L_else_1:", "bar.sync 0;",
                                  "ld.shared.f32 %f18, [smem_1];", "mov.f32 %f17, %f18;"]
    rep = assemble(block_rms_norm, M=4, N=256)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)


def test_block_rms_norm_matches_numpy_on_the_interpreter():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 256)).astype(np.float32)
    w = rng.standard_normal(256).astype(np.float32)
    ref = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=1, keepdims=True) + EPS) * w
    # rsqrt.approx: max relative error 2**-22.9 (PTX ISA); the sums round in f32
    y = block_rms_norm.interpret(x, w, sanitize="strict")      # no sanitizer findings at all
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-6)
