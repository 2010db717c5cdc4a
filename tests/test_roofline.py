"""The interpreter's opt-in counters (``interpret.Stats``) and the roofline built on them
(``jax_pyptx.perf``): exact counts on hand-written PTX, power-law scaling that reproduces a
direct measurement, occupancy rules, device figures and the estimate itself."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.interpret import Stats, launch
from jax_pyptx.perf import (
    DEVICES, Counts, BufferCounts, estimate, fit, format_table, measure, occupancy, roofline,
)
from jax_pyptx.types import bf16, f32

from examples.ampere.gemm import build_gemm
from examples.ampere.rms_norm import build_rms_norm
from .test_interp_mma import layouts, mma_kernel, pack

BF = ml_dtypes.bfloat16
HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

# 64 threads: a v4 load of x (16 B each), x re-read by every thread at [0] (4 B), a store of
# 8 B, an atomic add on one word, a cp.async of 16 bytes with src-size 12 (12 read)
PROG = HDR + """
.visible .entry k(.param .u64 px, .param .u64 py, .param .u64 pc)
{
    .reg .u32 %t, %a, %s, %v<6>; .reg .u64 %p, %q, %o, %c; .reg .f32 %f;
    .shared .align 16 .b8 sm[1024];
    mov.u32 %t, %tid.x;
    ld.param.u64 %p, [px];
    ld.param.u64 %q, [py];
    ld.param.u64 %c, [pc];
    mul.wide.u32 %o, %t, 16;
    add.u64 %p, %p, %o;
    ld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%p];
    ld.param.u64 %p, [px];
    ld.global.u32 %v4, [%p];
    mul.wide.u32 %o, %t, 8;
    add.u64 %o, %q, %o;
    st.global.v2.u32 [%o], {%v0, %v4};
    atom.global.add.u32 %v5, [%c], 1;
    mov.u32 %a, sm;
    mul.lo.u32 %s, %t, 16;
    add.u32 %a, %a, %s;
    ld.param.u64 %p, [px];
    mul.wide.u32 %o, %t, 16;
    add.u64 %p, %p, %o;
    cp.async.ca.shared.global [%a], [%p], 16, 12;
    cp.async.wait_all;
    ret;
}"""


def test_stats_count_every_kind_of_global_access():
    x = np.arange(256, dtype=np.uint32)
    y = np.zeros(128, np.uint32)
    c = np.zeros(1, np.uint32)
    st = Stats()
    launch(PROG, "k", [x, y, c], block=64, stats=st)
    assert st.global_load_bytes == 64 * 16 + 64 * 4 + 64 * 12
    assert st.global_store_bytes == 64 * 8
    assert st.global_atomic_bytes == 64 * 4
    assert st.bytes_by_op == {"ld": [64 * 20, 0, 0], "st": [0, 512, 0], "atom": [0, 0, 256],
                              "cp.async": [768, 0, 0]}
    bx, by, bc = sorted(st.buffers.values(), key=lambda b: b.index)
    assert (bx.load, bx.unique_read) == (64 * 32, 1024)      # x: every byte read, some twice
    assert (by.store, by.unique_written, by.unique_read) == (512, 512, 0)
    assert (bc.atomic, bc.unique_read, bc.unique_written) == (256, 4, 4)
    assert st.unique_bytes == 1024 + 512 + 8
    assert (st.ctas, st.launches, st.tensor_flops) == (1, 1, 0)
    assert st.instructions > 0 and st.thread_instructions >= 64 * 20
    assert c[0] == 64 and y[1] == 0 and y[2] == 4


def test_stats_accumulate_and_a_dict_still_works():
    x, y, c = np.arange(256, dtype=np.uint32), np.zeros(128, np.uint32), np.zeros(1, np.uint32)
    st = Stats()
    for _ in range(2):
        launch(PROG, "k", [x, y, c], block=64, stats=st)
    assert st.launches == 2 and st.global_store_bytes == 1024
    assert len(st.buffers) == 3 and next(iter(st.buffers.values())).load == 2 * 64 * 32
    d = {}
    launch(PROG, "k", [x, y, c], block=64, stats=d)
    assert set(d) == {"instructions", "thread_instructions", "ctas", "batches", "seconds"}
    with pytest.raises(ValueError, match="kind must be one of load, store, atomic; got 'read'"):
        st.global_access("read", 4)


def test_stats_count_mma_flops_per_warp():
    (ar, ac), (br, bc), (cr, cc) = layouts("m16n8k16", "bf16")
    rng = np.random.default_rng(0)
    A = rng.standard_normal((16, 16)).astype(BF)
    B = rng.standard_normal((16, 8)).astype(BF)
    fa, fb = pack(A[ar, ac].astype(np.float64), BF), pack(B[br, bc].astype(np.float64), BF)
    fa, fb = np.tile(fa, (2, 1)), np.tile(fb, (2, 1))          # two warps
    fc = np.zeros((64, 4), np.uint32)
    fd = np.zeros((64, 4), np.uint32)
    st = Stats()
    launch(mma_kernel("m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, 32), "k",
           [fa, fb, fc, fd], block=64, stats=st)
    assert st.flops == {("mma.sync", "bf16"): 2 * (2 * 16 * 8 * 16)}
    assert st.flops_by_type() == {"bf16": 8192} and st.tensor_flops == 8192


def test_measure_the_gemm_exactly():
    k = build_gemm(bf16)
    M, N, K = 256, 128, 64
    c = measure(k, np.ones((M, K), BF), np.ones((K, N), BF))
    a, b, out = (c.buffers[i] for i in range(3))
    assert (a.name, b.name, out.name) == ("A", "B", "C")
    assert a.load == 2 * M * K * (N // 128) and b.load == 2 * K * N * (M // 128)
    assert (a.unique_read, b.unique_read, out.unique_written) == (2 * M * K, 2 * K * N, 4 * M * N)
    assert c.flops == {"bf16": 2 * M * N * K} and c.ctas == 2
    assert c.requested_bytes == a.load + b.load + out.store
    assert c.unique_bytes == 2 * M * K + 2 * K * N + 4 * M * N


def test_fitted_power_laws_reproduce_a_direct_measurement():
    k = build_gemm(bf16)
    s = fit(k, np.ones((128, 64), BF), np.ones((64, 128), BF))
    assert s.exponents["0:load"] == {"M": 1.0, "K": 1.0, "N": 1.0}
    assert s.exponents["0:unique_read"] == {"M": 1.0, "K": 1.0, "N": 0.0}
    assert s.law("2:unique_written") == "M^1 N^1" and s.law("0:store") == "constant"
    at = {"M": 384, "N": 256, "K": 192}
    got = s.at(at)
    want = measure(k, np.ones((384, 192), BF), np.ones((192, 256), BF))
    assert got.buffers == {i: BufferCounts(b.name, *(float(getattr(b, f)) for f in (
        "load", "store", "atomic", "unique_read", "unique_written")))
        for i, b in want.buffers.items()}
    assert got.flops == {"bf16": float(want.flops["bf16"])} and got.ctas == want.ctas


@pytest.mark.parametrize("dev,threads,regs,smem,want", [
    ("H100", 256, 128, 48 * 1024, (2, 16, "registers")),
    ("H100", 1024, 32, 0, (2, 64, "threads")),
    ("H100", 128, 32, 100 * 1024, (2, 8, "shared memory")),
    ("A100", 128, 32, 100 * 1024, (1, 4, "shared memory")),
    ("H100", 32, 16, 0, (32, 32, "CTAs")),
    ("B200", 256, 123, 49152, (2, 16, "registers")),
    ("H100", 128, 256, 0, (0, 0, "does not fit: more than 255 registers")),
    ("A100", 128, 32, 200 * 1024, (0, 0, "does not fit: more than 166912 bytes of shared "
                                        "memory")),
])
def test_occupancy(dev, threads, regs, smem, want):
    o = occupancy(dev, threads, regs, smem)
    assert (o.ctas_per_sm, o.warps_per_sm, o.limiter) == want
    assert math.isclose(o.fraction, want[1] / 64)


def test_device_figures_and_errors():
    h, b = DEVICES["H100"], DEVICES["B200"]
    assert (h.sms, h.hbm_gbs, h.peak("bf16"), h.peak("e4m3"), h.peak("tf32")) == \
        (132, 3350.0, 989.4, 1978.9, 494.7)
    assert (b.sms, b.hbm_gbs, b.peak("f16"), b.peak("e2m1")) == (148, 8000.0, 2250.0, 9000.0)
    with pytest.raises(KeyError, match="A100 SXM4 80GB lists no tensor-core rate for 'e4m3'"):
        DEVICES["A100"].peak("e4m3")
    with pytest.raises(ValueError, match="unknown device 'V100'; known: H100, H100-PCIe, "
                                         "H100-NVL, H200, H200-NVL, GH200, B200, GB200, A100"):
        occupancy("V100", 32, 32, 0)


def test_estimate_terms():
    c = Counts({0: BufferCounts("A", 0, 0, 0, 3.35e9, 0)}, {"bf16": 989.4e12}, ctas=132 * 2)
    r = estimate("k", {"M": 1}, c, "H100", threads=256, registers=128, smem=0)
    assert math.isclose(r.t_mem, 1e-3) and math.isclose(r.t_tc, 1.0)
    assert (r.bound, r.waves, r.occupancy.ctas_per_sm) == ("tensor", 1, 2)
    # a grid of 66 CTAs: half the SMs pull half the bandwidth; 1/4 of a wave of 264 CTAs
    c2 = Counts(c.buffers, {"bf16": 989.4e9}, ctas=66)
    r2 = estimate("k", {}, c2, "H100", threads=256, registers=128, smem=0)
    assert math.isclose(r2.t_mem, 2e-3) and math.isclose(r2.t_tc, 4e-3)
    text = format_table([r, r2])
    assert text.splitlines()[0].split() == [
        "kernel", "shape", "device", "CTAs", "occupancy", "waves", "DRAM", "MB", "reuse",
        "GFLOP", "FLOP/B", "core", "GOP", "t_mem", "us", "t_tc", "us", "t_core", "us", "est",
        "us", "bound", "TB/s", "TFLOP/s"]
    assert "| k | M=1 | H100 SXM5 | 264 | 2 CTA/SM (16 warps, registers) | 1 |" in \
        format_table([r], markdown=True)


def test_roofline_of_the_gemm_and_a_norm():
    g = roofline(build_gemm(bf16), np.ones((128, 64), BF), np.ones((64, 128), BF),
                 at={"M": 8192, "N": 8192, "K": 8192}, devices=("H100", "B200", "A100"))
    h100 = g.rows[0]
    assert h100.bound == "tensor" and h100.counts.ctas == 64 * 64
    assert h100.counts.unique_bytes == 2 * 2 * 8192 ** 2 + 4 * 8192 ** 2
    assert h100.counts.requested_bytes == 2 * 2 * 8192 ** 3 / 128 + 4 * 8192 ** 2
    waves = math.ceil(4096 / (132 * h100.occupancy.ctas_per_sm))
    eff = 4096 / (waves * 132 * h100.occupancy.ctas_per_sm)
    assert math.isclose(h100.t_tc, 2 * 8192 ** 3 / (989.4e12 * eff))
    assert [r.device.name for r in g.rows] == ["H100 SXM5", "B200", "A100 SXM4 80GB"]
    n = roofline(build_rms_norm(8192, bf16), np.ones((4, 8192), BF), np.ones(8192, BF),
                 at={"M": 8192}, name="rms_norm-bf16")
    assert [r.bound for r in n.rows] == ["memory", "memory"]
    assert n.rows[0].counts.unique_bytes == 2 * 2 * 8192 * 8192 + 2 * 8192
    assert math.isclose(n.rows[0].t_mem, n.rows[0].counts.unique_bytes / 3350e9)
    assert str(n).splitlines()[2].startswith("rms_norm-bf16  M=8192  H100 SXM5")


def test_roofline_errors():
    k = build_rms_norm(64, f32)
    x, w = np.ones((16, 64), np.float32), np.ones(64, np.float32)
    with pytest.raises(ValueError) as e:
        roofline(k, x, w, at={"N": 4})
    assert str(e.value) == ("roofline: 'N' in at= is not a shape variable of kernel "
                            "'rms_norm'; its shape variables: M")
    r = roofline(k, x, w)                       # no at=: the small shape itself, nothing fitted
    assert r.scaling.exponents["0:load"] == {} and r.rows[0].shape == {"M": 16}
