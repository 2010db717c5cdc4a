"""The shared-memory sanitizer shortcuts of issue 24 (Ampere GEMM: ldmatrix, cp.async) report
what the full checks report: an uninitialized-read check that passes on one slice of the flags
over the rows' hull (falling back to the rows when the hull holds an unwritten byte), and a
cp.async landing that reuses the destinations' bounds, flat starts and alignment found at issue
(every copy of an instruction at once, or some of them)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError, UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state import memory as M

from .test_interp_mma import ld_kernel


def _skip_store(prog, tid):
    """``ld_kernel`` with thread ``tid`` of every CTA not writing its 16 bytes of shared memory."""
    return prog.replace(".reg .u32 %t,", ".reg .pred %pp; .reg .u32 %t,").replace(
        "st.shared.v4.u32 [%a]", f"setp.ne.u32 %pp, %t, {tid};\n    @%pp st.shared.v4.u32 [%a]")


@pytest.mark.parametrize("tid, lane, addr", [(2, 16, 0x20), (5, 9, 0x50)])
def test_ldmatrix_reports_an_unwritten_row_inside_the_hull(tid, lane, addr):
    """The rows' hull holds the unwritten 16 bytes: the slice check fails and the rows report
    the first unwritten one, as before."""
    src = np.arange(256, dtype=np.uint16)
    with pytest.raises(UninitializedReadError) as e:
        launch(_skip_store(ld_kernel(4, False), tid), "k", [src, np.zeros((32, 4), np.uint32)], block=32)
    assert str(e.value) == (
        f"<ptx>:28: uninitialized shared ldmatrix load ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
        f"{{%r0, %r1, %r2, %r3}}, [%a]; by thread ({lane},0,0) of CTA (0,0,0): shared address "
        f"{addr:#x} 'sm' (+{addr}) is read before any thread of this CTA wrote it [instruction #17 of k]")


def test_ldmatrix_unwritten_bytes_between_the_rows_are_not_reported():
    """.x2 reads bytes 0-31 of each 64-byte row: thread 2's unwritten bytes 32-47 lie in the
    hull but in no row, so the slice check fails and the rows pass (values as loaded)."""
    src = np.arange(256, dtype=np.uint16)
    dst = np.zeros((32, 2), np.uint32)
    launch(_skip_store(ld_kernel(2, False), 2), "k", [src, dst], block=32)
    full, lane = src.reshape(8, 32), np.arange(32)
    for i in range(2):
        m = full[:, 8 * i:8 * i + 8]
        want = m[lane // 4, 2 * (lane % 4)].astype(np.uint32) | (m[lane // 4, 2 * (lane % 4) + 1].astype(np.uint32) << 16)
        assert dst[:, i].tolist() == want.tolist()


def test_ldmatrix_over_several_ctas_reports_the_cta_that_did_not_write():
    """Two CTAs in one batch: the slice spans both banks; thread 5 of each skips its store, and
    the report names the first reader of the first CTA."""
    src = np.arange(256, dtype=np.uint16)
    with pytest.raises(UninitializedReadError, match=r"by thread \(9,0,0\) of CTA \(0,0,0\): shared address "
                                                     r"0x50 'sm' \(\+80\) is read before any thread"):
        launch(_skip_store(ld_kernel(4, False), 5), "k", [src, np.zeros((32, 4), np.uint32)], block=32, grid=2)


def _space():
    sh = M.BankedSpace("shared", 2, 1024, True, layout=[("buf", 0, 1024)])
    sh.mark_init(np.array([0, 1]), np.array([0, 0], np.uint64), 512)       # bytes 0-511 of both banks
    return sh


def test_check_init_passes_on_the_hull_slice_without_the_rows(monkeypatch):
    """Rows filling a written hull pass on the slice: the per-row comparison is never made."""
    sh = _space()
    banks = np.repeat([1, 0], 32)
    offs = np.tile(np.arange(0, 512, 16), 2).astype(np.uint64)
    monkeypatch.setattr(M, "_rows_defined", lambda *a: pytest.fail("rows compared"))
    sh.check_init(banks, offs, 2, 8, span=(0, 512))


@pytest.mark.parametrize("span", [None, (0, 528)])
def test_check_init_reports_the_same_row_with_or_without_the_hull(span):
    """A row reaching an unwritten byte (bank 1, offset 512): the same fault with a span (the
    slice fails, the rows report) as without one."""
    sh = _space()
    with pytest.raises(M.MemoryFault) as e:
        sh.check_init(np.array([0, 1, 1]), np.array([0, 16, 512], np.uint64), 2, 8, span=span)
    f = e.value
    assert (f.kind, f.lane, f.address) == ("uninitialized", 2, 512)
    assert f.detail == "shared address 0x200 'buf' (+512) is read before any thread of this CTA wrote it"


def test_check_init_of_sparse_rows_skips_the_slice(monkeypatch):
    """Rows much smaller than their hull are compared one by one (no pass over the hull)."""
    sh = _space()
    seen = []
    real = M._rows_defined
    monkeypatch.setattr(M, "_rows_defined", lambda *a: seen.append(1) or real(*a))
    sh.check_init(np.array([0, 0]), np.array([0, 496], np.uint64), 2, 1, span=(0, 498))
    assert seen == [1]


CP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  .shared .align 16 .b8 buf[1024];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 16;
  add.u64 %rd4, %rd1, %rd3;
  mov.u32 %r2, buf;
  mad.lo.u32 %r2, %r1, 16, %r2;
  PRE
  cp.async.cg.shared.global [%r2], [%rd4], 16;
  cp.async.commit_group;
  setp.lt.u32 %p, %r1, 32;
  @%p cp.async.wait_group 0;
  WAIT
  ld.shared.u32 %r3, [%r2+4];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
}
"""


