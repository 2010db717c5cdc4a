"""Issue 23, sanitizer recall: each planted bug is reported with the PTX line (and the user's
line for a kernel of our DSL), and its fixed twin runs clean.

* a missing ``wgmma.fence`` (registers of an ``mma_async`` written by ordinary instructions
  since the last fence; no fence before the first ``mma_async``): ptxas repairs it, so it is a
  SanitizerWarning, an AsyncHazardError under ``sanitize="strict"``;
* lanes of one warp exchanging shared memory with no ``bar.warp.sync`` between;
* ``shfl.sync`` reading a lane that does not take part, ``bar.warp.sync`` naming exited lanes;
* plain stores and loads of one global word by different CTAs of a launch."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import (AsyncHazardError, DivergenceError, RaceError, SanitizerWarning,
                              UninitializedReadError)
from jax_pyptx.interpret import launch
from jax_pyptx.types import bf16, f32, u32, u64

from .helpers import line_of
from .mma_util import acc_matrix, run_wgmma, wgmma_kernel
from .test_interp_mma_dsl import _copy_k_major
from .test_interp_wgmma import kmajor_image, mma_line


def clean(fn, *a, **kw):
    """Run ``fn`` with every SanitizerWarning an error: the fixed twins warn about nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SanitizerWarning)
        return fn(*a, **kw)


# ----------------------------------------------------------------------------- wgmma.fence
def _operands(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, (64, 16)).astype(ml_dtypes.bfloat16)
    B = rng.integers(-3, 4, (16, 8)).astype(ml_dtypes.bfloat16)
    img, da, db = kmajor_image(A, B, "bf16", "bf16")
    return A.astype(np.float64) @ B.astype(np.float64), img, da, db


def _rescale_kernel(fence: str) -> str:
    """mma (scale-d 0), wait, double the accumulator (a flash-attention rescale), FENCE, mma
    accumulating: 3 * A @ B."""
    rescale = "\n".join(f"  add.f32 %c{i}, %c{i}, %c{i};" for i in range(4))
    body = (mma_line(8, "f32", "bf16", "bf16", scale_d="0") + "\n" + rescale + "\n" + fence + "\n"
            + mma_line(8, "f32", "bf16", "bf16", scale_d="1"))
    return wgmma_kernel(body, 4, "f32")


def _line(ptx_text, needle, nth=1):
    lines = [i + 1 for i, t in enumerate(ptx_text.splitlines()) if needle in t]
    return lines[nth - 1]


def test_accumulator_rescaled_without_a_wgmma_fence_is_reported():
    ref, img, da, db = _operands()
    bad = _rescale_kernel("")
    at = _line(bad, "wgmma.mma_async", 2)
    add = _line(bad, "add.f32 %c3")
    with pytest.raises(AsyncHazardError) as ei:
        run_wgmma(bad, img, 4, da, db, sanitize="strict")
    assert str(ei.value).startswith(
        f"<ptx>:{at}: this wgmma.mma_async reads accumulator register %c0, which `add.f32 %c0, %c0, %c0;` "
        f"(<ptx>:{add - 3}) wrote after the warpgroup's last wgmma.fence: the PTX ISA requires a "
        f"wgmma.fence between a register access and a wgmma.mma_async that accesses the same register; "
        f"ptxas repairs it by injecting a warpgroup.arrive (info C7519")
    assert "(put a wgmma.fence after the last write instead) (a SanitizerWarning raised as an error" in str(ei.value)
    # default: a warning, once, and the run goes on with the hardware's values
    with pytest.warns(SanitizerWarning, match=r"reads accumulator register %c0, which `add.f32") as rec:
        out = run_wgmma(bad, img, 4, da, db)
    assert len([w for w in rec if issubclass(w.category, SanitizerWarning)]) == 1
    assert rec[0].message.error_class is AsyncHazardError
    np.testing.assert_array_equal(acc_matrix(out, 8, "f32"), 3 * ref)
    # fixed: a wgmma.fence after the rescale
    out = clean(run_wgmma, _rescale_kernel("  wgmma.fence.sync.aligned;"), img, 4, da, db, sanitize="strict")
    np.testing.assert_array_equal(acc_matrix(out, 8, "f32"), 3 * ref)


