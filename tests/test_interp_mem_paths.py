"""The fast paths of loads and stores (``memory.nest``: affine address nests read and written as
strided slices; aligned vectors moved as one element per lane) against byte-level references,
and the reports of the checks on those paths: the same kind, lane, address and message as the
general path gives (first failing lane), for out-of-bounds in the middle of a contiguous run,
misaligned lanes, read-only and input allocations, uninitialized bytes, duplicates, inactive
lanes and scattered addresses."""
from __future__ import annotations

import re

import numpy as np
import pytest

from jax_pyptx.errors import MisalignedAccessError, OutOfBoundsError, UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state import memory as M

U = np.uint64
HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _space(n=64):
    sp = M.FlatSpace("global", M.GLOBAL_BASE)
    a = sp.add(np.arange(n, dtype=np.float32), "a")
    b = sp.add(np.arange(n, dtype=np.float32) + 1000, "b")
    return sp, a, b


def _ramp(al, n, stride, off=0):
    return U(al.base + off) + np.arange(n, dtype=U) * U(stride)


def _fault(fn):
    with pytest.raises(M.MemoryFault) as ei:
        fn()
    f = ei.value
    return f.kind, f.lane, f.address, f.detail


def _ref_load(al, addrs, dt, count):
    """Byte-level reference: each lane's ``count`` elements read from the allocation's bytes."""
    raw = al.data
    nb = np.dtype(dt).itemsize * count
    rows = [raw[int(a) - al.base:int(a) - al.base + nb].copy().view(dt) for a in addrs]
    return np.stack(rows) if rows else np.zeros((0, count), dt)


# ----------------------------------------------------------------------------- nests
def test_nest_finds_affine_nests_and_refuses_the_rest():
    rows = np.arange(3, dtype=U)[:, None] * U(4096)
    lanes = np.arange(4, dtype=U) * U(16)
    assert M.nest((U(256) + rows + lanes).ravel()) == (256, [3, 4], [4096, 16], 256 + 2 * 4096 + 48)
    assert M.nest(np.arange(8, dtype=U) * U(4)) == (0, [8], [4], 28)
    assert M.nest(np.full(5, 64, U)) == (64, [5], [0], 64)                 # one address, repeated
    # three levels: 2 lanes x 3 rows x 2 tiles
    a = (np.arange(2)[:, None, None] * 10000 + np.arange(3)[None, :, None] * 100
         + np.arange(2)[None, None, :] * 8).astype(U).ravel()
    assert M.nest(a) == (0, [2, 3, 2], [10000, 100, 8], 10208)
    assert M.nest(np.array([0, 16, 48], U)) is None                      # a run, then a break
    assert M.nest(np.array([32, 16, 0], U)) is None                      # descending
    assert M.nest(np.array([0, 4, 8, 100, 104, 200], U)) is None         # rows of unequal length
    assert M.nest(np.array([0, 4, 100, 104, 300, 304], U)) is None       # rows not equally spaced
    assert M.nest(np.array([7], U)) is None
    top = np.array([2 ** 64 - 8, 2 ** 64 - 4], U)
    assert M.nest(top) == (2 ** 64 - 8, [2], [4], 2 ** 64 - 4)
    assert M.nest(np.array([2 ** 64 - 4, 0], U)) is None                 # wraps past 2**64


def test_disjoint_nests():
    assert M.disjoint([4], [16], 16)
    assert not M.disjoint([4], [8], 16)                  # 16-byte elements 8 bytes apart overlap
    assert not M.disjoint([4], [0], 4)                   # one address, repeated
    assert M.disjoint([3, 4], [64, 16], 16)
    assert not M.disjoint([3, 4], [32, 16], 16)          # rows overlap
    assert M.disjoint([4, 3], [16, 64], 16)              # inner stride outermost: still disjoint
    assert M.disjoint([1, 4], [0, 4], 4)


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("pattern", ["contiguous", "strided", "tile", "broadcast", "overlapping",
                                     "scattered", "two-allocations"])
@pytest.mark.parametrize("dt,count", [(np.float32, 1), (np.float32, 4), (np.uint16, 2), (np.uint64, 2),
                                      (np.uint8, 16)])
