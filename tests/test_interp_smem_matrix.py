"""``smem_matrix.gather``: matrices of one layout at the same offset within the 1024-byte swizzle
period share one address pattern (an add and one gather); the result, and every report (past
the end of shared memory, misaligned elements, unwritten bytes), is the element-by-element
address computation's."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, UninitializedReadError
from jax_pyptx.interpret.ops import smem_matrix as SM
from jax_pyptx.interpret.state.memory import BankedSpace

LAYOUTS = [("K", "none", 128, 256), ("K", "32B", 16, 256), ("K", "64B", 16, 512), ("K", "128B", 16, 1024),
           ("MN", "none", 256, 128), ("MN", "32B", 512, 256), ("MN", "64B", 1024, 512),
           ("MN", "128B", 2048, 1024), ("K", "128B_base32B", 16, 1024)]


def _ctx(size=16384, nbanks=3, seed=0):
    sh = BankedSpace("shared", nbanks, size, track_init=True)
    sh.data[:] = np.random.default_rng(seed).integers(0, 256, len(sh.data), dtype=np.uint8)
    sh.init[:] = 1
    ctx = SimpleNamespace(shared=sh, sanitize=False, async_proxy=None,
                          error=lambda cls, msg, *a, **k: cls(msg))
    return ctx


def _descs(starts, swz, lbo, sbo, base):
    return [SM.Desc(s, lbo, sbo, base, swz) for s in starts]


def _general(ctx, banks, descs, major, mn, k, bits):
    """The element-by-element path, one matrix at a time."""
    out = []
    for b, d in zip(banks, descs):
        out.append(SM._gather_any(ctx, np.array([[b]], np.int64), np.array([d.start], np.int64), d, major,
                                  mn, k, bits, "B", True, None, 0, None)[0])
    return np.stack(out).reshape(len(descs), mn, k)


@pytest.mark.parametrize("major,swz,lbo,sbo", LAYOUTS)
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_same_offset_in_period_matches_element_by_element(major, swz, lbo, sbo, bits):
    ctx = _ctx()
    mn, k = 64, 256 // bits
    for starts, base in (([0, 0, 0], 0), ([2048, 2048, 2048], 0), ([1024 + 32, 4096 + 32, 32], 0),
                         ([3 * 128, 5 * 1024 + 3 * 128, 3 * 128], 3), ([64, 2112, 1088], 0)):
        descs = _descs(starts, swz, lbo, sbo, base)
        got = SM.gather(ctx, [0, 1, 2], descs, major, mn, k, bits, "B")
        assert np.array_equal(got, _general(ctx, [0, 1, 2], descs, major, mn, k, bits))


@pytest.mark.parametrize("major,swz,lbo,sbo", LAYOUTS)
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_layouts_read_as_16_byte_runs(major, swz, lbo, sbo, bits):
    """Every layout's core matrices are 16-byte rows (along k when K-major, along mn when
    MN-major), so the comparison above goes through the run-by-run gather, not the fallback."""
    mn, k = 64, 256 // bits
    for s_lo in (0, 32, 3 * 128):
        nb, idx, across = SM._relative(major, swz, mn, k, bits, lbo, sbo, 0, s_lo)[5]
        assert (nb, across, len(idx)) == (16, major == "MN", mn * k * bits // 128)


def test_reports_are_the_element_by_element_ones():
    ctx = _ctx(size=4096)
    sh = ctx.shared
    descs = _descs([2048 + 512, 512], "128B", 16, 1024, 0)
    with pytest.raises(InterpreterError, match=r"B: the matrix \(Desc\(start=0xa00, lbo=16, sbo=1024, base=0, "
                                               r"swizzle=128B\), 64x16 elements of 16 bits, K-major\) reaches "
                                               r"shared address 0x29be, past the 4096 bytes"):
        SM.gather(ctx, [0, 1], descs, "K", 64, 16, 16, "B")
    with pytest.raises(InterpreterError, match=r"reaches shared address 0x29be, past the 4096 bytes"):
        _general(ctx, [0, 1], descs, "K", 64, 16, 16)
    with pytest.raises(InterpreterError, match="B: element addresses are not aligned to 4 bytes"):
        SM.gather(ctx, [0, 1], _descs([2, 2], "none", 128, 256, 0), "K", 8, 4, 32, "B")
    sh.init[1 * sh.stride + 0x390] = 0           # CTA 1: read by row 3's chunk 6 (swizzled to 1)
    descs = _descs([512, 512], "128B", 16, 1024, 0)
    with pytest.raises(UninitializedReadError, match="B reads shared address 0x390 that no thread or copy"):
        SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")
    with pytest.raises(UninitializedReadError, match="B reads shared address 0x390 that no thread or copy"):
        _general(ctx, [0, 1], descs, "K", 8, 64, 16)
    got = SM.gather(ctx, [0, 0], descs, "K", 8, 64, 16, "B")        # CTA 0's bytes are all written
    assert np.array_equal(got, _general(ctx, [0, 0], descs, "K", 8, 64, 16))


def test_bytes_copies_wrote_answer_without_the_flags():
    """A copy's spans are kept per CTA (``BankedSpace.copied``): an operand whose periods
    copies wrote whole is known written from them; one a copy left partly unwritten is still
    checked byte by byte (and reported)."""
    sh = BankedSpace("shared", 2, 4096, track_init=True)
    ctx = SimpleNamespace(shared=sh, sanitize=False, async_proxy=None, error=lambda cls, msg, *a, **k: cls(msg))
    descs = _descs([1024, 1024], "128B", 16, 1024, 0)            # 8 rows of 128 bytes: [1024, 2048)
    for c in (0, 1):                                               # two boxes a CTA, as a copy writes them
        for lo, hi in ((1024, 1536), (1536, 2048)):
            sh.init[c * sh.stride + lo:c * sh.stride + hi] = 1
            sh.note_copied(c, lo, hi)
    assert sh.copied_over(0, 1024, 2048) and not sh.copied_over(0, 1000, 2048)
    sh.init[1 * sh.stride + 1024] = 0       # (not a copy's doing: shows that the flags are not read)
    SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")
    sh2 = BankedSpace("shared", 2, 4096, track_init=True)
    ctx.shared = sh2
    for c in (0, 1):
        sh2.init[c * sh2.stride + 1024:c * sh2.stride + 1536] = 1
        sh2.note_copied(c, 1024, 1536)      # half the period: the rows past it are unwritten
    with pytest.raises(UninitializedReadError, match="B reads shared address 0x640 that no thread or copy"):
        SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")


def test_copied_spans_follow_one_another():
    """``copied_over``: the copy holding the span's first byte and those that follow it end to
    end reach the span's end; a gap between copies is not known written."""
    sh = BankedSpace("shared", 2, 4096, track_init=True)
    for lo, hi in ((0, 128), (128, 256), (128, 192), (512, 640), (640, 700)):
        sh.note_copied(0, lo, hi)
    assert sh.copied_over(0, 0, 256) and sh.copied_over(0, 64, 200) and sh.copied_over(0, 600, 700)
    assert not sh.copied_over(0, 0, 257) and not sh.copied_over(0, 256, 300) and not sh.copied_over(0, 200, 600)
    assert not sh.copied_over(0, 700, 701) and not sh.copied_over(1, 0, 128)
    sh.note_copied(0, 256, 512)                  # the gap filled: one run from 0 to 700
    assert sh.copied_over(0, 64, 700) and not sh.copied_over(0, 64, 701)


