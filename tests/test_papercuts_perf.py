"""Issue 26, "the roofline misleads": per-buffer laws fitted against several sizes with their
fixed parts, distinct bytes bounded by the buffer, CUDA-core and SFU work, "uncertain" fits,
and the Hopper / Blackwell device table."""
from __future__ import annotations

import math

import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.interpret import Stats, launch
from jax_pyptx.perf import DEVICES, fit, measure, roofline
from jax_pyptx.perf.ops import classify, core_ops
from jax_pyptx.types import f32, u32, u64

BIG = 1 << 24


def _index(width):
    return reg.from_(ptx.special.ctaid.x(), u32) * width + ptx.special.tid.x()


@kernel(in_specs=(Tile("N", f32), Tile(1024, f32), Tile(1024, f32)),
        out_specs=(Tile("N", f32),), block=(32, 1, 1), grid=lambda N: (N // 32, 1, 1))
def lut(X, T, F, Y):
    """Y[i] = X[i] + T[i % 1024] + F[0]; thread 0 of CTA 0 also reads all of F once."""
    i = _index(32)
    off = reg.cvt(i, u64) * 4
    v, t, f = reg.scalar(f32), reg.scalar(f32), reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.ld.global_.f32(t, ptx.addr(T.ptr() + reg.cvt(i & 1023, u64) * 4))
    ptx.inst.ld.global_.f32(f, ptx.addr(F.ptr()))
    with ptx.if_(i == 0):
        for j in range(0, 1024, 4):
            ptx.inst.ld.global_.v4.f32([t, t, t, t], ptx.addr(F.ptr() + j * 4))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v + t + f)
    ptx.ret()


LUT_IN = (np.ones(64, np.float32), np.ones(1024, np.float32), np.ones(1024, np.float32))


def test_fixed_table_is_neither_scaled_nor_counted_past_its_size():
    s = fit(lut, *LUT_IN)
    # F's requested loads: 4 bytes per element plus the fixed 4096 of thread 0
    assert s.law("2:load") == "4096 + N^1" and s.fixed["2:load"] == 4096.0
    assert s.law("0:load") == "N^1" and "0:load" not in s.fixed
    assert s.law("2:unique_read") == "constant"
    assert s.fixed_terms() == [("F", "load", 4096.0)]
    at = s.at({"N": BIG})
    assert at.buffers[2].load == 4 * BIG + 4096
    # T's distinct bytes grow with N at the small shapes (i % 1024 < N), but T has 4096
    assert s.law("1:unique_read") == "N^1" and at.buffers[1].unique_read == 4096
    assert at.unique_bytes == 8 * BIG + 2 * 4096             # was 12 * BIG: +50%
    assert s.capped({"N": BIG}) == [("T", "unique_read", 4096.0)]
    r = roofline(lut, *LUT_IN, at={"N": BIG}, devices=("H100",))
    assert r.rows[0].counts.unique_bytes == 8 * BIG + 2 * 4096
    assert r.notes() == [
        "fixed: F load 4096 bytes (does not grow with N)",
        "fixed: T unique_read 4096 bytes (the whole buffer at N=16777216; its fitted law "
        "would pass it)"]
    assert str(r).endswith(r.notes()[1] + "\n") and not r.rows[0].uncertain


@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(128, 1, 1),
        grid=lambda N: (N // 128, 1, 1))
def fma256(X, Y):
    """256 dependent FMAs per element, no tensor cores."""
    off = reg.cvt(_index(128), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    for _ in range(256):
        ptx.inst.fma.rn.f32(v, v, v, v)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_fp32_work_bounds_a_kernel_without_tensor_cores():
    r = roofline(fma256, np.ones(256, np.float32), at={"N": BIG}, devices=("H100", "B200"))
    h100, b200 = r.rows
    assert h100.counts.core["fp32"] == 512 * BIG           # 256 FMAs, 2 FLOPs each
    assert math.isclose(h100.t_core, 512 * BIG / 66.9e12)  # ~128 us; memory: ~40 us
    assert h100.bound == "cuda-core" and h100.time == h100.t_core
    assert math.isclose(b200.t_core, 512 * BIG / 75e12) and b200.bound == "cuda-core"
    assert math.isclose(h100.t_mem, 8 * BIG / 3350e9)


@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(128, 1, 1),
        grid=lambda N: (N // 128, 1, 1))
def exp64(X, Y):
    """64 ex2.approx per element: the special function units bound it."""
    off = reg.cvt(_index(128), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    for _ in range(64):
        ptx.inst.ex2.approx.f32(v, v)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_sfu_work_is_modelled():
    r = roofline(exp64, np.zeros(256, np.float32), at={"N": BIG}, devices=("H100",))
    row = r.rows[0]
    assert row.counts.core["sfu"] == 64 * BIG
    assert math.isclose(row.t_core, 64 * BIG / (66.9e12 / 16)) and row.bound == "sfu"


def test_ops_are_counted_per_executing_thread_and_classified():
    st = Stats(count_ops=True)
    x, y = np.ones(256, np.float32), np.zeros(256, np.float32)
    launch(fma256.ptx(N=256), "fma256", [x, y], grid=2, block=128, stats=st)
    assert st.thread_ops["fma.rn.f32"] == 256 * 256
    assert core_ops(st.thread_ops)["fp32"] == 2 * 256 * 256
    assert Stats().count_ops is False and Stats().thread_ops == {}
    assert [classify(o) for o in ("add.f16x2", "fma.rn.f64", "mad.lo.s32", "shl.b64",
                                  "sin.approx.f32", "ld.global.f32", "cvt.rn.f32.s32",
                                  "mov.u32", "setp.lt.f32")] == [
        ("fp16", 2), ("fp64", 2), ("int", 2), ("int", 2), ("sfu", 1), None, None, None,
        ("fp32", 1)]
    c = measure(lut, *LUT_IN)
    assert c.core["fp32"] == 2 * 64 and c.core["int"] > 0


@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=lambda N: (min(N, 128) // 32, 1, 1))
def partial(X, Y):
    """Covers at most 128 elements whatever N: no power law of N explains its traffic."""
    off = reg.cvt(_index(32), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_a_poor_fit_is_called_uncertain():
    r = roofline(partial, np.ones(64, np.float32), at={"N": 4096}, devices=("H100",))
    s = r.scaling
    assert s.uncertain and s.error > 0.5 and s.check_env == {"N": 512}
    assert "0:load" in s.poor
    row = r.rows[0]
    assert row.uncertain and row.bound == "memory"
    assert "memory (uncertain)" in r.table()
    assert r.notes()[-1] == (
        "uncertain: the fitted counts that set the time are 300% off a measurement at N=512; "
        "measure at a shape that tiles evenly, or pass inputs= for data-dependent work")
    assert row.fit_error == 3.0             # fitted: 4x the traffic of 128 elements
    good = roofline(fma256, np.ones(256, np.float32), at={"N": 4096}, devices=("H100",))
    assert good.scaling.error == 0.0 and not good.rows[0].uncertain
    assert good.rows[0].fit_error == 0.0


def test_device_table_has_the_hopper_and_blackwell_parts():
    assert set(DEVICES) == {"H100", "H100-PCIe", "H100-NVL", "H200", "H200-NVL", "GH200",
                            "B200", "GB200", "A100"}
    h100, h200 = DEVICES["H100"], DEVICES["H200"]
    assert (h200.name, h200.sms, h200.hbm_gbs) == ("H200 SXM", 132, 4800.0)
    assert h200.tensor_tflops == h100.tensor_tflops and h200.core_tflops == h100.core_tflops
    assert h100.core_tflops == {"fp32": 66.9, "fp16": 133.8, "fp64": 33.5, "int": 33.5,
                                "sfu": 66.9 / 16}
    pcie = DEVICES["H100-PCIe"]
    assert (pcie.sms, pcie.hbm_gbs, pcie.peak("bf16"), pcie.core_peak("fp32")) == \
        (114, 2000.0, 756.5, 51.2)
    assert (DEVICES["H100-NVL"].hbm_gbs, DEVICES["H100-NVL"].peak("e4m3")) == (3900.0, 1670.5)
    assert DEVICES["GB200"].peak("e2m1") == 10000.0 and DEVICES["B200"].core_peak("fp32") == 75
    for d in DEVICES.values():
        assert set(d.core_tflops) == {"fp32", "fp16", "fp64", "int", "sfu"}
        assert d.peak("bf16") > 0 and d.sms > 0
    with pytest.raises(KeyError) as e:
        DEVICES["H100"].core_peak("fp8")
    assert str(e.value) == ("\"H100 SXM5 lists no CUDA-core rate for 'fp8'; it has fp16, "
                            "fp32, fp64, int, sfu\"")


# ----------------------------------------------------------------------------- one host run
@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), raw_params=[("N", u32)],
        block=(32, 1, 1), grid=lambda N: ((N + 31) // 32, 1, 1))
def bounded(X, Y):
    """Y[i] = 3 X[i] for i < N, the raw parameter N being the shape variable's value."""
    i = _index(32)
    with ptx.if_(i < ptx.param_value("N")):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 3.0)
    ptx.ret()


def test_measure_runs_what_interpret_runs_a_raw_param_named_like_a_shape_variable():
    x = np.arange(40, dtype=np.float32)
    np.testing.assert_array_equal(bounded.interpret(x), 3 * x)
    c = measure(bounded, x)             # the raw N takes the bound N, as in kernel.interpret
    assert (c.ctas, c.load_bytes, c.store_bytes) == (2, 160.0, 160.0)
    s = fit(bounded, x, vary=("N",))
    assert s.at({"N": 4000}).load_bytes == 16000.0
    with pytest.raises(Exception) as e:
        measure(bounded)
    assert str(e.value) == "kernel 'bounded' takes 1 inputs (X); got 0"
