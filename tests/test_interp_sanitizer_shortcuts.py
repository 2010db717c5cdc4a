"""The sanitizer's per-access shortcuts of issue 24 (warp-specialized kernels) report what the
full bookkeeping reports: a first-write mask shared by the registers one set of threads writes
first (copied when other threads write one of them), a register found written on a set of
threads remembered for good, ``wgmma.fence`` stamps kept as pending (slots, epoch) writes, a
warpgroup's fence epochs looked up once per fence, and a tensor-core operand's written spans
remembered under a cheap key."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.ops import smem_matrix as SM
from jax_pyptx.interpret.sanitizer import wgfence

from .test_interp_race_fast_paths import _ctx
from .test_interp_wgmma_blocks import _Ctx, _g

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

# warp 0 writes %r2 and %r3 first (one shared mask), warp 1 then writes %r2 only
ROLES = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<5>; .reg .u64 %rd<4>; .reg .pred %p1;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    setp.lt.u32 %p1, %r1, 32;
    @!%p1 bra OTHER;
    mov.u32 %r2, 5;
    mov.u32 %r3, 6;
    add.u32 %r4, %r2, %r3;
    bra.uni JOIN;
OTHER:
    mov.u32 %r2, 9;
    add.u32 %r4, %r2, %r2;
JOIN:
    st.global.u32 [%rd3], %r2;
    SINK
    ret;
}"""


def test_a_shared_first_write_mask_is_copied_when_other_threads_write_the_register():
    """%r2 and %r3 share warp 0's first-write mask; warp 1's write of %r2 must not mark %r3
    written for warp 1: its store of %r3 is reported for thread 32."""
    y = np.zeros(64, np.uint32)
    launch(ROLES.replace("SINK", ""), "k", [y], block=64)
    assert y.tolist() == [5] * 32 + [9] * 32
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %r3: st.global.u32 "
                                                     r"\[%rd3\], %r3; by thread \(32,0,0\) of CTA \(0,0,0\)"):
        launch(ROLES.replace("SINK", "st.global.u32 [%rd3], %r3;"), "k", [y], block=64)
    launch(ROLES.replace("SINK", "st.global.u32 [%rd3], %r4;"), "k", [y], block=64)   # both wrote %r4
    assert y.tolist() == [11] * 32 + [18] * 32


def test_a_register_found_written_by_one_role_is_still_checked_for_another():
    """The consumer warps (1, 2) read %r2 they wrote, every loop iteration (found written once);
    the producer warp 0 never wrote it and its read after the loop is reported (thread 0)."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p<3>;
        ld.param.u64 %rd1, [y];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 4;
        add.u64 %rd3, %rd1, %rd2;
        setp.lt.u32 %p1, %r1, 32;
        @%p1 bra DONE;
        mov.u32 %r2, 1;
        mov.u32 %r5, 0;
    LOOP:
        add.u32 %r2, %r2, %r2;
        add.u32 %r5, %r5, 1;
        setp.lt.u32 %p2, %r5, 4;
        @%p2 bra LOOP;
        st.global.u32 [%rd3], %r2;
    DONE:
        SINK
        ret;
    }"""
    y = np.zeros(96, np.uint32)
    launch(prog.replace("SINK", ""), "k", [y], block=96)
    assert y.tolist() == [0] * 32 + [16] * 64
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %r2: st.global.u32 "
                                                     r"\[%rd3\], %r2; by thread \(0,0,0\) of CTA \(0,0,0\)"):
        launch(prog.replace("SINK", "st.global.u32 [%rd3], %r2;"), "k", [y], block=96)


