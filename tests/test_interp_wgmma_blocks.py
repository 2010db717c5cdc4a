"""The wgmma accumulator kept as a tile (``asyncregs`` blocks) when the warpgroups of a CTA
issue apart: the block holds one warpgroup's tile as the operation made it, then every warp's
when a second warpgroup joins, and a ``wait_group`` of one warpgroup delivers its registers
while the other's stay pending. The delivery writes all the accumulator's registers at once
(``Context.write_rows``) with the same definedness bookkeeping as one write per register. Also
the ``wgmma.fence`` rule's bookkeeping (``wgfence``) per warpgroup."""
from __future__ import annotations

import types

import numpy as np
import pytest

from jax_pyptx.errors import AsyncHazardError, SanitizerWarning, UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.sanitizer import wgfence

from .mma_util import acc_matrix, place, rand, wgmma_desc, wgmma_kernel

MMA = "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, %da, %db, SD, SA, 1, 0, 0;\n"
COMMIT = "  wgmma.commit_group.sync.aligned;\n"
WAIT = "  wgmma.wait_group.sync.aligned 0;\n"


def two_warpgroups(body):
    """``wgmma_kernel`` for 256 threads (two warpgroups; %r5 = the thread's warpgroup)."""
    ptx = wgmma_kernel(body, 4).replace("add.u32 %r2, %r2, 128;", "add.u32 %r2, %r2, 256;")
    return ptx.replace("  mov.u32 %r2, %r1;\n", "  mov.u32 %r2, %r1;\n  shr.u32 %r5, %r1, 7;\n", 1)


def image(seed):
    rng = np.random.default_rng(seed)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img = np.zeros(16384, np.uint8)
    place(img, 0, A, "f16", "K", "none", lbo=8 * 128, sbo=128)
    place(img, 8192, B.T, "f16", "K", "none", lbo=128, sbo=128)
    return img, A.astype(np.float64) @ B.astype(np.float64)


def run(ptx, img, **kw):
    out = np.zeros(256 * 4, np.uint32)
    launch(ptx, "k", [img, out, np.uint64(wgmma_desc(0, 1024, 128)), np.uint64(wgmma_desc(8192, 128, 128)),
                      np.zeros(256 * 4, np.uint32), np.zeros((256, 4), np.uint32)], block=256, **kw)
    return out.reshape(256, 4)


def mma(sd, sa=1):
    return MMA.replace("SD", str(sd)).replace("SA", str(sa))


# warpgroup 1 issues first (a chain of two), then warpgroup 0 (negated), each on its own path,
# so the block holds warpgroup 1's tile alone before warpgroup 0's warps join it
APART = ("  setp.eq.u32 %p1, %r5, 0;\n  @%p1 bra WG0;\n" + mma(0) + mma(1) + COMMIT + "  bra.uni JOIN;\n"
         "WG0:\n" + mma(0, -1) + COMMIT + "JOIN:\n" + WAIT)


@pytest.mark.parametrize("sanitize", [True, False])
def test_warpgroups_issuing_apart_share_one_accumulator_block(sanitize):
    img, D = image(40)
    out = run(two_warpgroups(APART), img, sanitize=sanitize)
    np.testing.assert_allclose(acc_matrix(out[:128].reshape(-1), 8), -D, rtol=1e-6)
    np.testing.assert_allclose(acc_matrix(out[128:].reshape(-1), 8), 2 * D, rtol=1e-6)


# both warpgroups issue together; warpgroup 0 waits (its registers delivered) and adds a
# register while warpgroup 1's are still pending, then warpgroup 1 chains once more and waits
PARTIAL = (mma(0) + COMMIT + "  setp.eq.u32 %p1, %r5, 0;\n  @%p1 bra WG0;\n" + mma(1) + COMMIT + WAIT +
           "  bra.uni JOIN;\nWG0:\n" + WAIT + "  add.f32 %c0, %c0, %c0;\nJOIN:\n" + WAIT)


def test_one_warpgroup_retires_while_the_other_chains():
    img, D = image(41)
    out = run(two_warpgroups(PARTIAL), img)
    got0 = acc_matrix(out[:128].reshape(-1), 8)
    want0 = D.copy()
    c0 = (np.arange(64) % 16 < 8)[:, None] & (np.arange(8) % 2 == 0)[None, :]
    want0[c0] *= 2               # register %c0: rows 16w + lane/4, columns 2 * (lane % 4)
    np.testing.assert_allclose(got0, want0, rtol=1e-6)
    np.testing.assert_allclose(acc_matrix(out[128:].reshape(-1), 8), 2 * D, rtol=1e-6)


# only warpgroup 1 runs the mma; %c0 and %c1 were written by every thread before it, %c2 and
# %c3 never: after the wait warpgroup 1 has all four defined and warpgroup 0 only the first two
ONE = ("  mov.f32 %c0, 0f00000000;\n  mov.f32 %c1, 0f00000000;\n  setp.eq.u32 %p1, %r5, 0;\n"
       "  @%p1 bra JOIN;\n" + mma(0) + COMMIT + WAIT + "JOIN:\n  bar.sync 0;\n")