@pytest.mark.parametrize("major,swz,lbo,sbo", LAYOUTS)
def test_a_remembered_plan_reads_and_checks_as_the_first_call(major, swz, lbo, sbo):
    """``plans``: the second gather of the same descriptors and CTAs reuses the addresses the
    first worked out (one plan), reads the same values (as bits and, ``t``, as bf16 values), and
    still checks the bytes' state at the time of the read: unwritten bytes are reported."""
    ctx = _ctx()
    sh = ctx.shared
    plans = {}
    descs = _descs([1024 + 32, 4096 + 32, 32], swz, lbo, sbo, 0)
    want = _general(ctx, [0, 1, 2], descs, major, 64, 16, 16)
    for _ in range(2):
        assert np.array_equal(SM.gather(ctx, [0, 1, 2], descs, major, 64, 16, 16, "B", plans=plans), want)
    assert len(plans) == 1
    vals = SM.gather(ctx, [0, 1, 2], descs, major, 64, 16, 16, "B", t="bf16", plans=plans)
    np.testing.assert_array_equal(vals.view(np.uint64), SM.values(want, "bf16").view(np.uint64))
    assert len(plans) == 1
    sh.written.clear()
    sh.init[2 * sh.stride + 32:2 * sh.stride + 64] = 0       # CTA 2's matrix: never written now
    with pytest.raises(UninitializedReadError, match="B reads shared address 0x[0-9a-f]+ that no thread or copy"):
        SM.gather(ctx, [0, 1, 2], descs, major, 64, 16, 16, "B", plans=plans)
    other = _ctx(size=20480)                                 # another geometry: a plan of its own
    SM.gather(other, [0, 1, 2], _descs([1024, 2048, 0], swz, lbo, sbo, 0), major, 64, 16, 16, "B", plans=plans)
    SM.gather(other, [0, 1, 2], descs, major, 64, 16, 16, "B", plans=plans)
    assert len(plans) == 3