@pytest.mark.parametrize("pre, err, msg", [
    ("", UninitializedReadError,
     "<ptx>:25: uninitialized shared load ld.shared.u32 %r3, [%r2+4]; by thread (32,0,0) of CTA (0,0,0): "
     "shared address 0x204 'buf' (+516) is read before any thread of this CTA wrote it (a cp.async to "
     "this address is still pending: missing cp.async.wait_group / wait_all?) [instruction #13 of k]"),
    ("st.shared.u32 [%r2+4], %r1;", AsyncProxyError,
     "<ptx>:25: the load reads shared address 0x204 'buf' (+516) that `cp.async.cg.shared.global [%r2], "
     "[%rd4], 16;` (<ptx>:20 (instruction #10 of k)) is still writing: complete it first "
     "(cp.async.commit_group, then cp.async.wait_group / cp.async.wait_all in the copying threads, and a "
     "barrier before other threads touch the bytes): ld.shared.u32 %r3, [%r2+4]; by thread (32,0,0) of "
     "CTA (0,0,0) [instruction #14 of k]"),
])
def test_cp_async_landing_of_some_copies_leaves_the_others_in_flight(pre, err, msg):
    """Warp 0 waits, warp 1 does not: warp 0's copies land (a part of the instruction's record),
    warp 1's read of its own destination is reported (never written / still in flight)."""
    src = np.arange(256, dtype=np.uint32)
    with pytest.raises(err) as e:
        launch(CP.replace("PRE", pre).replace("WAIT", ""), "k", [src, np.zeros(64, np.uint32)], block=64)
    assert str(e.value) == msg


@pytest.mark.parametrize("pre", ["", "st.shared.u32 [%r2+4], %r1;"])
def test_cp_async_copies_left_by_a_partial_landing_land_at_the_next_wait(pre):
    """The copies left in flight by warp 0's wait land at the wait of every thread: every thread
    reads its copy."""
    src = np.arange(256, dtype=np.uint32)
    out = np.zeros(64, np.uint32)
    launch(CP.replace("PRE", pre).replace("WAIT", "cp.async.wait_group 0;"), "k", [src, out], block=64)
    assert out.tolist() == src[1::4].tolist()


@pytest.mark.parametrize("off, err, msg", [
    ("5120", "ProvenanceError",
     "<ptx>:21: wrong-buffer global async copy cp.async.cg.shared.global [%r2], [%rd4], 16; by thread (0,0,0) "
     "of CTA (0,0,0): address 0x7f0000001400 was computed from the pointer to allocation #0 (param 'src' "
     "(uint32[256]), 1024 bytes at 0x7f0000000000) but lands 4112 bytes past the end of it, inside "
     "allocation #1 (param 'out' (uint32[64]), 256 bytes at 0x7f0000001400) (byte 0): an access through the "
     "wrong pointer, or an index past the end of its buffer [instruction #10 of k]"),
    ("16", "OutOfBoundsError",
     "<ptx>:21: out-of-bounds global async copy cp.async.cg.shared.global [%r2], [%rd4], 16; by thread "
     "(63,0,0) of CTA (0,0,0): address 0x7f0000000400 is 16 bytes past the end of allocation #0 (param "
     "'src' (uint32[256]), 1024 bytes at 0x7f0000000000) [instruction #10 of k]"),
])
def test_cp_async_sources_checked_on_the_bounds_the_load_shares(off, err, msg):
    """The source addresses' bounds (one ``Span``) serve the provenance check and the load: a
    source in the wrong buffer, and one past the end of its own, are reported as before."""
    import jax_pyptx.errors as E
    k = CP.replace("PRE", "").replace("WAIT", "cp.async.wait_group 0;").replace(
        "add.u64 %rd4, %rd1, %rd3;", f"add.u64 %rd4, %rd1, %rd3;\n  add.u64 %rd4, %rd4, {off};")
    with pytest.raises(getattr(E, err)) as e:
        launch(k, "k", [np.arange(256, dtype=np.uint32), np.zeros(64, np.uint32)], block=64)
    assert str(e.value) == msg