def test_first_mma_async_without_any_wgmma_fence_is_reported():
    ref, img, da, db = _operands(1)
    good = wgmma_kernel(mma_line(8, "f32", "bf16", "bf16", scale_d="0"), 4, "f32")
    bad = good.replace("  wgmma.fence.sync.aligned;\n", "", 1)
    at = _line(bad, "wgmma.mma_async")
    with pytest.raises(AsyncHazardError) as ei:
        run_wgmma(bad, img, 4, da, db, sanitize="strict")
    assert str(ei.value).startswith(
        f"<ptx>:{at}: no wgmma.fence before this warpgroup's first wgmma.mma_async: the PTX ISA requires "
        f"one (it orders the earlier register writes before the tensor core reads them); ptxas repairs it")
    with pytest.warns(SanitizerWarning, match="no wgmma.fence before this warpgroup's first"):
        out = run_wgmma(bad, img, 4, da, db)
    np.testing.assert_array_equal(acc_matrix(out, 8, "f32"), ref)
    out = clean(run_wgmma, good, img, 4, da, db, sanitize="strict")
    np.testing.assert_array_equal(acc_matrix(out, 8, "f32"), ref)


def test_a_fragment_registers_written_after_the_fence_are_reported():
    """A from registers loaded after the fence (nvcc places such loads inside the k loop, after
    the loop's one fence: ptxas injects a warpgroup.arrive for each)."""
    rng = np.random.default_rng(2)
    B = rng.integers(-3, 4, (16, 8)).astype(ml_dtypes.bfloat16)
    img, _, db = kmajor_image(np.zeros((64, 16), ml_dtypes.bfloat16), B, "bf16", "bf16")
    areg = rng.integers(0, 1 << 16, (128, 4)).astype(np.uint32) & 0x3F803F80    # bf16 pairs of 0 / +-1
    line = mma_line(8, "f32", "bf16", "bf16", a="{%a0, %a1, %a2, %a3}", scale_d="0")
    good = wgmma_kernel(line, 4, "f32", aregs=True)
    load = "\n".join(f"  ld.global.b32 %a{i}, [%rd8+{4 * i}];" for i in range(4))
    bad = good.replace(load + "\n  wgmma.fence.sync.aligned;", "  wgmma.fence.sync.aligned;\n" + load)
    assert bad != good
    with pytest.raises(AsyncHazardError, match=r"reads A-fragment register %a0, which `ld.global.b32 %a0, "):
        run_wgmma(bad, img, 4, 0, db, areg=areg, sanitize="strict")
    want = clean(run_wgmma, good, img, 4, 0, db, areg=areg, sanitize="strict")
    with pytest.warns(SanitizerWarning, match="A-fragment register %a0"):
        got = run_wgmma(bad, img, 4, 0, db, areg=areg)
    np.testing.assert_array_equal(got, want)


def test_zeroed_accumulator_with_scale_d_false_needs_no_fence():
    """nvcc zeroes ``float d[N] = {}`` after the inline-asm fence; an mma_async with scale-d
    false does not read it (ptxas injects nothing), and the next mma_async of the chain reads the
    first one's result, ordered by default."""
    ref, img, da, db = _operands(3)
    zero = "\n".join(f"  mov.f32 %c{i}, 0f00000000;" for i in range(4))
    body = (zero + "\n" + mma_line(8, "f32", "bf16", "bf16", scale_d="0").split("\n")[0] + "\n"
            + mma_line(8, "f32", "bf16", "bf16", scale_d="1"))
    out = clean(run_wgmma, wgmma_kernel(body, 4, "f32"), img, 4, da, db, sanitize="strict")
    np.testing.assert_array_equal(acc_matrix(out, 8, "f32"), 2 * ref)


N = 64