def test_pending_fence_stamps_of_one_warpgroup_replace_each_other_and_report_the_writer():
    """A warpgroup rewriting an accumulator register every iteration keeps one pending write
    (the same slots); after the other warpgroup's fence only the writer is reported."""
    ctx = _Ctx(256, ["c0"])
    fs = wgfence.FenceState(ctx)
    wg0, wg1 = _g(0, 128), _g(128, 256)
    fs.fence(wg0)
    fs.fence(wg1)
    for i in range(6):
        fs.wrote(ctx.at("mul.f32"), "c0", wg1 if i % 2 else wg0)
    assert len(fs.pend["c0"]) == 2 and "c0" not in fs.stamp          # nothing stamped yet
    fs.fence(wg1)
    fs.check(ctx, wg1, ["c0"], [])
    assert ctx.warned == []
    fs.check(ctx, wg0, ["c0"], [])
    assert len(ctx.warned) == 1 and "accumulator register c0" in ctx.warned[0][1] and ctx.warned[0][2] == 0
    fs.fence(wg0)
    fs.check(ctx, wg0, ["c0"], [])
    assert len(ctx.warned) == 1


def test_pending_fence_stamps_of_many_slot_sets_are_stamped_in_order():
    """Writes by more distinct slot sets than ``PEND`` are stamped into the array in issue
    order; a check then finds the one thread written after its fence (thread 160: lane 32 of
    warpgroup 1), and a clean by the next mma_async clears it."""
    ctx = _Ctx(256, ["a0"])
    fs = wgfence.FenceState(ctx)
    wg0, wg1 = _g(0, 128), _g(128, 256)
    fs.fence(wg0)
    fs.fence(wg1)
    for lo in (0, 32, 128, 192, 224):                   # five warps: more than PEND
        fs.wrote(ctx.at("mov.b32"), "a0", _g(lo, lo + 32))
    assert "a0" in fs.stamp and "a0" not in fs.pend
    fs.fence(wg0)
    fs.fence(wg1)                                        # every earlier write is fenced
    fs.wrote(ctx.at("mov.b32"), "a0", _g(160, 192))      # one warp of warpgroup 1 writes again
    fs.check(ctx, wg0, [], ["a0"])
    assert ctx.warned == []
    fs.check(ctx, wg1, [], ["a0"])
    assert len(ctx.warned) == 1 and "A-fragment register a0" in ctx.warned[0][1] and ctx.warned[0][2] == 32
    fs.clean(wg1, ["a0"])
    fs.check(ctx, wg1, [], ["a0"])
    assert len(ctx.warned) == 1


def test_a_fence_between_two_checks_of_one_group_is_seen():
    """The fence epochs of a warpgroup are looked up once per fence: a fence between two
    checks of the same slot array (no write since) turns a report into none."""
    ctx = _Ctx(128, ["c0"])
    fs = wgfence.FenceState(ctx)
    wg = _g(0, 128)
    fs.check(ctx, wg, ["c0"], [])
    assert len(ctx.warned) == 1 and "no wgmma.fence before" in ctx.warned[0][1]
    fs.fence(wg)
    fs.wrote(ctx.at("mul.f32"), "c0", wg)
    fs.check(ctx, wg, ["c0"], [])
    assert len(ctx.warned) == 2
    fs.fence(wg)
    fs.check(ctx, wg, ["c0"], [])
    assert len(ctx.warned) == 2


def test_an_operand_reaching_into_an_unwritten_period_is_checked_despite_a_known_one():
    """The first 8 rows of a K-major operand (core matrices 128 bytes apart along K, row groups
    1024 apart: one 1024-byte period, all written) are remembered
    under the gather's key; 16 rows from the same start reach the next period, where one byte
    is unwritten: reported, and so are the same 16 rows read again."""
    ctx = _ctx()
    sh = ctx.shared
    sh.init[1 * sh.stride + 1024 + 200] = 0               # CTA 1, second period
    descs = [SM.Desc(0, 128, 1024, 0, "none"), SM.Desc(0, 128, 1024, 0, "none")]
    raw = SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")
    assert raw.shape == (2, 8, 64)
    n = len(sh.written)
    SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")
    assert len(sh.written) == n                           # found under the remembered key
    for _ in range(2):
        with pytest.raises(UninitializedReadError, match="reads shared address 0x4c8 that no thread or copy"):
            SM.gather(ctx, [0, 1], descs, "K", 16, 64, 16, "B")