def test_delivery_marks_fresh_registers_defined_for_the_issuing_threads_only():
    img, D = image(42)
    ptx = two_warpgroups(ONE)
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %c2"):
        run(ptx, img)
    # the same kernel storing only %c0 / %c1 from warpgroup 0 runs clean
    fixed = ptx.replace("  st.global.b32 [%rd5+8], %c2;\n  st.global.b32 [%rd5+12], %c3;\n",
                        "  setp.eq.u32 %p2, %r5, 0;\n  @!%p2 st.global.b32 [%rd5+8], %c2;\n"
                        "  @!%p2 st.global.b32 [%rd5+12], %c3;\n")
    assert fixed != ptx
    out = run(fixed, img)
    np.testing.assert_allclose(acc_matrix(out[128:].reshape(-1), 8), D, rtol=1e-6)
    assert not out[:128, :2].any() and not out[:128, 2:].any()


# ----------------------------------------------------------------------------- wgfence
class _Ctx:
    """What ``FenceState`` uses of a context: the program's watched keys, slot count, the
    current instruction, and ``warn`` (recorded)."""

    def __init__(self, n, keys):
        self.N = n
        self.prog = types.SimpleNamespace(wgmma_regs=set(keys))
        self.cur = None
        self.warned = []

    def at(self, opcode):
        self.cur = types.SimpleNamespace(ins=types.SimpleNamespace(opcode=opcode, loc=None),
                                         text=opcode, where=lambda: "here")
        return self

    def warn(self, cls, msg, g, lane):
        self.warned.append((cls, msg, lane))


def _g(lo, hi):
    return types.SimpleNamespace(idx=np.arange(lo, hi))


def test_fence_epochs_per_warpgroup():
    ctx = _Ctx(256, ["c0", "c1", "a0"])
    fs = wgfence.FenceState(ctx)
    wg0, wg1 = _g(0, 128), _g(128, 256)
    fs.check(ctx, wg1, ["c0"], [])                       # no fence yet: reported
    assert len(ctx.warned) == 1 and "no wgmma.fence before" in ctx.warned[0][1]
    fs.fence(wg0)
    fs.fence(wg1)
    fs.wrote(ctx.at("mul.f32"), "c0", wg0)                # after both fences, by warpgroup 0 only
    fs.check(ctx, wg1, ["c0", "c1"], ["a0"])              # warpgroup 1: clean
    assert len(ctx.warned) == 1
    fs.check(ctx, wg0, ["c1"], ["a0"])                    # c0 not read: clean
    assert len(ctx.warned) == 1
    fs.check(ctx, wg0, ["c1", "c0"], [])
    assert len(ctx.warned) == 2 and "accumulator register c0" in ctx.warned[1][1] and ctx.warned[1][2] == 0
    fs.wrote(ctx.at("wgmma.wait_group.sync.aligned"), "a0", wg0)   # a delivery: not a write
    fs.check(ctx, wg0, [], ["a0"])
    assert len(ctx.warned) == 2
    fs.fence(wg1)                                         # another warpgroup's fence: still dirty
    fs.check(ctx, wg0, ["c0"], [])
    assert len(ctx.warned) == 3
    fs.clean(wg0, ["c0"])                                 # an mma_async overwrote it
    fs.check(ctx, wg0, ["c0"], [])
    assert len(ctx.warned) == 3
    fs.wrote(ctx.at("mov.b32"), "a0", wg1)
    fs.fence(wg1)                                         # the writer's own fence: clean
    fs.check(ctx, wg1, [], ["a0"])
    assert len(ctx.warned) == 3
    fs.wrote_all(ctx.at("mov.b32"), ["c1", "x", "a0"], _g(128, 160))   # x is not watched
    fs.check(ctx, wg1, [], ["a0"])
    assert len(ctx.warned) == 4 and "A-fragment register a0" in ctx.warned[3][1] and ctx.warned[3][2] == 0
    assert "x" not in fs.stamp


def test_missing_fence_between_a_rescale_and_the_next_mma_is_reported_per_warpgroup():
    """Warpgroup 1 rescales its accumulator after the fence, warpgroup 0 does not: the
    warning names warpgroup 1's thread (128) and the run goes on."""
    img, D = image(43)
    body = (mma(0) + COMMIT + WAIT + "  wgmma.fence.sync.aligned;\n  setp.eq.u32 %p1, %r5, 1;\n"
            "  @%p1 add.f32 %c1, %c1, %c1;\n" + mma(1) + COMMIT + WAIT)
    with pytest.warns(SanitizerWarning, match=r"reads accumulator register %c1, which .*add.f32 %c1, %c1, %c1.* "
                                              r"wrote after the warpgroup's last wgmma.fence.*thread \(128,0,0\)"):
        out = run(two_warpgroups(body), img)
    np.testing.assert_allclose(acc_matrix(out[:128].reshape(-1), 8), 2 * D, rtol=1e-6)
    with pytest.raises(AsyncHazardError, match="wrote after the warpgroup's last wgmma.fence"):
        run(two_warpgroups(body), img, sanitize="strict")
