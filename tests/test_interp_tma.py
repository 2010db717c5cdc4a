"""TMA and tensor maps on the interpreter, against hand-computed values: each swizzle mode (the
byte-address XOR of DESIGN.md "Facts" and the 128B-atom variants), each tensor-map field
(dims, byte strides, box, element strides, interleave, swizzle, L2 promotion, OOB fill with
zeros and NaN at the tensor's edges, dtype, address), 1d-5d tiled loads, im2col, stores and
reductions, the 128-byte encoding, and tensor maps passed by value or in global memory."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.state import tensormap as TM
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def ptxas_ok(text):
    """Every hand-written kernel here is real PTX: ptxas accepts it."""
    try:
        ptxas_check(text, "sm_90a")
    except Exception as e:
        if "not found" in str(e) or "no ptxas" in str(e).lower():
            return
        raise


def load_kernel(rank, mode="tile", by_value=True, offsets=0):
    """TMA-load a box into a 1024-aligned shared buffer, wait, copy the buffer's words out."""
    cs = ", ".join(f"%r{10 + i}" for i in range(rank))
    cparams = "".join(f", .param .s32 c{i}" for i in range(rank))
    cload = "".join(f"    ld.param.u32 %r{10 + i}, [c{i}];\n" for i in range(rank))
    tparam = ".param .align 64 .b8 tm[128]" if by_value else ".param .u64 tm"
    tmaddr = ("    mov.b64 %rd5, tm;\n    cvta.param.u64 %rd5, %rd5;\n" if by_value else
              "    ld.param.u64 %rd5, [tm];\n")
    extra = ""
    if mode == "im2col":
        extra = ", {" + ", ".join(f"%h{i}" for i in range(offsets)) + "}"
    hload = "".join(f"    ld.param.u16 %h{i}, [o{i}];\n" for i in range(offsets))
    hparams = "".join(f", .param .u16 o{i}" for i in range(offsets))
    text = HDR + f"""
.visible .entry k({tparam}, .param .u64 out, .param .u32 nbytes, .param .u32 ndump{cparams}{hparams})
{{
    .reg .u32 %r<40>; .reg .u64 %rd<8>; .reg .pred %p<4>; .reg .b64 %st; .reg .b16 %h<4>;
    .shared .align 1024 .b8 buf[16384];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r20, [nbytes];
    ld.param.u32 %r27, [ndump];
{cload}{hload}{tmaddr}    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], %r20;
    @%p1 cp.async.bulk.tensor.{rank}d.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes [%r3], [%rd5, {{{cs}}}], [%r2]{extra};
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    shr.u32 %r21, %r27, 2;
    mov.u32 %r22, %r1;
    mov.u32 %r26, %ntid.x;
LOOP:
    setp.ge.u32 %p3, %r22, %r21;
    @%p3 bra END;
    shl.b32 %r23, %r22, 2;
    add.u32 %r24, %r3, %r23;
    ld.shared.u32 %r25, [%r24];
    mul.wide.u32 %rd2, %r22, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r25;
    add.u32 %r22, %r22, %r26;
    bra LOOP;
END:
    ret;
}}
"""
    return text


_CHECKED = set()