def test_generic_stores_mark_their_banks_dirty_again_after_a_fence():
    """A store's banks are marked dirty (async-proxy fence rule) unless every bank already is:
    after a fence of bank 0, a store to bank 0 marks it again; one to bank 1 (still marked)
    leaves the marks as they are; the bytes are marked either way."""
    from types import SimpleNamespace
    from jax_pyptx.interpret.sanitizer.async_proxy import fence_async
    sh = M.BankedSpace("shared", 2, 1024, True)
    sh.track_dirty()
    sh.mark_written(np.array([0, 1]), np.array([0, 0], np.uint64), 16)
    assert sh.dirty_bank.tolist() == [True, True]
    fence_async(SimpleNamespace(shared=sh, async_proxy=None), np.array([0]))
    assert sh.dirty_bank.tolist() == [False, True]
    assert not sh.dirty[:1024].any() and sh.dirty[1024:1040].all()
    sh.mark_written(np.array([1]), np.array([64], np.uint64), 16)
    assert sh.dirty_bank.tolist() == [False, True]
    sh.mark_written(np.array([0]), np.array([32], np.uint64), 16)
    assert sh.dirty_bank.tolist() == [True, True]
    assert np.flatnonzero(sh.dirty).tolist() == list(range(32, 48)) + list(range(1024, 1040)) + list(range(1088, 1104))


@pytest.mark.parametrize("off, shape, strides, nb", [
    (8, [2, 4], [104, 24], 8),        # 8-byte items (an mma fragment's v2.f32 stores)
    (4, [3], [12], 4),                # 4-byte items
    (2, [5], [6], 2),                 # 2-byte items
    (3, [4], [7], 5),                 # byte by byte
])
def test_per_byte_output_flags_of_a_nest_set_and_read_a_word_at_a_time(off, shape, strides, nb):
    """An output's per-byte written flags of a nest's elements are set and compared in items
    of up to 8 bytes: exactly the elements' bytes, none around them."""
    al = M.Allocation(0, 0x1000, 256, "y", np.zeros(256, np.uint8))
    al.start_uninitialized(0, 250)                      # 250: not on a chunk, flags per byte
    al.mark_nest(off, shape, strides, nb)
    assert al._unit == 1
    want = np.zeros(256, np.uint8)
    want[250:] = 1
    for i in np.ndindex(*shape):
        a = off + sum(k * s for k, s in zip(i, strides))
        want[a:a + nb] = 1
    np.testing.assert_array_equal(al.init, want)
    assert al.nest_written(off, shape, strides, nb)
    assert not al.nest_written(off + nb, shape, strides, nb)     # (the same item size, shifted)
    assert not al.nest_written(off + 1, shape, strides, nb) and not al.nest_written(off, shape, strides, nb + 1)


def _ld_two_warps(nm, trans):
    """``ld_kernel`` over two warps (and 1024 bytes of shared memory): warp 1's rows lie 512
    bytes above warp 0's."""
    return ld_kernel(nm, trans).replace("sm[512]", "sm[1024]").replace(
        "mad.lo.u32 %v, %v, 64, 0;", "mad.lo.u32 %v, %v, 64, 0;\n    shr.u32 %o32, %t, 5;\n"
        "    mad.lo.u32 %v, %o32, 512, %v;\n    and.b32 %a, %t, 31;\n    shr.u32 %a, %a, 3;").replace(
        ".reg .u32 %t,", ".reg .u32 %o32, %t,")


@pytest.mark.parametrize("nm", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("grid", [1, 2])
def test_ldmatrix_of_whole_warps_in_lane_order_over_warps_and_ctas(nm, trans, grid):
    """The rows of whole warps in lane order come from the first 8 nm lanes of each warp (the
    layout made once per group): every warp of every CTA gets its own rows' fragments."""
    src = np.arange(512, dtype=np.uint16)
    dst = np.zeros((grid, 64, nm), np.uint32)
    k = _ld_two_warps(nm, trans).replace("mul.wide.u32 %o, %t, 16;", "mov.u32 %o32, %ctaid.x;\n    "
                                         "mad.lo.u32 %o32, %o32, 64, %t;\n    mul.wide.u32 %o, %o32, 16;", 1)
    k = k.replace(f"mul.wide.u32 %o, %t, {4 * nm};", f"mov.u32 %o32, %ctaid.x;\n    mad.lo.u32 %o32, %o32, 64, %t;\n"
                  f"    mul.wide.u32 %o, %o32, {4 * nm};")
    launch(k, "k", [np.tile(src, grid), dst], block=64, grid=grid)
    lane = np.arange(32)
    for c in range(grid):
        image = src.reshape(16, 32)                     # 16 rows of 64 bytes (32 halves)
        for w in range(2):
            for i in range(nm):
                m = image[8 * w:8 * w + 8, 8 * i:8 * i + 8]
                if trans:
                    m = m.T
                want = m[lane // 4, 2 * (lane % 4)].astype(np.uint32) | (m[lane // 4, 2 * (lane % 4) + 1].astype(np.uint32) << 16)
                assert dst[c, 32 * w:32 * w + 32, i].tolist() == want.tolist()