def build_rescale(fence_after_rescale: bool, idle_warpgroup: bool = False):
    """``idle_warpgroup``: a second warpgroup exits at once, so the first one's instructions run
    for a part of the batch's slots."""
    @kernel(arch="sm_90a", in_specs=(Tile(64, 16, bf16), Tile(N, 16, bf16)), out_specs=(Tile(64, N, f32),),
            block=(256 if idle_warpgroup else 128, 1, 1), grid=(1, 1, 1))
    def rescale(A, Bt, C):
        sa = smem.alloc(bf16, (64, 16), align=128, name="sa")
        sb = smem.alloc(bf16, (N, 16), align=128, name="sb")
        tid = reg.from_(ptx.special.tid.x(), u32)
        if idle_warpgroup:
            with ptx.if_(tid >= 128):
                ptx.ret()
        _copy_k_major(A, sa, 64, tid, 1024)
        _copy_k_major(Bt, sb, N, tid, (N // 8) * 128)
        ptx.inst.fence.proxy.async_.shared__cta()
        if idle_warpgroup:
            ptx.bar.sync(1, 128)            # (the first warpgroup's threads only)
        else:
            ptx.bar.sync(0)
        da = ptx.wgmma.desc_reg(sa, 1024, 128, swizzle="none")
        db = ptx.wgmma.desc_reg(sb, (N // 8) * 128, 128, swizzle="none")
        acc = ptx.wgmma.zero_acc(N)
        ptx.wgmma.fence()
        ptx.wgmma.mma_async(acc, da, db, n=N, atype=bf16, scale_d=0)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(0)
        acc[0] += acc[0]                                                 # the first rescale
        for i in range(1, N // 2):
            acc[i] += acc[i]                                             # the rescale
        if fence_after_rescale:
            ptx.wgmma.fence()
        ptx.wgmma.mma_async(acc, da, db, n=N, atype=bf16, scale_d=1)   # the second mma
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(0)
        lane = tid & 31
        rowbase = (tid >> 5) * 16 + (lane >> 2)
        base = C.ptr() + reg.cvt((rowbase * N + (lane & 3) * 2) * 4, u64)
        for i in range(N // 2):
            ptx.inst.st.global_.f32(ptx.addr(base, (8 * ((i // 2) % 2) * N + 8 * (i // 4) + i % 2) * 4), acc[i])
        ptx.ret()
    return rescale


def test_missing_wgmma_fence_names_the_users_lines():
    rng = np.random.default_rng(4)
    A = rng.integers(-3, 4, (64, 16)).astype(ml_dtypes.bfloat16)
    Bt = rng.integers(-3, 4, (N, 16)).astype(ml_dtypes.bfloat16)
    ref = 3 * (A.astype(np.float64) @ Bt.astype(np.float64).T)
    with pytest.raises(AsyncHazardError) as ei:
        build_rescale(False).interpret(A, Bt, sanitize="strict")
    msg = str(ei.value)
    assert msg.startswith(line_of(build_rescale, "# the second mma") + ": this wgmma.mma_async reads "
                          "accumulator register ")
    assert f"({line_of(build_rescale, '# the first rescale')}) wrote after the warpgroup's last wgmma.fence" in msg
    np.testing.assert_array_equal(clean(build_rescale(True).interpret, A, Bt, sanitize="strict"), ref)


def test_missing_wgmma_fence_names_the_writer_of_a_block_written_back_at_once():
    """The rescale runs as one batched segment for a part of the batch (a second warpgroup has
    exited): the report still names the instruction that wrote the register it finds, not the
    segment's last one."""
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (64, 16)).astype(ml_dtypes.bfloat16)
    Bt = rng.integers(-3, 4, (N, 16)).astype(ml_dtypes.bfloat16)
    ref = 3 * (A.astype(np.float64) @ Bt.astype(np.float64).T)
    with pytest.raises(AsyncHazardError) as ei:
        build_rescale(False, idle_warpgroup=True).interpret(A, Bt, sanitize="strict")
    msg = str(ei.value)
    assert f"({line_of(build_rescale, '# the first rescale')}) wrote after the warpgroup's last wgmma.fence" in msg
    np.testing.assert_array_equal(clean(build_rescale(True, idle_warpgroup=True).interpret, A, Bt,
                                        sanitize="strict"), ref)


# ----------------------------------------------------------------------------- lanes of one warp
HDR80 = ".version 8.0\n.target sm_80\n.address_size 64\n"

# each lane stores its value to tile[lane], then reads its neighbour's (lane ^ 1): BETWEEN decides
# whether the lanes synchronize in between
EXCHANGE = HDR80 + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>;
    .shared .align 4 .b8 tile[256];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    add.u32 %r4, %r3, %r2;
    mul.lo.u32 %r5, %r1, 10;
    st.shared.u32 [%r4], %r5;
    BETWEEN
    xor.b32 %r6, %r2, 4;
    add.u32 %r6, %r3, %r6;
    ld.shared.u32 %r7, [%r6];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
"""
WANT = [(i ^ 1) * 10 for i in range(32)]


def test_lanes_of_one_warp_exchanging_shared_memory_without_a_warp_sync_race():
    y = np.zeros(32, np.uint32)
    bad = EXCHANGE.replace("BETWEEN", "")
    with pytest.raises(RaceError) as ei:
        launch(bad, "k", [y], block=32)
    assert str(ei.value) == (
        "<ptx>:19: race on shared load ld.shared.u32 %r7, [%r6]; by thread (0,0,0) of CTA (0,0,0): it "
        "reads shared address 0x4 ('tile' (+4)) that lane 1 of the same warp stored since the warp last "
        "synchronized: since independent thread scheduling (sm_70) the lanes of a warp are not in lock "
        "step, so a bar.warp.sync (__syncwarp) is missing between the store and this load "
        "[instruction #9 of k]")
    # fixed: bar.warp.sync, or a .sync collective of the warp, or a CTA barrier between
    for sync in ("bar.warp.sync -1;", "shfl.sync.idx.b32 %r7, %r5, 0, 31, -1;", "bar.sync 0;"):
        y[:] = 0
        clean(launch, EXCHANGE.replace("BETWEEN", sync), "k", [y], block=32, sanitize="strict")
        assert y.tolist() == WANT
    # lanes of different warps keep their own rule (a CTA barrier), lanes of one warp theirs
    y = np.zeros(64, np.uint32)
    clean(launch, EXCHANGE.replace("BETWEEN", "bar.warp.sync -1;"), "k", [y], block=64)
    assert y.tolist() == [(i ^ 1) * 10 for i in range(64)]


def test_write_after_read_between_lanes_of_one_warp():
    """Shift left in place: lane i reads tile[i + 1], then stores tile[i]; lane i + 1 may not
    have read its word yet."""
    shift = HDR80 + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p1;
        .shared .align 4 .b8 tile[132];
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        shl.b32 %r2, %r1, 2;
        mov.u32 %r3, tile;
        add.u32 %r4, %r3, %r2;
        st.shared.u32 [%r4], %r1;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 st.shared.u32 [tile+128], 32;
        bar.warp.sync -1;
        ld.shared.u32 %r5, [%r4+4];
        BETWEEN
        st.shared.u32 [%r4], %r5;
        bar.warp.sync -1;
        ld.shared.u32 %r6, [%r4];
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd3, %rd1, %rd2;
        st.global.u32 [%rd3], %r6;
        ret;
    }"""
    y = np.zeros(32, np.uint32)
    with pytest.raises(RaceError) as ei:
        launch(shift.replace("BETWEEN", ""), "k", [y], block=32)
    assert str(ei.value) == (
        "<ptx>:20: race on shared store st.shared.u32 [%r4], %r5; by thread (1,0,0) of CTA (0,0,0): it "
        "overwrites shared address 0x4 ('tile' (+4)) that lane 0 of the same warp loaded since the warp "
        "last synchronized: since independent thread scheduling (sm_70) the lanes of a warp are not in "
        "lock step, so a bar.warp.sync (__syncwarp) is missing between that load and this store "
        "[instruction #10 of k]")
    clean(launch, shift.replace("BETWEEN", "bar.warp.sync -1;"), "k", [y], block=32, sanitize="strict")
    assert y.tolist() == list(range(1, 33))


WAW = HDR80 + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p<3>;
    .shared .align 4 .b32 flag;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r1, 1;
    @%p1 st.shared.u32 [flag], 7;
    BETWEEN
    @%p2 st.shared.u32 [flag], VALUE;
    bar.sync 0;
    ld.shared.u32 %r2, [flag];
    @%p1 st.global.u32 [%rd1], %r2;
    ret;
}
"""


def test_write_write_between_lanes_of_one_warp():
    y = np.zeros(1, np.uint32)
    with pytest.raises(RaceError) as ei:
        launch(WAW.replace("BETWEEN", "").replace("VALUE", "8"), "k", [y], block=32)
    assert str(ei.value) == (
        "<ptx>:15: race on shared store @%p2 st.shared.u32 [flag], 8; by thread (1,0,0) of CTA (0,0,0): it "
        "stores to shared address 0x0 ('flag' (+0)) that lane 0 of the same warp also stored since the "
        "warp last synchronized, a different value: which one the byte keeps is undefined (since "
        "independent thread scheduling (sm_70) the lanes of a warp are not in lock step, so a "
        "bar.warp.sync (__syncwarp) is missing between the two stores, or let one lane write it) "
        "[instruction #5 of k]")
    # the same value: every order leaves the same bytes, a warning (an error under strict)
    same = WAW.replace("BETWEEN", "").replace("VALUE", "7")
    with pytest.warns(SanitizerWarning, match="the value that lane 0 of the same warp also stored") as rec:
        launch(same, "k", [y], block=32)
    assert y[0] == 7 and rec[0].message.error_class is RaceError
    assert "by warp 0 of CTA (0,0,0)" in str(rec[0].message)
    with pytest.raises(RaceError, match="the value that lane 0 of the same warp also stored"):
        launch(same, "k", [y], block=32, sanitize="strict")
    clean(launch, WAW.replace("BETWEEN", "bar.warp.sync -1;").replace("VALUE", "8"), "k", [y], block=32,
          sanitize="strict")
    assert y[0] == 8
    # lanes of one warp storing to one word in one instruction: not a race (one value lands)
    one = WAW.replace("BETWEEN", "").replace("@%p1 st.shared.u32 [flag], 7;", "").replace(
        "@%p2 st.shared.u32 [flag], VALUE;", "st.shared.u32 [flag], %r1;")
    clean(launch, one, "k", [y], block=32, sanitize="strict")
    assert y[0] in range(32)


@kernel(in_specs=(Tile(32, u32),), out_specs=(Tile(32, u32),), block=(32, 1, 1), grid=(1, 1, 1))
def neighbours(X, Y):
    s = smem.alloc(u32, (32,))
    t = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    ptx.inst.st.shared.u32(ptx.addr(s.ptr() + t * 4), v)
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + (t ^ 1) * 4))         # LOAD
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


@kernel(in_specs=(Tile(32, u32),), out_specs=(Tile(32, u32),), block=(32, 1, 1), grid=(1, 1, 1))
def neighbours_fixed(X, Y):
    s = smem.alloc(u32, (32,))
    t = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    ptx.inst.st.shared.u32(ptx.addr(s.ptr() + t * 4), v)
    ptx.bar.warp_sync()
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + (t ^ 1) * 4))
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


def test_race_between_lanes_of_one_warp_names_the_users_line():
    x = np.arange(32, dtype=np.uint32) * 3
    with pytest.raises(RaceError) as ei:
        neighbours.interpret(x)
    msg = str(ei.value)
    assert msg.startswith(line_of(neighbours.fn, "# LOAD") + ": race on shared load ld.shared.u32 ")
    assert "that lane 1 of the same warp stored since the warp last synchronized" in msg
    np.testing.assert_array_equal(clean(neighbours_fixed.interpret, x, sanitize="strict"), x[np.arange(32) ^ 1])


# ----------------------------------------------------------------------------- warp collectives
# a warp-sum by shfl.down over 16 lanes: each lane adds the value of lane + 16, + 8, ... + 1
REDUCE = HDR80 + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<3>; .reg .pred %p1;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    add.u32 %r2, %r1, 1;
    START
    shfl.sync.down.b32 %r3, %r2, 8, 31, MASK;
    add.u32 %r2, %r2, %r3;
    shfl.sync.down.b32 %r3, %r2, 4, 31, MASK;
    add.u32 %r2, %r2, %r3;
    shfl.sync.down.b32 %r3, %r2, 2, 31, MASK;
    add.u32 %r2, %r2, %r3;
    shfl.sync.down.b32 %r3, %r2, 1, 31, MASK;
    add.u32 %r2, %r2, %r3;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.global.u32 [%rd1], %r2;
    ret;
}
"""
START16 = "shfl.sync.down.b32 %r3, %r2, 16, 31, MASK;\n    add.u32 %r2, %r2, %r3;"


def test_shfl_reading_a_lane_past_a_partial_warp_leaves_undefined_bits():
    """16 threads, a 32-lane reduction with the full mask: lane 0 adds lane 16's value, which does
    not exist. The wait is defined (non-exited lanes only); the value read is not."""
    y = np.zeros(1, np.uint32)
    bad = REDUCE.replace("START", START16).replace("MASK", "-1")
    with pytest.raises(UninitializedReadError) as ei:
        launch(bad, "k", [y], block=16)
    assert str(ei.value) == (
        "<ptx>:22: undefined bits of register %r2 (bits 0-31, left undefined by <ptx>:11: shfl.sync.down.b32 "
        "%r3, %r2, 16, 31, -1) reach memory or an address: @%p1 st.global.u32 [%rd1], %r2; by thread "
        "(0,0,0) of CTA (0,0,0) [instruction #14 of k]")
    # fixed: a 16-lane reduction (the lanes that exist), with the mask of those lanes
    clean(launch, REDUCE.replace("START", "").replace("MASK", "0xffff"), "k", [y], block=16, sanitize="strict")
    assert y[0] == sum(range(1, 17))
    # a full warp: the full reduction is defined
    clean(launch, REDUCE.replace("START", START16).replace("MASK", "-1"), "k", [y], block=32, sanitize="strict")
    assert y[0] == sum(range(1, 33))


def test_shfl_reading_an_exited_lane_leaves_undefined_bits():
    y = np.zeros(1, np.uint32)
    early = "setp.ge.u32 %p1, %r1, 24;\n    @%p1 exit;"
    bad = REDUCE.replace("START", early + "\n    " + START16).replace("MASK", "-1")
    # lane 0 reads lane 16 (there), but lane 16 read lane 32 (out of range: its own value) and
    # lane 8 read lane 24 (exited): lane 0's sum takes lane 8's next, and the undefined bits travel
    # through the adds and shfls to the store
    with pytest.raises(UninitializedReadError) as ei:
        launch(bad, "k", [y], block=32)
    assert str(ei.value).startswith(
        "<ptx>:24: undefined bits of register %r2 (bits 0-31, left undefined by <ptx>:13: shfl.sync.down.b32 "
        "%r3, %r2, 16, 31, -1) reach memory or an address: @%p1 st.global.u32 [%rd1], %r2;")
    # fixed: name and read only the 24 lanes that stay (a 32-wide tree over a 0-padded copy)
    fixed = bad.replace("@%p1 exit;", "@%p1 mov.u32 %r2, 0;")
    clean(launch, fixed, "k", [y], block=32, sanitize="strict")
    assert y[0] == sum(range(1, 25))
    # exited lanes in a vote / redux membermask are defined (non-exited lanes take part): clean
    vote = HDR80 + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p<3>;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        setp.ge.u32 %p1, %r1, 24;
        @%p1 exit;
        redux.sync.add.u32 %r2, %r1, -1;
        setp.lt.u32 %p2, %r1, 100;
        vote.sync.ballot.b32 %r3, %p2, -1;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 st.global.v2.u32 [%rd1], {%r2, %r3};
        ret;
    }"""
    y = np.zeros(2, np.uint32)
    clean(launch, vote, "k", [y], block=32, sanitize="strict")
    assert y.tolist() == [sum(range(24)), 0xFFFFFF]


def test_bar_warp_sync_naming_lanes_that_never_arrive_warns():
    sync = HDR80 + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<3>; .reg .u64 %rd<3>; .reg .pred %p1;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        setp.ge.u32 %p1, %r1, LIMIT;
        @%p1 exit;
        bar.warp.sync MASK;
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd2, %rd1, %rd2;
        st.global.u32 [%rd2], %r1;
        ret;
    }"""
    y = np.zeros(48, np.uint32)
    bad = sync.replace("LIMIT", "40").replace("MASK", "-1")
    with pytest.raises(DivergenceError) as ei:
        launch(bad, "k", [y], block=48, sanitize="strict")
    assert str(ei.value).startswith(
        "<ptx>:12: membermask 0xffffffff names lanes that will never arrive: lanes 8-15 have exited and "
        "lanes 16-31 do not exist (warp 1 of a 48-thread CTA is partial); the PTX ISA has bar.warp.sync "
        "wait for every thread of its membermask, GPUs release it without them (name only the lanes that "
        "take part, e.g. from activemask or a vote) (a SanitizerWarning raised as an error by sanitize='strict'; "
        "hardware gives the defined result): bar.warp.sync -1; by thread (32,0,0) of CTA (0,0,0)")
    with pytest.warns(SanitizerWarning, match="names lanes that will never arrive") as rec:
        launch(bad, "k", [y], block=48)
    assert rec[0].message.error_class is DivergenceError
    assert y[:40].tolist() == list(range(40))
    # fixed: the mask of the lanes still there
    fixed = sync.replace("LIMIT", "40").replace("bar.warp.sync MASK;", "activemask.b32 %r2;\n        bar.warp.sync %r2;")
    y[:] = 0
    clean(launch, fixed, "k", [y], block=48, sanitize="strict")
    assert y[:40].tolist() == list(range(40))


# ----------------------------------------------------------------------------- CTAs of a grid
# thread 0 of every CTA adds its CTA number + 1 to y[0] with a plain load and store
RMW = HDR80 + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p1;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r3, %ctaid.x;
    add.u32 %r3, %r3, 1;
    UPDATE
DONE:
    ret;
}
"""
PLAIN = "ld.global.u32 %r2, [%rd1];\n    add.u32 %r2, %r2, %r3;\n    st.global.u32 [%rd1], %r2;"


def test_plain_read_modify_write_of_one_word_by_several_ctas_races():
    y = np.zeros(1, np.uint32)
    with pytest.raises(RaceError) as ei:                 # the CTAs of one batch: one store instruction
        launch(RMW.replace("UPDATE", PLAIN), "k", [y], block=32, grid=4)
    msg = str(ei.value)
    assert msg.startswith(
        "<ptx>:16: race on global store st.global.u32 [%rd1], %r2; by thread (0,0,0) of CTA (0,0,0): it "
        "stores to global address 0x7f0000000000 (byte 0 of allocation #0 (param 'y' (uint32[1]), 4 bytes at "
        "0x7f0000000000)) that CTA (3,0,0) also stored in this same instruction, a different value: CTAs of a "
        "grid run concurrently and in any order, so which value it keeps is undefined")
    # CTAs of different batches (512-thread CTAs, 32 of them a batch): the load of a later one
    with pytest.raises(RaceError) as ei:
        launch(RMW.replace("UPDATE", PLAIN), "k", [y], block=512, grid=(2, 40))
    assert "race on global" in str(ei.value) and "that CTA (" in str(ei.value)
    # fixed: an atomic add (not tracked), or one CTA owning the word
    y[:] = 0
    clean(launch, RMW.replace("UPDATE", "red.global.add.u32 [%rd1], %r3;"), "k", [y], block=32, grid=4,
          sanitize="strict")
    assert y[0] == 1 + 2 + 3 + 4
    y = np.zeros(4, np.uint32)
    own = PLAIN.replace("[%rd1]", "[%rd2]")
    k = RMW.replace("UPDATE", "mul.wide.u32 %rd2, %r3, 4;\n    add.u64 %rd2, %rd1, %rd2;\n    " + own).replace(
        ".reg .u64 %rd1;", ".reg .u64 %rd<3>;")
    clean(launch, k, "k", [np.zeros(5, np.uint32)], block=32, grid=4, sanitize="strict")


def test_reading_a_word_another_cta_stored_races():
    """CTA c stores y[c], then reads y[c - 1] (its neighbour's) with no synchronization."""
    nb = HDR80 + """
    .visible .entry k(.param .u64 y, .param .u64 z)
    {
        .reg .u32 %r<5>; .reg .u64 %rd<6>; .reg .pred %p1;
        ld.param.u64 %rd1, [y];
        ld.param.u64 %rd2, [z];
        mov.u32 %r1, %ctaid.x;
        add.u32 %r2, %r1, 100;
        mul.wide.u32 %rd3, %r1, 4;
        add.u64 %rd4, %rd1, %rd3;
        st.global.u32 [%rd4], %r2;
        NEIGHBOUR
        ld.global.u32 %r3, [%rd5];
        add.u64 %rd3, %rd2, %rd3;
        st.global.u32 [%rd3], %r3;
        ret;
    }"""
    y, z = np.zeros(4, np.uint32), np.zeros(4, np.uint32)
    bad = nb.replace("NEIGHBOUR", "setp.eq.u32 %p1, %r1, 0;\n        add.u64 %rd5, %rd4, -4;\n        "
                                  "@%p1 add.u64 %rd5, %rd4, 0;")
    with pytest.raises(RaceError) as ei:
        launch(bad, "k", [y, z], block=1, grid=4)
    assert str(ei.value) == (
        "<ptx>:18: race on global load ld.global.u32 %r3, [%rd5]; by thread (0,0,0) of CTA (1,0,0): it reads "
        "global address 0x7f0000000000 (byte 0 of allocation #0 (param 'y' (uint32[4]), 16 bytes at "
        "0x7f0000000000)) that CTA (0,0,0) stored earlier in this launch with a plain store: CTAs of a grid "
        "run concurrently and in any order, so whether this load sees the old or the new value is undefined "
        "(let one CTA own each word, combine the CTAs' values with atom / red, or order the CTAs with a "
        "release / acquire pair) [instruction #10 of k]")
    # the same value as was there: either order reads it, a warning
    y = np.full(4, 100, np.uint32)
    with pytest.warns(SanitizerWarning, match="left its value as it was"):
        launch(bad.replace("add.u32 %r2, %r1, 100;", "mov.u32 %r2, 100;"), "k", [y, z], block=1, grid=4)
    # fixed: each CTA reads its own word
    clean(launch, nb.replace("NEIGHBOUR", "add.u64 %rd5, %rd4, 0;"), "k", [y, z], block=1, grid=4,
          sanitize="strict")
    assert z.tolist() == [100, 101, 102, 103]
    # a program that orders its CTAs (here a release store and an acquire load of a flag) is not
    # checked: the release / acquire pair may order the data
    flagged = bad.replace("ld.global.u32 %r3, [%rd5];", "ld.acquire.gpu.global.u32 %r4, [%rd2];\n"
                          "        ld.global.u32 %r3, [%rd5];")
    launch(flagged, "k", [np.zeros(4, np.uint32), z], block=1, grid=4)


def test_same_value_from_several_ctas_warns():
    one = RMW.replace("UPDATE", "st.global.u32 [%rd1], 7;")
    y = np.zeros(1, np.uint32)
    with pytest.warns(SanitizerWarning, match=r"the value that CTA \(3,0,0\) also stored in this same instruction"):
        launch(one, "k", [y], block=32, grid=4)
    assert y[0] == 7
    with pytest.raises(RaceError, match="every order leaves the same bytes"):
        launch(one, "k", [y], block=32, grid=4, sanitize="strict")
    clean(launch, one, "k", [y], block=32, grid=1, sanitize="strict")      # one CTA


@kernel(in_specs=(Tile(4, u32),), out_specs=(Tile(1, u32),), block=(32, 1, 1), grid=(4, 1, 1))
def total(X, Y):
    t = reg.from_(ptx.special.tid.x(), u32)
    c = reg.from_(ptx.special.ctaid.x(), u32)
    with ptx.if_(t == 0):
        v = reg.scalar(u32)
        s = reg.scalar(u32)
        ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(c, u64) * 4))
        with ptx.if_(c == 0):
            ptx.inst.st.global_.u32(ptx.addr(Y.ptr()), v)
        with ptx.if_(c != 0):                                           # CTA 0 wrote it "before"
            ptx.inst.ld.global_.u32(s, ptx.addr(Y.ptr()))                # READ Y
            ptx.inst.st.global_.u32(ptx.addr(Y.ptr()), s + v)
    ptx.ret()


@kernel(in_specs=(Tile(4, u32),), out_specs=(Tile(1, u32),), block=(32, 1, 1), grid=(4, 1, 1))
def total_fixed(X, Y):
    t = reg.from_(ptx.special.tid.x(), u32)
    c = reg.from_(ptx.special.ctaid.x(), u32)
    with ptx.if_(t == 0):
        with ptx.if_(c == 0):                                           # one CTA owns Y
            s = reg.scalar(u32, 0)
            v = reg.scalar(u32)
            for i in range(4):
                ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr(), 4 * i))
                s += v
            ptx.inst.st.global_.u32(ptx.addr(Y.ptr()), s)
    ptx.ret()


def test_cross_cta_race_names_the_users_line():
    x = np.arange(1, 5, dtype=np.uint32)
    with pytest.raises(RaceError) as ei:
        total.interpret(x)
    msg = str(ei.value)
    assert msg.startswith(line_of(total.fn, "# READ Y") + ": race on global load ld.global.u32 ")
    assert "that CTA (0,0,0) stored earlier in this launch with a plain store" in msg
    assert clean(total_fixed.interpret, x, sanitize="strict").tolist() == [10]


def test_which_instructions_switch_the_cross_cta_check_off():
    """Only what could order the accesses of different CTAs: atomics and reductions on global
    memory, strong accesses, memory fences (not proxy fences), membar, cluster barriers."""
    import jax_pyptx
    from jax_pyptx.interpret.sanitizer.global_races import _synchronizes

    body = """fence.proxy.async.shared::cta; fence.acq_rel.gpu; membar.gl; red.global.add.u32 [%rd1], 1;
    redux.sync.add.u32 %r1, %r2, -1; atom.shared.add.u32 %r1, [%r2], 1; ld.acquire.gpu.global.u32 %r1, [%rd1];
    ld.global.nc.u32 %r1, [%rd1]; st.volatile.global.u32 [%rd1], %r1; barrier.cluster.arrive;
    mbarrier.arrive.shared.b64 %s, [%r1]; bar.sync 0; shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;"""
    m = jax_pyptx.parse(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 y)"
                        "{ .reg .u32 %r<4>; .reg .u64 %rd<3>; .reg .b64 %s;\n" + body + "\nret; }")
    got = [(i.opcode, _synchronizes(i)) for i in m.functions[0].body if hasattr(i, "opcode")]
    assert got == [("fence.proxy", False), ("fence", True), ("membar", True), ("red", True),
                   ("redux.sync", False), ("atom", False), ("ld", True), ("ld", False), ("st", True),
                   ("barrier.cluster.arrive", True), ("mbarrier.arrive", False), ("bar.sync", False),
                   ("shfl.sync", False), ("ret", False)]


# ----------------------------------------------------------------------------- ldmatrix / stmatrix over cp.async
_LDM_CP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .shared .align 16 .b8 buf[128];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 7;
  shl.b32 %r2, %r2, 4;
  mov.u32 %r3, buf;
  add.u32 %r3, %r3, %r2;
  mov.u32 %r4, 0;
  st.shared.v4.u32 [%r3], {%r4, %r4, %r4, %r4};
  bar.sync 0;
  setp.eq.u32 %p1, %r1, 5;
  @%p1 cp.async.cg.shared.global [%r3], [%rd1], 16;
  cp.async.commit_group;
  WAIT
  ACCESS
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
  ret;
}
"""
_LDM = "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r5}, [%r3];"
_STM = "mov.u32 %r5, %r1;\n  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r3], {%r5};"


@pytest.mark.parametrize("access, verb, line", [(_LDM, "the load reads", 26),
                                               (_STM, "the store writes", 27)])
def test_ldmatrix_and_stmatrix_over_a_cp_async_in_flight_are_reported(access, verb, line):
    """ldmatrix reads (stmatrix writes) a row a cp.async is still writing: reported like an
    ld.shared (st.shared), naming the lane that gave that row's address (lane 5: row 5, shared
    offset 0x50); after cp.async.wait_group the ldmatrix reads the copied row."""
    from jax_pyptx.errors import AsyncProxyError
    src = np.arange(4, dtype=np.uint32) + 0x10001
    out = np.zeros(32, np.uint32)
    ptx = _LDM_CP.replace("ACCESS", access)
    with pytest.raises(AsyncProxyError) as e:
        launch(ptx.replace("WAIT", ""), "k", [src, out], block=32)
    msg = str(e.value)
    assert msg.startswith(f"<ptx>:{line}: {verb} shared address 0x50 'buf' (+80) that `@%p1 "
                          "cp.async.cg.shared.global [%r3], [%rd1], 16;` (<ptx>:23 "), msg
    assert " by thread (5,0,0) of CTA (0,0,0) " in msg, msg
    launch(ptx.replace("WAIT", "cp.async.wait_group 0;"), "k", [src, out], block=32)
    if access is _LDM:
        # row 5 (lanes 20..23) holds the copied words, every other row zeros
        assert out.tolist() == [int(src[i % 4]) if i // 4 == 5 else 0 for i in range(32)]
