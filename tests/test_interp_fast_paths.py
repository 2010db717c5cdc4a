"""Fast paths of the interpreter (issue 24) that must keep every check: a TMA box's swizzled
shared slots written and read as one slice in address order (``tma._Slots.order`` /
``local``), in-bound tile boxes gathered and stored as strided slices of global memory
(``FlatSpace.load_nest`` / ``load_nests`` / ``store_nest`` / ``store_nests``, which decline whatever ``load`` / ``store`` would
report), nests folded into rows before their written-byte flags are read or set
(``nests.coalesce``), a shared store's row shifts made once (``rows.shifted``), a TMEM
rectangle marked defined once until a dealloc, TMEM columns defined in every lane read without
their cells' flags, and a launch that leaves nothing for the garbage collector."""
from __future__ import annotations

import gc
from types import SimpleNamespace

import numpy as np
import pytest

from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.ops import tma
from jax_pyptx.interpret.scheduler.context import Context
from jax_pyptx.interpret.state import memory as M
from jax_pyptx.interpret.state.nests import coalesce

from .test_interp_tma_batches import LOAD_WAR


@pytest.mark.parametrize("swizzle,atomicity", [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1)])
@pytest.mark.parametrize("es", [1, 2, 4, 8])
def test_a_contiguous_box_moves_as_one_slice_in_address_order(swizzle, atomicity, es):
    f = SimpleNamespace(swizzle=swizzle, atomicity=atomicity)
    off, n = 1024, 4096 // es
    sl = tma.box_slots(f, off, n, es, 16384)
    assert sl.contig
    dt = np.dtype(f"u{es}")
    vals = np.random.default_rng(es).integers(0, 1 << (8 * es - 1), n).astype(dt)
    want = np.zeros(16384 // es, dt)
    want[sl.elems] = vals                           # the element-by-element scatter
    got = np.zeros(16384 // es, dt)
    got[off // es:off // es + n] = sl.in_order(vals)
    np.testing.assert_array_equal(got, want)
    span = got[off // es:off // es + n]             # and read back through ``local``
    np.testing.assert_array_equal(span.copy() if sl.local is None else span[sl.local], vals)
    assert (sl.order is None) == (swizzle == 0)
    # a swizzle permutes 16-byte chunks whole: moved as chunks, the elements' order all the same
    assert (sl.chunks is None) == (swizzle == 0)
    if sl.order is not None:
        np.testing.assert_array_equal(sl.in_order(vals), vals[sl.order])
        np.testing.assert_array_equal(sl.in_order(vals[::-1].copy()[::-1]), vals[sl.order])   # (a strided copy)


def _space(uninit=False, readonly=False):
    sp = M.FlatSpace("global", 1 << 20)
    al = sp.add(np.arange(4096, dtype=np.uint8), "buf", readonly=readonly)
    if uninit:
        al.start_uninitialized(2048, 4096)
        sp.tracks_init = True
    return sp, al


def test_load_nest_reads_a_strided_slice_and_declines_what_load_reports():
    sp, al = _space(uninit=True)
    shape, strides = [4, 8], [256, 2]               # 4 rows of 8 u16, rows 256 bytes apart
    got = sp.load_nest(al.base + 64, shape, strides, np.uint16)
    want = sp.load(np.array([al.base + 64 + 256 * r + 2 * c for r in range(4) for c in range(8)],
                            np.uint64), np.uint16)[:, 0]
    np.testing.assert_array_equal(got, want)
    assert sp.load_nest(al.base + 1984, shape, strides, np.uint16) is None         # meets unwritten bytes
    assert sp.load_nest(al.base + 4096 - 64, shape, strides, np.uint16) is None    # past the end
    assert sp.load_nest(al.base + 65, shape, strides, np.uint16) is None           # misaligned
    sp.counter = lambda *a: None                    # statistics count every address: ``load``
    assert sp.load_nest(al.base + 64, shape, strides, np.uint16) is None


def test_load_nests_reads_rows_as_load_nest_and_declines_where_one_would():
    sp, al = _space(uninit=True)
    shape, strides = [4, 8], [256, 2]
    firsts = [al.base + 64, al.base + 1024 + 16, al.base + 32]
    out = np.zeros((3, 32), np.uint16)
    assert sp.load_nests(firsts, shape, strides, out)
    for row, first in zip(out, firsts):
        np.testing.assert_array_equal(row, sp.load_nest(first, shape, strides, np.uint16))
    for bad in (al.base + 1984,                     # meets unwritten bytes
                al.base + 4096 - 64,                # past the end
                al.base + 65):                      # misaligned (the lowest is aligned)
        assert not sp.load_nests([al.base + 64, bad], shape, strides, np.zeros((2, 32), np.uint16)), bad
    other = sp.add(np.zeros(4096, np.uint8), "other")   # each nest in bounds, in two allocations
    assert sp.load_nest(other.base, shape, strides, np.uint16) is not None
    assert not sp.load_nests([al.base + 64, other.base], shape, strides, np.zeros((2, 32), np.uint16))
    sp.counter = lambda *a: None                    # statistics count every address: ``load``
    assert not sp.load_nests(firsts, shape, strides, out)


def test_store_nest_writes_a_strided_slice_and_declines_what_store_reports():
    sp, al = _space(uninit=True)
    vals = np.arange(32, dtype=np.uint16) + 1000
    assert sp.store_nest(al.base + 2048, [4, 8], [256, 2], vals)
    v = al.data[2048:2048 + 1024].view(np.uint16).reshape(4, 128)[:, :8]
    np.testing.assert_array_equal(v.reshape(-1), vals)
    assert sp.load_nest(al.base + 2048, [4, 8], [256, 2], np.uint16) is not None  # now written
    assert sp.load_nest(al.base + 2048 + 16, [4, 8], [256, 2], np.uint16) is None  # the bytes beside: not
    assert not sp.store_nest(al.base + 4096 - 64, [4, 8], [256, 2], vals)         # past the end
    assert not sp.store_nest(al.base, [4, 8], [0, 2], vals)                       # overlapping rows
    ro, ral = _space(readonly=True)
    assert not ro.store_nest(ral.base, [4, 8], [256, 2], vals)                    # read-only


def test_store_nests_writes_every_row_or_nothing():
    sp, al = _space(uninit=True)
    shape, strides = [4, 8], [256, 2]
    rows = np.arange(96, dtype=np.uint16).reshape(3, 32) + 1000
    firsts = [al.base + 2048, al.base + 3072 + 16, al.base + 2048 + 64]
    assert sp.store_nests(firsts, shape, strides, rows)
    for row, first in zip(rows, firsts):            # written, and their bytes marked written
        np.testing.assert_array_equal(sp.load_nest(first, shape, strides, np.uint16), row)
    before = al.data.copy()
    for bad in (al.base + 4096 - 64,                # past the end
                al.base + 2049):                    # misaligned (the lowest is aligned)
        assert not sp.store_nests([al.base + 2048, bad], shape, strides, rows[:2]), bad
    assert not sp.store_nests(firsts, shape, [0, 2], rows)         # overlapping rows
    np.testing.assert_array_equal(al.data, before)                 # nothing written
    ro, ral = _space(readonly=True)
    assert not ro.store_nests([ral.base], shape, strides, rows[:1])


@pytest.mark.parametrize("shape,strides,nb,want", [
    ([64, 64], [1024, 2], 2, ([64], [1024], 128)),          # rows of a tile: one element a row
    ([4, 8, 16], [4096, 64, 4], 4, ([4], [4096], 512)),     # two dense dimensions fold
    ([8, 16], [64, 8], 4, ([8, 16], [64, 8], 4)),           # a gap between elements: kept
    ([], [], 8, ([], [], 8)),
])
def test_coalesce_folds_dense_inner_dimensions(shape, strides, nb, want):
    assert coalesce(shape, strides, nb) == want


def test_a_launch_leaves_no_context_for_the_garbage_collector():
    # the launch's budget and the race tracker refer back to the batch's context; the launch
    # lets go of it, so its arrays are freed at once and the next launch reuses their memory
    # (no page faults, no growth)
    # (a TMA load into shared memory that every warp reads: the race tracker, the async proxy
    # and the mbarriers all hold state of the batch)
    x = np.arange(256, dtype=np.uint32) * 10
    out = np.zeros(3 * 256, np.uint32)
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        launch(LOAD_WAR, "k", [tensor_map(x, box=(256,)), out, np.uint32(99)], grid=3, block=256)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, Context) or type(o).__module__.startswith("jax_pyptx")]
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
    np.testing.assert_array_equal(out.reshape(3, 256), np.tile(x + np.arange(256), (3, 1)))
    assert left == []


def test_a_tmem_rectangle_stays_defined_until_a_dealloc():
    # a k-loop's accumulator writes the same rectangle every step: it is marked defined once,
    # and a dealloc makes its cells unwritten again for the next allocation
    from jax_pyptx.interpret.state import tmem as T
    ctx = SimpleNamespace(nctas=1, sanitize=True, at_exit=[])
    tm = T.TensorMemory(ctx)
    d = SimpleNamespace(ins=SimpleNamespace(), text="x;", where=lambda: "here")
    col = tm.alloc(ctx, 0, 64, d, None, 0)
    pieces = ((0, 32, 0, 16, 0, 0),)
    vals = np.arange(32 * 16, dtype=np.uint32).reshape(32, 16)
    for k in range(3):
        T.write_rects(tm, ctx, 0, 0, col, pieces, vals + k, None, "w", None)
        assert tm.defined[0, :32, col:col + 16].all() and not tm.defined[0, 32:, col:col + 16].any()
        np.testing.assert_array_equal(T.read_rects(tm, ctx, 0, 0, col, pieces, (32, 16), None, "r", None),
                                      vals + k)
    assert (0, 0, col, pieces, True) in tm.ok_rects
    tm.dealloc(ctx, 0, col, 64, d, None, 0)
    assert not tm.ok_rects and not tm.defined[0].any()
    col = tm.alloc(ctx, 0, 64, d, None, 0)
    assert not T._rect_ok(tm, 0, 0, col, pieces, True)       # unwritten: the cell-by-cell read reports


def test_tmem_columns_written_in_every_lane_are_read_without_their_cells_until_a_dealloc():
    # an accumulator written over all 128 lanes marks its columns whole: a tcgen05.ld of whole
    # warps' rows reads them without gathering the cells' flags; a rectangle of 32 lanes does
    # not, and a dealloc forgets them
    from jax_pyptx.interpret.state import tmem as T
    ctx = SimpleNamespace(nctas=2, sanitize=True, at_exit=[])
    tm = T.TensorMemory(ctx)
    d = SimpleNamespace(ins=SimpleNamespace(), text="x;", where=lambda: "here")
    col = tm.alloc(ctx, 1, 64, d, None, 0)
    vals = np.arange(128 * 16, dtype=np.uint32).reshape(128, 16)
    T.write_rects(tm, ctx, 1, 0, col, ((0, 128, 0, 16, 0, 0),), vals, None, "w", None)
    T.write_rects(tm, ctx, 1, 0, col + 16, ((0, 32, 0, 16, 0, 0),), vals[:32], None, "w", None)
    assert tm.full[1, col:col + 16].all() and not tm.full[1, col + 16:].any() and not tm.full[0].any()
    ctas, lanes = np.ones(64, np.int64), np.arange(64)
    tm.defined[1, 5, col] = False             # (not looked at: the columns are known whole)
    np.testing.assert_array_equal(tm.read_rows(ctas, lanes, slice(col, col + 16)), vals[:64])
    assert tm.read_rows(ctas, lanes, slice(col + 16, col + 32)) is None      # lanes 32-63 unwritten
    np.testing.assert_array_equal(tm.read_rows(ctas[:32], lanes[:32], slice(col + 16, col + 32)), vals[:32])
    tm.dealloc(ctx, 1, col, 64, d, None, 0)
    col = tm.alloc(ctx, 1, 64, d, None, 0)
    assert not tm.full[1].any() and tm.read_rows(ctas, lanes, slice(col, col + 16)) is None


def test_one_starts_array_is_shifted_once_per_amount():
    # a shared store's checks index by the same rows' chunks and items: ``shifted`` makes each
    # shift of one array once, and never hands one array's shifts to another
    from jax_pyptx.interpret.state.rows import shifted
    a = np.arange(0, 4096, 16, dtype=np.int64)
    c = shifted(a, 4)
    np.testing.assert_array_equal(c, a >> 4)
    assert shifted(a, 4) is c and shifted(a, 3) is not c
    np.testing.assert_array_equal(shifted(a, 3), a >> 3)
    b = a.copy()
    assert shifted(b, 4) is not c
    np.testing.assert_array_equal(shifted(b, 4), a >> 4)
    assert shifted(a, 4) is not c                   # only the last array's shifts are kept
