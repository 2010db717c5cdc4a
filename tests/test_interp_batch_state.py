"""State the batches of a launch share or rebuild: special registers made once per launch (and
per batch size) stay right in every batch, also after a register holding one is partly
overwritten; per-CTA special registers follow each batch's CTAs; threads that exit at different
times and a whole batch exiting at once leave the right live counts for barriers."""
from __future__ import annotations

import numpy as np

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import MAX_BATCH_SLOTS

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"

SPECIALS = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ctaid.y;
    mov.u32 %r5, %ntid.x;
    mov.u32 %r6, %laneid;
    and.b32 %r7, %r1, 1;
    setp.eq.u32 %p, %r7, 1;
    @%p add.u32 %r1, %r1, 1000;          // a partial write of the register holding %tid.x
    mad.lo.u32 %r8, %r4, %nctaid.x, %r3;  // linear CTA
    mad.lo.u32 %r9, %r2, %r5, %tid.x;    // linear thread
    mul.lo.u32 %r10, %r8, 256;
    add.u32 %r10, %r10, %r9;              // global thread
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r10, 16;
    add.u64 %rd1, %rd1, %rd2;
    st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r6};
    ret;
}
"""


def test_special_registers_in_every_batch_and_after_a_partial_write():
    grid = (13, 11)                                 # 143 CTAs of 256: three batches, the last partial
    assert 143 * 256 > 2 * MAX_BATCH_SLOTS and (143 * 256) % MAX_BATCH_SLOTS
    y = np.zeros((143 * 256, 4), np.uint32)
    for _ in range(2):                              # a second launch of the same program
        y[:] = 0
        launch(SPECIALS, "k", [y], grid=grid, block=(32, 8))
        cta = np.repeat(np.arange(143), 256)
        t = np.tile(np.arange(256), 143)
        tx = t % 32
        assert y[:, 0].tolist() == np.where(tx % 2 == 1, tx + 1000, tx).tolist()
        assert y[:, 1].tolist() == (t // 32).tolist()
        assert y[:, 2].tolist() == (cta % 13).tolist()
        assert y[:, 3].tolist() == (t % 32).tolist()


EXITS = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [y];
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, 96, %r1;
    mul.wide.u32 %rd2, %r3, 4;
    add.u64 %rd1, %rd1, %rd2;
    rem.u32 %r4, %r2, 3;
    mul.lo.u32 %r4, %r4, 32;
    setp.lt.u32 %p, %r1, %r4;           // CTA c: its first c % 3 warps leave early
    sub.u32 %r5, 96, %r4;
    @%p bra DONE;
    bar.sync 0, %r5;                     // the others wait for each other, not for those
    st.global.u32 [%rd1], %r3;
DONE:
    ret;
}
"""


def test_threads_exiting_early_leave_barriers_that_count_the_rest():
    y = np.full(400 * 96, 7, np.uint32)             # 400 CTAs: three batches
    assert 400 * 96 > 2 * MAX_BATCH_SLOTS
    launch(EXITS, "k", [y], grid=400, block=96)
    c = np.repeat(np.arange(400), 96)
    t = np.tile(np.arange(96), 400)
    assert y.tolist() == np.where(t < c % 3 * 32, 7, np.arange(400 * 96)).tolist()


def test_batches_of_one_slot_shape_and_other_thread_counts_share_no_live_threads():
    # blocks of 48 and of 64 threads both take 64 slots a CTA: the slot arrays every batch of a
    # shape shares (``specials.geometry``) keep each its own live threads
    text = SPECIALS.replace("mul.lo.u32 %r10, %r8, 256;", "mul.lo.u32 %r10, %r8, 64;")
    for threads in (48, 64, 48):
        y = np.full((4 * 64, 4), 7, np.uint32)
        launch(text, "k", [y], grid=4, block=threads)
        t = np.arange(4 * 64) % 64
        assert (y[t >= threads] == 7).all()
        assert y[t < threads, 3].tolist() == (t[t < threads] % 32).tolist()