def tma_load(tm, coords, nbytes, rank=None, mode="tile", offsets=(), by_value=True, dump=None):
    """Run the load kernel (expect_tx ``nbytes``); returns the shared buffer's first ``dump``
    (default ``nbytes``) bytes."""
    rank = rank or tm.fields.rank
    text = load_kernel(rank, mode, by_value, len(offsets))
    if text not in _CHECKED:
        ptxas_ok(text)
        _CHECKED.add(text)
    dump = nbytes if dump is None else dump
    out = np.zeros(dump // 4, np.uint32)
    args = [tm, out, np.uint32(nbytes), np.uint32(dump)] + [np.int32(c) for c in coords] + [np.uint16(o) for o in offsets]
    launch(text, "k", args, block=128)
    return out.view(np.uint8)


def swz128(a):
    return a ^ (((a >> 7) & 7) << 4)


# ----------------------------------------------------------------------------- swizzle
@pytest.mark.parametrize("mode, atom, cases", [
    (1, 0, {0x00: 0x00, 0x10: 0x10, 0x80: 0x90, 0x90: 0x80, 0x100: 0x100, 0x180: 0x190}),
    (2, 0, {0x80: 0x90, 0x100: 0x120, 0x180: 0x1B0, 0x190: 0x1A0, 0x200: 0x200}),
    (3, 0, {0x80: 0x90, 0x100: 0x120, 0x200: 0x240, 0x380: 0x3F0, 0x3F0: 0x380, 0x400: 0x400,
            0x485: 0x495}),
    (3, 1, {0x80: 0xA0, 0x100: 0x140, 0x180: 0x1E0, 0x190: 0x1F0, 0x200: 0x200}),
    (3, 2, {0x80: 0xA8, 0x88: 0xA0, 0x100: 0x140, 0x180: 0x1E8}),
    (3, 3, {0x80: 0xC0, 0xC0: 0x80, 0x100: 0x100, 0x1A4: 0x1E4}),
])
def test_swizzle_xors_address_bits(mode, atom, cases):
    got = TM.swizzle(np.array(list(cases)), mode, atom)
    assert [hex(v) for v in got] == [hex(v) for v in cases.values()]


def test_128b_swizzled_tma_load_places_rows_by_the_xor():
    X = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)     # rows of 128 bytes
    tm = tensor_map(X, box=(32, 8), swizzle=128)
    got = tma_load(tm, (0, 4), 8 * 128).view(np.float32)
    # row r, column c of the box (tensor row 4 + r) is at byte swz(128 r + 4 c)
    assert got[(0x80 ^ 0x10) // 4] == X[5, 0]                   # row 1, col 0 -> byte 0x90
    assert got[(0x380 ^ 0x70) // 4 + 1] == X[11, 1]             # row 7, col 1 -> byte 0x3F4
    r, c = np.meshgrid(np.arange(8), np.arange(32), indexing="ij")
    want = np.empty(256, np.float32)
    want[swz128(128 * r + 4 * c).reshape(-1) // 4] = X[4:12].reshape(-1)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("sw, span", [(32, 32), (64, 64)])
def test_32b_and_64b_swizzled_loads(sw, span):
    cols = span // 2                                               # f16 elements per row
    X = (np.arange(8 * cols) % 1000).astype(np.float16).reshape(8, cols)
    tm = tensor_map(X, box=(cols, 8), swizzle=sw)
    got = tma_load(tm, (0, 0), 8 * span).view(np.float16)
    mask = {32: 0x10, 64: 0x30}[sw]
    for r in range(8):
        for c in range(cols):
            a = r * span + 2 * c
            assert got[(a ^ ((a >> 3) & mask)) // 2] == X[r, c]


# ----------------------------------------------------------------------------- fields
def test_tiled_load_1d_to_5d():
    X = np.arange(2 * 3 * 4 * 5 * 8, dtype=np.int32).reshape(2, 3, 4, 5, 8)
    tm5 = tensor_map(X, box=(8, 2, 2, 2, 1))
    got = tma_load(tm5, (0, 1, 2, 1, 1), 8 * 2 * 2 * 2 * 4).view(np.int32)
    np.testing.assert_array_equal(got, X[1:2, 1:3, 2:4, 1:3, 0:8].reshape(-1))
    x1 = np.arange(64, dtype=np.uint32)
    got = tma_load(tensor_map(x1, box=(16,)), (32,), 64).view(np.uint32)
    np.testing.assert_array_equal(got, x1[32:48])
    x3 = np.arange(4 * 6 * 4, dtype=np.float32).reshape(4, 6, 4)
    got = tma_load(tensor_map(x3, box=(4, 3, 2)), (0, 2, 1), 96).view(np.float32)
    np.testing.assert_array_equal(got, x3[1:3, 2:5, :].reshape(-1))


def test_oob_fill_zero_and_nan_at_the_tensor_edges():
    X = np.arange(1, 10 * 8 + 1, dtype=np.float32).reshape(10, 8)
    zero = tma_load(tensor_map(X, box=(8, 4)), (-4, 8), 128).view(np.float32).reshape(4, 8)
    # columns -4..-1 and rows 10..11 are outside: zeros; inside: X[8:10, 0:4]
    want = np.zeros((4, 8), np.float32)
    want[0:2, 4:8] = X[8:10, 0:4]
    np.testing.assert_array_equal(zero, want)
    nan = tma_load(tensor_map(X, box=(8, 4), oob_fill="nan"), (-4, 8), 128).view(np.float32).reshape(4, 8)
    np.testing.assert_array_equal(np.isnan(nan), want == 0)
    np.testing.assert_array_equal(nan[0:2, 4:8], X[8:10, 0:4])
    assert (nan.view(np.uint32)[want == 0] == 0x7FFFFFFF).all()
    with pytest.raises(InterpreterError, match="NaN fill for the non-floating-point elemtype u32"):
        tensor_map(X.view(np.uint32), box=(8, 4), oob_fill="nan")


def test_byte_strides_dims_and_offset_describe_a_window_of_a_padded_array():
    P = np.arange(6 * 16, dtype=np.float32).reshape(6, 16)    # rows padded to 64 bytes
    # a 5 x 12 tensor starting at P[1, 4]: dims (12, 5), row stride 64 bytes, byte offset 80
    tm = tensor_map(P, box=(4, 2), dims=(12, 5), strides=(64,), offset=4 * 16 + 16)
    got = tma_load(tm, (8, 3), 32).view(np.float32).reshape(2, 4)
    np.testing.assert_array_equal(got, P[4:6, 12:16])
    got = tma_load(tm, (10, 4), 32).view(np.float32).reshape(2, 4)
    want = np.zeros((2, 4), np.float32)
    want[0, 0:2] = P[5, 14:16]                                  # columns 12, 13 and row 5 are OOB
    np.testing.assert_array_equal(got, want)
    with pytest.raises(InterpreterError, match=r"the tensor's start \(offset 72 into the array\) is not "
                                               r"16-byte aligned"):
        tensor_map(P, box=(4, 2), dims=(12, 5), strides=(64,), offset=72)


def test_element_strides_traverse_every_kth_element():
    X = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    tm = tensor_map(X, box=(4, 8), element_strides=(1, 2))
    # dimension 1 (rows) steps by 2: ceil(8 / 2) = 4 rows 0, 2, 4, 6; dimension 0 ignores its
    # element stride without interleave
    got = tma_load(tm, (4, 0), 4 * 4 * 4).view(np.float32).reshape(4, 4)
    np.testing.assert_array_equal(got, X[0:8:2, 4:8])
    tm = tensor_map(X, box=(4, 3), element_strides=(2, 3))
    got = tma_load(tm, (0, 1), 4 * 4).view(np.float32).reshape(1, 4)
    np.testing.assert_array_equal(got, X[1:2, 0:4])


def test_interleaved_map_honours_dimension_0s_element_stride():
    X = np.arange(2 * 4 * 8, dtype=np.float16).reshape(2, 4, 8)   # NC/8HWC8-style 16-byte rows
    tm = tensor_map(X, box=(8, 4, 2), interleave="16B", element_strides=(1, 1, 1))
    got = tma_load(tm, (0, 0, 0), 128).view(np.float16)
    np.testing.assert_array_equal(got, X.reshape(-1))
    with pytest.raises(InterpreterError, match="the 32B interleave needs the 32B swizzle"):
        tensor_map(X, box=(8, 4, 2), interleave="32B")


def test_dtypes_and_l2_promotion():
    X = np.arange(64, dtype=np.uint16).reshape(4, 16)
    for l2 in range(4):
        got = tma_load(tensor_map(X, box=(8, 2), l2_promotion=l2), (8, 1), 32).view(np.uint16)
        np.testing.assert_array_equal(got, X[1:3, 8:16].reshape(-1))
    tm = tensor_map(X, box=(8, 2), dtype="bf16")
    assert (tm.fields.elemtype, tm.fields.elem_size) == (10, 2)
    assert tensor_map(X.view(np.float16), box=(8, 2)).fields.elemtype == 6
    assert tensor_map(X, box=(8, 2), dtype=9).fields.elemtype == 10     # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16


def test_tensor_map_in_global_memory_and_a_list_of_maps():
    X = np.arange(256, dtype=np.float32).reshape(16, 16)
    got = tma_load(tensor_map(X, box=(16, 2)), (0, 6), 128, by_value=False).view(np.float32)
    np.testing.assert_array_equal(got, X[6:8].reshape(-1))


def test_encoding_round_trip_and_the_documented_layout():
    X = np.zeros((64, 32), np.float16)
    tm = tensor_map(X, box=(32, 16), swizzle="128B_atom_32B", oob_fill="nan", l2_promotion=2)
    raw = tm.encode(0x7F0000001000)
    assert len(raw) == 128
    assert int.from_bytes(raw[0:8], "little") == 0x7F0000001000
    assert int.from_bytes(raw[8:12], "little") == 32 and int.from_bytes(raw[12:16], "little") == 64
    assert int.from_bytes(raw[32:40], "little") == 64                       # row stride, bytes
    assert int.from_bytes(raw[64:66], "little") == 32 and int.from_bytes(raw[66:68], "little") == 16
    assert raw[74:76] == b"\x01\x01"
    assert (raw[79], raw[80], raw[81], raw[82], raw[83], raw[84], raw[85], raw[86]) == (1, 6, 0, 3, 1, 1, 2, 0)
    f = TM.decode(raw)
    assert (f.rank, f.dims, f.strides, f.box, f.swizzle, f.atomicity, f.fill) == \
        (2, (32, 64), (2, 64), (32, 16), 3, 1, 1)


def test_invalid_maps_are_refused_like_the_driver():
    X = np.zeros((8, 64), np.float32)
    with pytest.raises(InterpreterError, match=r"box_dim\[0\] = 300 \(1..256\)"):
        tensor_map(X, box=(300, 1))
    with pytest.raises(InterpreterError, match="the inner box dimension is 12 bytes"):
        tensor_map(X, box=(3, 1))
    with pytest.raises(InterpreterError, match="spans 2304 bytes from offset 256, but the array has 2048"):
        tensor_map(X, box=(4, 1), offset=256)
    with pytest.raises(InterpreterError, match=r"swizzle='96B'; allowed: none, 32B"):
        tensor_map(X, box=(4, 1), swizzle="96B")


def test_rank_mismatch_and_misaligned_destination():
    X = np.arange(64, dtype=np.float32).reshape(8, 8)
    tm = tensor_map(X, box=(8, 1))
    text = load_kernel(3)
    out = np.zeros(8, np.uint32)
    with pytest.raises(InterpreterError, match=r"cp.async.bulk.tensor.3d uses a tensor map of rank 2"):
        launch(text, "k", [tm, out, np.uint32(32), np.uint32(32), np.int32(0), np.int32(0), np.int32(0)], block=32)


# ----------------------------------------------------------------------------- im2col
def test_im2col_load_gathers_pixels_with_the_filter_offset():
    # NHWC-like tensor of rank 4: C=8 channels (fastest), W=5, H=4, N=2
    X = np.arange(2 * 4 * 5 * 8, dtype=np.float32).reshape(2, 4, 5, 8)
    # pad 1 on each side for a 3x3 filter: the pixel box is W in -1..3 (W - 2) and H in -1..2
    # (H - 2): 5 x 4 positions per image
    tm = tensor_map(X, im2col=dict(lower=(-1, -1), upper=(-1, -1), channels=8, pixels=7))
    # start at (w, h, n) = (1, 2, 0) with filter tap (s, r) = (2, 1): pixel j is the j-th box
    # position from there in W-fastest order (wrapping to the next row, then the next image),
    # read at (w + 2, h + 1)
    got = tma_load(tm, (0, 1, 2, 0), 7 * 8 * 4, mode="im2col", offsets=(2, 1)).view(np.float32)
    got = got.reshape(7, 8)
    reads = [(3, 3, 0), (4, 3, 0), None, (1, 0, 1), (2, 0, 1), (3, 0, 1), (4, 0, 1)]
    for j, at in enumerate(reads):
        want = np.zeros(8, np.float32) if at is None else X[at[2], at[1], at[0]]
        np.testing.assert_array_equal(got[j], want, err_msg=f"pixel {j}")     # (5, 3): OOB


# ----------------------------------------------------------------------------- stores / reductions
def store_kernel(rank, red=None, mode="tile"):
    cs = ", ".join(f"%r{10 + i}" for i in range(rank))
    cparams = "".join(f", .param .s32 c{i}" for i in range(rank))
    cload = "".join(f"    ld.param.u32 %r{10 + i}, [c{i}];\n" for i in range(rank))
    op = (f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{red}.tile.bulk_group" if red else
          f"cp.async.bulk.tensor.{rank}d.global.shared::cta.{mode}.bulk_group")
    return HDR + f"""
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 src, .param .u32 nwords{cparams})
{{
    .reg .u32 %r<40>; .reg .u64 %rd<8>; .reg .pred %p<4>;
    .shared .align 1024 .b8 buf[16384];
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r20, [nwords];
{cload}    mov.b64 %rd5, tm;
    cvta.param.u64 %rd5, %rd5;
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, buf;
    mov.u32 %r22, %r1;
    mov.u32 %r26, %ntid.x;
LOOP:
    setp.ge.u32 %p3, %r22, %r20;
    @%p3 bra DONE;
    mul.wide.u32 %rd2, %r22, 4;
    add.u64 %rd3, %rd1, %rd2;
    ld.global.u32 %r25, [%rd3];
    shl.b32 %r23, %r22, 2;
    add.u32 %r24, %r3, %r23;
    st.shared.u32 [%r24], %r25;
    add.u32 %r22, %r22, %r26;
    bra LOOP;
DONE:
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 {op} [%rd5, {{{cs}}}], [%r3];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    ret;
}}
"""


def tma_store(tm, src_words, coords, red=None, mode="tile"):
    text = store_kernel(tm.fields.rank, red, mode)
    if text not in _CHECKED:
        ptxas_ok(text)
        _CHECKED.add(text)
    src = np.ascontiguousarray(src_words).view(np.uint32)
    launch(text, "k", [tm, src, np.uint32(len(src))] + [np.int32(c) for c in coords], block=128)


def test_store_writes_only_in_bound_elements_through_the_swizzle():
    Y = np.full((10, 32), -1, np.float32)
    tm = tensor_map(Y, box=(32, 4), swizzle=128)
    box = np.arange(4 * 32, dtype=np.float32).reshape(4, 32)
    smem = np.empty(128, np.float32)
    r, c = np.meshgrid(np.arange(4), np.arange(32), indexing="ij")
    smem[swz128(128 * r + 4 * c).reshape(-1) // 4] = box.reshape(-1)   # as a TMA load left it
    tma_store(tm, smem, (0, 8))
    np.testing.assert_array_equal(Y[8:10], box[0:2])                 # rows 10, 11 are OOB: dropped
    assert (Y[:8] == -1).all()


def test_im2col_no_offs_store_scatters_pixels_back():
    Y = np.zeros((1, 3, 4, 8), np.float32)          # C=8, W=4, H=3, N=1
    tm = tensor_map(Y, im2col=dict(lower=(0, 0), upper=(0, 0), channels=8, pixels=5))
    src = np.arange(5 * 8, dtype=np.float32)
    # 5 pixels from (w, h) = (2, 1): (2,1) (3,1) (0,2) (1,2) (2,2), no filter offsets
    tma_store(tm, src, (0, 2, 1, 0), mode="im2col_no_offs")
    want = np.zeros_like(Y)
    for j, (w, h) in enumerate([(2, 1), (3, 1), (0, 2), (1, 2), (2, 2)]):
        want[0, h, w] = src[8 * j:8 * j + 8]
    np.testing.assert_array_equal(Y, want)


@pytest.mark.parametrize("op, dt, a, b, want", [
    ("add", np.float32, [1.5, -2.0, 3.25, 0.0], [0.25, 2.0, 1.0, -0.5], [1.75, 0.0, 4.25, -0.5]),
    ("min", np.int32, [5, -7, 3, 0], [4, -1, 9, 0], [4, -7, 3, 0]),
    ("max", np.uint32, [5, 7, 3, 0], [4, 1, 9, 2], [5, 7, 9, 2]),
    ("add", np.uint32, [0xFFFFFFFF, 1, 2, 3], [1, 1, 1, 1], [0, 2, 3, 4]),
])
def test_tensor_reductions(op, dt, a, b, want):
    Y = np.array(a, dt)
    tma_store(tensor_map(Y, box=(4,)), np.array(b, dt), (0,), red=op)
    np.testing.assert_array_equal(Y, np.array(want, dt))


def test_bf16_add_reduction_rounds_once():
    import ml_dtypes
    Y = np.array([1.0, 256.0, 3.0, -1.0] * 2, ml_dtypes.bfloat16)
    b = np.array([2 ** -8, 1.0, 0.5, 1.0] * 2, ml_dtypes.bfloat16)
    tma_store(tensor_map(Y, box=(8,)), b, (0,), red="add")
    # 1 + 2^-8 ties to even -> 1.0; 256 + 1 rounds to 256 (bf16 has 8 bits); exact otherwise
    np.testing.assert_array_equal(Y.astype(np.float32), [1.0, 256.0, 3.5, 0.0] * 2)


# ----------------------------------------------------------------------------- launch arguments
ADDRS = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 tmg, .param .u64 y, .param .u64 out)
{
    .reg .u64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [tm];
    ld.param.u64 %rd3, [y];
    ld.param.u64 %rd4, [tmg];
    ld.global.u64 %rd5, [%rd4];
    ld.global.u64 %rd6, [%rd4+128];
    st.global.u64 [%rd1], %rd2;
    st.global.u64 [%rd1+8], %rd3;
    st.global.u64 [%rd1+16], %rd5;
    st.global.u64 [%rd1+24], %rd6;
    ret;
}
"""


def test_tensor_maps_share_the_allocation_of_pointer_arguments():
    """A map over an array that is also a pointer argument (or a view of one) encodes that
    argument's device address; maps for a .u64 param lie in global memory, one after another."""
    ptxas_ok(ADDRS)
    Y = np.zeros((4, 16), np.float32)
    out = np.zeros(4, np.uint64)
    maps = [tensor_map(Y[i:i + 2], box=(16, 2)) for i in (0, 2)]
    launch(ADDRS, "k", [tensor_map(Y, box=(16, 4)), maps, Y, out], block=1)
    assert out[0] == out[1]                      # the by-value map's global_address is Y's
    assert out[2] == out[1] and out[3] == out[1] + 2 * 64
    with pytest.raises(InterpreterError, match=r"param 'y' is .u64: tensor maps go|"
                                               r"param 'tm' is .b8\[128\]: a tensor map by value"):
        launch(ADDRS, "k", [maps, maps, Y, out], block=1)


def test_half_precision_scalars_for_b16_params():
    import ml_dtypes
    text = HDR + """
.visible .entry k(.param .u64 out, .param .f16 h, .param .b16 b, .param .b16 x, .param .b16 y)
{
    .reg .b64 %rd1; .reg .b16 %h<5>;
    ld.param.u64 %rd1, [out];
    ld.param.b16 %h1, [h]; ld.param.b16 %h2, [b]; ld.param.b16 %h3, [x]; ld.param.b16 %h4, [y];
    st.global.b16 [%rd1], %h1; st.global.b16 [%rd1+2], %h2;
    st.global.b16 [%rd1+4], %h3; st.global.b16 [%rd1+6], %h4;
    ret;
}
"""
    ptxas_ok(text)
    o = np.zeros(4, np.uint16)
    launch(text, "k", [o, np.float16(1.5), ml_dtypes.bfloat16(2.5), np.float16(-3.0),
                       ml_dtypes.bfloat16(-1.0)], block=1)
    assert [hex(v) for v in o] == ["0x3e00", "0x4020", "0xc200", "0xbf80"]
    launch(text, "k", [o, 1.5, ml_dtypes.bfloat16(1.0), 7, 0x3c00], block=1)   # ints are bits
    assert [hex(v) for v in o] == ["0x3e00", "0x3f80", "0x7", "0x3c00"]
    with pytest.raises(InterpreterError) as e:
        launch(text, "k", [o, 1.5, 2.5, 7, 0], block=1)
    assert str(e.value) == ("param 'b' (.b16) got 2.5 (float): not an integer (it would be truncated); a .b16 "
                            "takes an integer in [-32768, 65535] (either signedness: its bits are passed), or a "
                            "typed NumPy float of 16 bits (np.float16, ml_dtypes.bfloat16, np.float32, ...) "
                            "whose bits it gets")


# ----------------------------------------------------------------------------- sm_100 forms, hints
HDR100 = ".version 8.6\n.target sm_100a\n.address_size 64\n"

GATHER = HDR100 + """
.visible .entry k(.param .align 64 .b8 tin[128], .param .align 64 .b8 tout[128])
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<3>; .reg .b64 %st, %pol;
    .shared .align 1024 .b8 buf[2048];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tin;
    cvta.param.u64 %rd1, %rd1;
    mov.b64 %rd2, tout;
    cvta.param.u64 %rd2, %rd2;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    createpolicy.fractional.L2::evict_first.b64 %pol, 1.0;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 256;
    cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes.L2::cache_hint [%r3], [%rd1, {8, 5, 0, 7, 2}], [%r2], %pol;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
    @!%p1 bra WAIT;
    fence.proxy.async.shared::cta;
    cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group.L2::cache_hint [%rd2, {16, 1, 3, 0, 6}], [%r3], %pol;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ret;
}
"""


def test_gather4_and_scatter4_with_cache_hints():
    ptxas_ok_arch(GATHER, "sm_100a")
    X = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    Y = np.zeros((8, 32), np.float32)
    launch(GATHER, "k", [tensor_map(X, box=(16, 1)), tensor_map(Y, box=(16, 1))], block=1)
    want = np.zeros((8, 32), np.float32)
    for src, dst in zip((5, 0, 7, 2), (1, 3, 0, 6)):      # rows gathered, then scattered
        want[dst, 16:32] = X[src, 8:24]
    np.testing.assert_array_equal(Y, want)


def ptxas_ok_arch(text, arch):
    try:
        ptxas_check(text, arch)
    except Exception as e:
        if "not found" in str(e) or "no ptxas" in str(e).lower():
            return
        raise


WAR = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 1024 .b32 buf[256];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r1;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    ld.shared.u32 %r6, [%r5];            // every warp reads its part of buf
    SYNC
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 1024;
    @%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {0}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r7, [%r5];
    add.u32 %r7, %r7, %r6;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
    ret;
}
"""


def test_tma_overwriting_what_another_warp_still_reads_is_a_race():
    from jax_pyptx.errors import RaceError
    x = np.arange(256, dtype=np.uint32) * 10
    fixed = WAR.replace("SYNC", "bar.sync 0;")
    ptxas_ok(fixed)
    out = np.zeros(256, np.uint32)
    launch(fixed, "k", [tensor_map(x, box=(256,)), out], block=256)
    np.testing.assert_array_equal(out, x + np.arange(256))
    with pytest.raises(RaceError) as e:
        launch(WAR.replace("SYNC", ""), "k", [tensor_map(x, box=(256,)), out], block=256)
    assert ("it overwrites shared address 0x80 ('buf' (+128)) that warp 1 of this CTA loaded since the "
            "last barrier: a bar.sync (or the mbarrier wait that frees the buffer) is missing between "
            "that load and this copy") in str(e.value)


def test_128b_swizzle_with_32_byte_atoms_is_tcgen05_swizzle_code_1():
    """A tensor map's 128B swizzle with 32-byte atomicity writes the layout tcgen05's descriptor
    swizzle code 1 ("128B_base32B") reads: 32-byte unit u of 128-byte row r lands at unit
    u ^ (r % 4), bytes within a unit stay in place."""
    from jax_pyptx.interpret.state.tensormap import swizzle as tma_swizzle
    from jax_pyptx.isa.descriptors import TCGEN05_SWIZZLE_CODES
    from jax_pyptx.isa.swizzle import swizzle as isa_swizzle
    addr = np.arange(2048)
    want = (addr & ~0x60) | ((((addr >> 5) & 3) ^ ((addr >> 7) & 3)) << 5)
    np.testing.assert_array_equal(tma_swizzle(addr, 3, 1), want)
    np.testing.assert_array_equal(isa_swizzle(addr, TCGEN05_SWIZZLE_CODES[1]), want)
    # row 1's units [0 1 2 3] -> [1 0 3 2]; row 5 repeats row 1
    assert [int(tma_swizzle(128 + 32 * u, 3, 1)) // 32 - 4 for u in range(4)] == [1, 0, 3, 2]
    assert [int(tma_swizzle(640 + 32 * u, 3, 1)) // 32 - 20 for u in range(4)] == [1, 0, 3, 2]