def test_loads_match_a_byte_reference(pattern, dt, count):
    sp = M.FlatSpace("global", M.GLOBAL_BASE)
    a = sp.add(np.random.default_rng(1).integers(0, 255, 1 << 14, dtype=np.uint8), "a")
    b = sp.add(np.random.default_rng(2).integers(0, 255, 1 << 12, dtype=np.uint8), "b")
    nb = np.dtype(dt).itemsize * count
    rng = np.random.default_rng(3)
    if pattern == "contiguous":
        addrs = _ramp(a, 256, nb, nb * 3)
    elif pattern == "strided":
        addrs = _ramp(a, 100, nb * 3, nb)
    elif pattern == "tile":                    # 8 rows of 16 lanes, row pitch 512 bytes
        addrs = (U(a.base + 2 * nb) + (np.arange(8, dtype=U)[:, None] * U(512)
                                       + np.arange(16, dtype=U) * U(nb))).ravel()
    elif pattern == "broadcast":
        addrs = np.full(64, a.base + 5 * nb, U)
    elif pattern == "overlapping":             # a lane every element: vectors overlap
        addrs = _ramp(a, 80, np.dtype(dt).itemsize)
    elif pattern == "scattered":
        addrs = U(a.base) + rng.choice((1 << 14) // nb, 200, replace=True).astype(U) * U(nb)
    else:                                      # lanes in two allocations
        addrs = np.concatenate([_ramp(a, 40, nb), _ramp(b, 40, nb)])
    align = np.dtype(dt).itemsize if pattern == "overlapping" else None
    got = sp.load(addrs, dt, count, align=align)
    assert got.shape == (len(addrs), count) and got.dtype == np.dtype(dt)
    parts = {al.index: al for al in (a, b)}
    ref = np.concatenate([_ref_load(parts[sp.find(int(x)).index], [x], dt, count) for x in addrs])
    assert np.array_equal(got.view(np.uint8), ref.view(np.uint8))
    # the result is a copy: a store after the load does not change it
    before = got.copy()
    a.data[:] ^= 0xFF
    b.data[:] ^= 0xFF
    assert np.array_equal(got.view(np.uint8), before.view(np.uint8))


@pytest.mark.parametrize("pattern", ["contiguous", "strided", "tile", "duplicates", "scattered"])
@pytest.mark.parametrize("dt,count", [(np.float32, 1), (np.float32, 4), (np.uint16, 2)])
def test_stores_match_a_byte_reference(pattern, dt, count):
    sp = M.FlatSpace("global", M.GLOBAL_BASE)
    a = sp.add(np.zeros(1 << 14, np.uint8), "a")
    nb = np.dtype(dt).itemsize * count
    rng = np.random.default_rng(4)
    if pattern == "contiguous":
        addrs = _ramp(a, 256, nb, nb)
    elif pattern == "strided":
        addrs = _ramp(a, 100, nb * 2)
    elif pattern == "tile":
        addrs = (U(a.base) + (np.arange(8, dtype=U)[:, None] * U(1024)
                              + np.arange(16, dtype=U) * U(nb))).ravel()
    elif pattern == "duplicates":              # every address stored by 4 lanes: the last wins
        addrs = np.repeat(_ramp(a, 32, nb), 4)
    else:
        addrs = U(a.base) + rng.choice((1 << 14) // nb, 200, replace=False).astype(U) * U(nb)
    vals = rng.integers(0, 255, (len(addrs), nb), dtype=np.uint8).view(dt)
    sp.store(addrs, vals)
    ref = np.zeros(1 << 14, np.uint8)
    for x, v in zip(addrs, vals):              # lane order: a later lane overwrites
        o = int(x) - a.base
        ref[o:o + nb] = v.view(np.uint8)
    assert np.array_equal(a.data, ref)
    assert sp.version == 1


# ----------------------------------------------------------------------------- reports
def test_contiguous_run_out_of_bounds_in_the_middle_names_the_first_lane_past_the_end():
    sp, a, _ = _space()
    assert _fault(lambda: sp.load(_ramp(a, 64, 4, 8), np.float32)) == (
        "out-of-bounds", 62, a.base + 256,
        f"address {a.base + 256:#x} is 4 bytes past the end of allocation #0 (a, 256 bytes at {a.base:#x})")
    # a v4 run: lane 16 starts at the end
    assert _fault(lambda: sp.load(_ramp(a, 40, 16), np.float32, 4))[:3] == ("out-of-bounds", 16, a.base + 256)
    # a run that crosses the guard gap into the next allocation: the first lane past the end
    assert _fault(lambda: sp.store(_ramp(a, 4096, 4), np.zeros((4096, 1), np.float32)))[:3] == \
        ("out-of-bounds", 64, a.base + 256)


def test_misaligned_lanes_of_a_nest():
    sp, a, _ = _space()
    inside = f" (inside allocation #0 (a, 256 bytes at {a.base:#x}))"
    assert _fault(lambda: sp.load(_ramp(a, 40, 8, 4), np.float32, 2)) == (
        "misaligned", 0, a.base + 4, f"address {a.base + 4:#x} is not aligned to 8 bytes{inside}")
    assert _fault(lambda: sp.load(_ramp(a, 40, 4), np.float32, 2)) == (
        "misaligned", 1, a.base + 4, f"address {a.base + 4:#x} is not aligned to 8 bytes{inside}")
    # rows of 8 aligned v2 lanes whose pitch (68 bytes) is not: lane 8 starts the second row
    rows = (U(a.base) + np.arange(3, dtype=U)[:, None] * U(68) + np.arange(8, dtype=U) * U(8)).ravel()
    assert _fault(lambda: sp.store(rows, np.zeros((24, 2), np.float32)))[:3] == ("misaligned", 8, a.base + 68)


def test_read_only_and_input_allocations_refuse_a_nest_of_stores():
    sp, a, b = _space()
    a.readonly = True
    assert _fault(lambda: sp.store(_ramp(a, 40, 4), np.zeros((40, 1), np.float32))) == (
        "read-only", 0, a.base, f"address {a.base:#x} is in read-only allocation #0 (a, 256 bytes at {a.base:#x})")
    b.input = "param 'X'"
    kind, lane, addr, detail = _fault(lambda: sp.store(_ramp(b, 40, 4, 16), np.zeros((40, 1), np.float32)))
    assert (kind, lane, addr) == ("input", 0, b.base + 16)
    assert detail.startswith(f"address {b.base + 16:#x} (byte 16 of allocation #1 (b, 256 bytes at ")
    assert a.data.view(np.float32).tolist() == list(range(64))            # nothing written


def test_uninitialized_bytes_under_a_nest_report_the_first_lane():
    sp, a, _ = _space()
    a.start_uninitialized(100, 120)
    sp.tracks_init = True
    assert _fault(lambda: sp.load(_ramp(a, 64, 4), np.float32)) == (
        "uninitialized", 25, a.base + 100,
        f"global address {a.base + 100:#x} (byte 100 of allocation #0 (a, 256 bytes at {a.base:#x})) is read "
        f"before any thread wrote it: an output starts uninitialized, as on a GPU; write it before reading it, "
        f"or make the buffer an input-output alias to keep its contents")
    sp.store(_ramp(a, 8, 4, 96), np.ones((8, 1), np.float32))              # a nest marks them written
    assert sp.load(_ramp(a, 64, 4), np.float32)[24:30, 0].tolist() == [1, 1, 1, 1, 1, 1]


# ----------------------------------------------------------------------------- kernels
def _kernel(body, params, decls):
    return HDR + f"\n.visible .entry k({params})\n{{\n{decls}\n{body}\n}}\n"


COPY_V4 = _kernel("""
    mov.u32 %r0, %tid.x; mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x;
    mad.lo.u32 %r3, %r1, %r2, %r0;
    ld.param.u64 %x, [x]; ld.param.u64 %y, [y];
    mul.wide.u32 %o, %r3, 16;
    add.u64 %a, %x, %o; add.u64 %b, %y, %o;
    and.b32 %r4, %r0, 1;
    setp.eq.u32 %p, %r4, 0;
    ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%a];
    st.global.v4.f32 [%b], {%f3, %f2, %f1, %f0};
    @%p st.global.f32 [%b+4], %f0;           // every other lane: inactive lanes on this store
    ret;""", ".param .u64 x, .param .u64 y",
    ".reg .u32 %r<5>; .reg .u64 %x, %y, %o, %a, %b; .reg .f32 %f<4>; .reg .pred %p;")


def test_coalesced_vector_copy_over_many_ctas_with_inactive_lanes():
    x = np.random.default_rng(5).standard_normal((4 * 96, 4)).astype(np.float32)
    y = np.zeros_like(x)
    launch(COPY_V4, "k", [x, y], grid=4, block=96)
    ref = x[:, ::-1].copy()
    ref[0::2, 1] = x[0::2, 0]
    assert np.array_equal(y, ref)


def test_coalesced_vector_load_past_the_end_names_the_thread():
    x = np.zeros((100, 4), np.float32)                 # 100 rows for 128 threads
    y = np.zeros((128, 4), np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(COPY_V4, "k", [x, y], grid=1, block=128)
    assert re.search(r"out-of-bounds global load ld\.global\.v4\.f32 \{%f0, %f1, %f2, %f3\}, \[%a\]; by thread "
                     r"\(100,0,0\) of CTA \(0,0,0\): address 0x[0-9a-f]+ is 16 bytes past the end of allocation "
                     r"#0 \(param 'x'", str(ei.value)), str(ei.value)


def test_misaligned_vector_store_names_the_thread():
    prog = _kernel("""
        mov.u32 %r0, %tid.x; ld.param.u64 %y, [y];
        mul.wide.u32 %o, %r0, 8;                     // v4 (16 bytes) every 8 bytes: odd lanes misaligned
        add.u64 %b, %y, %o;
        mov.f32 %f0, 0f3F800000;
        st.global.v4.f32 [%b], {%f0, %f0, %f0, %f0};
        ret;""", ".param .u64 y", ".reg .u32 %r0; .reg .u64 %y, %o, %b; .reg .f32 %f0;")
    with pytest.raises(MisalignedAccessError) as ei:
        launch(prog, "k", [np.zeros(1024, np.float32)], block=64)
    assert "by thread (1,0,0) of CTA (0,0,0)" in str(ei.value)
    assert "is not aligned to 16 bytes" in str(ei.value)


SHARED_V4 = _kernel("""
    mov.u32 %r0, %tid.x;
    mov.u32 %s, buf;
    mul.lo.u32 %r1, %r0, 16;
    add.u32 %s, %s, %r1;
    cvt.rn.f32.u32 %f0, %r0;
    st.shared.f32 [%s], %f0;
    @%p st.shared.v2.f32 [%s+8], {%f0, %f0};
    bar.sync 0;
    ld.shared.v4.f32 {%f0, %f1, %f2, %f3}, [%s];
    ld.param.u64 %y, [y];
    mul.wide.u32 %o, %r0, 16;
    add.u64 %b, %y, %o;
    st.global.v4.f32 [%b], {%f0, %f1, %f2, %f3};
    ret;""", ".param .u64 y",
    ".reg .u32 %r<2>, %s; .reg .u64 %y, %o, %b; .reg .f32 %f<4>; .reg .pred %p;\n"
    ".shared .align 16 .b8 buf[2048];")


def test_shared_vector_load_of_a_partly_written_vector_reports_the_first_unwritten_element():
    prog = SHARED_V4.replace("@%p ", "")
    with pytest.raises(UninitializedReadError) as ei:
        launch(prog, "k", [np.zeros((64, 4), np.float32)], block=64)
    # lane 0 wrote bytes 0-3 and 8-15: bytes 4-7 (offset 0x4, 'buf' +4) are the first unwritten
    assert re.search(r"uninitialized shared load ld\.shared\.v4\.f32 .* by thread \(0,0,0\) of CTA \(0,0,0\): "
                     r"shared address 0x4 'buf' \(\+4\) is read before any thread of this CTA wrote it",
                     str(ei.value)), str(ei.value)


def test_shared_vector_round_trip_and_duplicate_vector_stores():
    prog = SHARED_V4.replace("st.shared.f32 [%s], %f0;", "st.shared.v2.f32 [%s], {%f0, %f0};").replace(
        "@%p ", "")
    y = np.zeros((64, 4), np.float32)
    launch(prog, "k", [y], block=64)
    assert np.array_equal(y, np.repeat(np.arange(64, dtype=np.float32)[:, None], 4, axis=1))
    # every lane stores a v2 to the same shared vector: the last lane's is there after the barrier
    same = _kernel("""
        mov.u32 %r0, %tid.x; mov.u32 %s, buf;
        cvt.rn.f32.u32 %f0, %r0; add.f32 %f1, %f0, 0f3F000000;
        st.volatile.shared.v2.f32 [%s], {%f0, %f1};
        bar.sync 0;
        ld.shared.v2.f32 {%f2, %f3}, [%s];
        ld.param.u64 %y, [y]; mul.wide.u32 %o, %r0, 8; add.u64 %b, %y, %o;
        st.global.v2.f32 [%b], {%f2, %f3};
        ret;""", ".param .u64 y", ".reg .u32 %r0, %s; .reg .u64 %y, %o, %b; .reg .f32 %f<4>;\n"
                               ".shared .align 16 .b8 buf[64];")
    y2 = np.zeros((32, 2), np.float32)
    launch(same, "k", [y2], block=32)
    assert y2.tolist() == [[31.0, 31.5]] * 32


PARAM_ONCE = _kernel("""
    mov.u32 %r0, %tid.x; ld.param.u32 %r1, [n+OFF]; ld.param.u64 %y, [y];
    mul.wide.u32 %o, %r0, 4; add.u64 %b, %y, %o; add.u32 %r2, %r1, %r0;
    st.global.u32 [%b], %r2;
    ret;""", ".param .u64 y, .param .u32 n", ".reg .u32 %r<3>; .reg .u64 %y, %o, %b;")


def test_a_param_every_thread_loads_at_one_address_is_read_once_and_checked_once():
    y = np.zeros(64, np.uint32)
    launch(PARAM_ONCE.replace("+OFF", ""), "k", [y, np.uint32(5)], block=64)
    assert y.tolist() == list(range(5, 69))
    with pytest.raises(OutOfBoundsError) as ei:
        launch(PARAM_ONCE.replace("OFF", "4"), "k", [y, np.uint32(5)], block=64)
    assert ("out-of-bounds param load ld.param.u32 %r1, [n+4]; by thread (0,0,0) of CTA (0,0,0): address "
            "0x7000000c is 4 bytes past the end of allocation #0 (kernel params of 'k', 12 bytes at "
            "0x70000000) [instruction #1 of k]") in str(ei.value)
