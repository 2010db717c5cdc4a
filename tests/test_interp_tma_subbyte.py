"""Issue 22, the packed sub-byte tensor-map types (fp4 / fp6 operands of the block-scaled
tcgen05 kinds): CUtensorMapDataType 13 16U4_ALIGN8B (.b4x16), 14 16U4_ALIGN16B (.b4x16_p64),
15 16U6_ALIGN16B (.b6x16_p32). Global memory holds the elements packed; a copy moves each group
of 16 elements of a box row as a unit of 8 bytes (.b4x16) or 16 bytes (the packed 8 or 12 bytes
and a gap). Loads are checked byte for byte against a NumPy model of that layout (np.unpackbits /
np.packbits), the mbarrier's byte count against the shared footprint, stores against the packed
global bytes, and the driver's rules for these types against its messages."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import DeadlockError, InterpreterError, UninitializedReadError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.state import tensormap as TM
from jax_pyptx.interpret.ops import tma_boxes as T

from jax_pyptx.toolchain import ptxas_check

from .test_interp_tma import swz128, tma_load, tma_store


def ptxas_ok(text, arch):
    try:
        ptxas_check(text, arch)
    except Exception as e:          # no ptxas on this machine: nothing to check
        if "not found" not in str(e) and "no ptxas" not in str(e).lower():
            raise

# type name -> (elemtype, bits, shared bytes per 16 elements)
TYPES = {"b4x16": (13, 4, 8), "b4x16_p64": (14, 4, 16), "b6x16_p32": (15, 6, 16)}
RNG = np.random.default_rng(22)


def packed_array(rows, elems, bits):
    """Random packed bytes: ``rows`` rows of ``elems`` elements."""
    return RNG.integers(0, 256, (rows, elems * bits // 8), dtype=np.uint8)


def unpack(packed, bits):
    """(rows, bytes) packed bytes -> (rows, elements) codes, element i from the low bits up."""
    b = np.unpackbits(packed, axis=-1, bitorder="little")
    b = b.reshape(packed.shape[0], -1, bits).astype(np.uint16)
    return (b << np.arange(bits, dtype=np.uint16)).sum(-1).astype(np.uint8)


def pack(codes, bits):
    """(rows, elements) codes -> (rows, bytes) packed bytes (the inverse of ``unpack``)."""
    b = ((codes[..., None] >> np.arange(bits)) & 1).astype(np.uint8).reshape(codes.shape[0], -1)
    return np.packbits(b, axis=-1, bitorder="little")


def smem_model(codes, bits, unit):
    """What a load leaves in shared memory for a box of ``codes`` (rows, elements): each group
    of 16 elements packed from the first byte of its ``unit``-byte unit, the rest zero."""
    rows, inner = codes.shape
    groups = pack(codes.reshape(rows * inner // 16, 16), bits)       # 8 or 12 bytes each
    out = np.zeros((rows * inner // 16, unit), np.uint8)
    out[:, :groups.shape[1]] = groups
    return out.reshape(-1)


# ----------------------------------------------------------------------------- the encode side
@pytest.mark.parametrize("name", list(TYPES))
def test_tensor_map_of_each_type_sizes_by_elements_and_encodes_its_type_field(name):
    code, bits, unit = TYPES[name]
    G = packed_array(4, 256, bits)                       # 256 elements a row: 128 or 192 bytes
    for dtype in (name, TM.PACKED[code][2], code):       # PTX name, driver name, CU value
        tm = tensor_map(G, box=(128, 2), dtype=dtype)
        f = tm.fields
        assert (f.elemtype, f.elem_bits, f.elem_size, f.packed) == (code, bits, 0, True)
        assert (f.dims, f.strides[1:], f.box) == ((256, 4), (256 * bits // 8,), (128, 2))
    raw = tm.encode(0x7F0000000000)
    assert raw[80] == code
    assert int.from_bytes(raw[8:12], "little") == 256                 # elements, not bytes
    assert int.from_bytes(raw[32:40], "little") == 256 * bits // 8    # the row stride in bytes
    assert TM.decode(raw) == tm.fields.__class__(**{**tm.fields.__dict__, "address": 0x7F0000000000})
    assert repr(tm) == (f"TensorMap({name} rank 2, dims (256, 4), {bits}-bit elements, byte strides "
                        f"({256 * bits // 8},), box (128, 2), element strides (1, 1))")


def err(fn):
    with pytest.raises(InterpreterError) as e:
        fn()
    return str(e.value)


def test_the_drivers_rules_for_the_packed_types():
    G4 = packed_array(8, 256, 4)                          # rows of 128 bytes
    G6 = packed_array(8, 256, 6)                          # rows of 192 bytes
    assert err(lambda: tensor_map(np.ascontiguousarray(G4[:, :32]), box=(128, 2), dtype="b4x16_p64")).endswith(
        "global_dim[0] = 64: b4x16_p64 (16U4_ALIGN16B) needs a multiple of 128")
    assert err(lambda: tensor_map(G4, box=(64, 2), dtype="b4x16_p64")).endswith(
        "box_dim[0] = 64: b4x16_p64 (16U4_ALIGN16B) needs 128")
    assert err(lambda: tensor_map(G6, box=(128, 2), dtype="b6x16_p32", dims=(128, 8),
                                  strides=(112,))).endswith(
        "global_stride[0] = 112 (a multiple of 32 below 2^40) (16-byte aligned packed type)")
    assert err(lambda: tensor_map(G6, box=(128, 2), dtype="b6x16_p32", dims=(128, 4), strides=(192,),
                                  offset=16)) == (
        "tensor_map: the tensor's start (offset 16 into the array) is not 32-byte aligned")
    assert err(lambda: tensor_map(G4, box=(32, 2), dtype="b4x16", dims=(33, 8), strides=(128,))).endswith(
        "global_dim[0] = 33: b4x16 (16U4_ALIGN8B) needs a multiple of 2")
    assert err(lambda: tensor_map(G4, box=(24, 2), dtype="b4x16")).endswith(
        "the inner box dimension is 12 bytes (a multiple of 16)")
    assert err(lambda: tensor_map(G4, box=(128, 2), dtype="b4x16", swizzle=32)).endswith(
        "the inner box dimension is 64 bytes, more than the 32-byte swizzle span")
    assert err(lambda: tensor_map(G4, box=(128, 2), dtype="b4x16_p64", swizzle=64)).endswith(
        "swizzle 64B with b4x16_p64 (16U4_ALIGN16B) (allowed: none (load), 128B (load), "
        "128B_atom_32B (load))")
    assert err(lambda: tensor_map(G6, box=(128, 2), dtype="b6x16_p32", swizzle="128B_atom_32B_flip_8B")
               ).endswith("swizzle 128B_atom_32B_flip_8B with b6x16_p32 (16U6_ALIGN16B) (allowed: none "
                          "(load and store), 128B (load and store), 128B_atom_32B (load and store), "
                          "128B_atom_64B (store))")
    assert err(lambda: tensor_map(G4, box=(64, 2), dtype="b4x16", oob_fill="nan")).endswith(
        "NaN fill for the non-floating-point elemtype b4x16")
    G3 = G6.reshape(2, 4, 192)
    assert err(lambda: tensor_map(G3, box=(128, 2, 1), dtype="b6x16_p32", interleave=1)).endswith(
        "interleave_layout 1 with b6x16_p32 (16U6_ALIGN16B): the driver requires none")
    assert err(lambda: tensor_map(np.ascontiguousarray(G4[:, :1]), box=(2, 2), dtype="b6x16_p32")) == (
        "tensor_map: the array's rows (1 bytes) do not hold a whole number of 6-bit b6x16_p32 "
        "elements; pass dims=")
    # a valid map (box 128 x 2, 32-byte aligned, 128B swizzle) is accepted for each wide type
    assert tensor_map(G6, box=(128, 2), dtype="b6x16_p32", swizzle=128).fields.swizzle == 3


# ----------------------------------------------------------------------------- loads
@pytest.mark.parametrize("name, at", [
    ("b4x16_p64", (128, 1)), ("b6x16_p32", (0, 2)), ("b4x16", (64, 0)), ("b4x16", (192, 3)),
    ("b6x16_p32", (8, 1)), ("b6x16_p32", (-4, 5)),       # groups that start inside a byte
])
def test_load_puts_each_16_element_group_in_its_unit(name, at):
    code, bits, unit = TYPES[name]
    G = packed_array(6, 256, bits)
    box = (128, 4)
    tm = tensor_map(G, box=box, dtype=name)
    nbytes = 4 * 128 // 16 * unit                        # the shared footprint
    got = tma_load(tm, at, 4 * 128 * bits // 8, dump=nbytes)     # expect_tx: the packed bytes
    codes = unpack(G, bits)
    want_codes = np.zeros((4, 128), np.uint8)            # out-of-bound elements load as zeros
    c0, c1 = at
    for r in range(4):
        for c in range(128):
            if 0 <= c1 + r < codes.shape[0] and 0 <= c0 + c < codes.shape[1]:
                want_codes[r, c] = codes[c1 + r, c0 + c]
    np.testing.assert_array_equal(got, smem_model(want_codes, bits, unit))
    if unit == 16:                                       # the gaps are there and zero
        gaps = got.reshape(-1, 16)[:, 2 * bits:]
        assert gaps.shape[1] == 16 - 2 * bits and not gaps.any()


def test_footprints_differ_by_the_padding():
    G = packed_array(128, 256, 4)
    fp = {}
    for name in ("b4x16", "b4x16_p64"):
        f = tensor_map(G, box=(128, 128), dtype=name).fields
        fp[name] = T.make_box(f, "tile", (0, 0)).nbytes
    assert fp == {"b4x16": 8192, "b4x16_p64": 16384}   # a 128 x 128 fp4 box


def test_128b_swizzled_fp6_load_moves_the_16_byte_units():
    G = packed_array(8, 128, 6)
    tm = tensor_map(G, box=(128, 8), dtype="b6x16_p32", swizzle=128)
    got = tma_load(tm, (0, 0), 8 * 128 * 6 // 8, dump=8 * 128)
    dense = smem_model(unpack(G, 6), 6, 16)
    a = np.arange(8 * 128)
    want = np.empty_like(dense)
    want[swz128(a)] = dense
    np.testing.assert_array_equal(got, want)


def test_im2col_fp6_load_of_128_channels_per_pixel():
    # rank 3: C = 128 six-bit channels (96 bytes, rows padded to 128 bytes), W = 6, N = 1
    G = packed_array(6, 128, 6)
    Gp = np.zeros((6, 128), np.uint8)
    Gp[:, :96] = G
    tm = tensor_map(Gp, dtype="b6x16_p32", dims=(128, 6, 1), strides=(128, 768),
                    im2col=dict(lower=(0,), upper=(0,), channels=128, pixels=4))
    got = tma_load(tm, (0, 1, 0), 4 * 128 * 6 // 8, mode="im2col", offsets=(1,), dump=4 * 128)
    want = unpack(G, 6)[[2, 3, 4, 5]]                     # pixels w = 1..4 read at w + 1
    np.testing.assert_array_equal(got, smem_model(want, 6, 16))


def test_the_mbarrier_counts_the_packed_bytes():
    """A 128 x 64 fp4 box with a .b4x16_p64 map writes 8192 bytes of shared memory (16-byte
    units of 8 packed bytes) but completes 4096 transaction bytes, the packed size, as Triton's
    block-scaled fp8 x fp4 matmul (run on B200s) announces with expect_tx; announcing the
    footprint leaves the phase waiting forever."""
    G = packed_array(64, 128, 4)
    tm = tensor_map(G, box=(128, 64), dtype="b4x16_p64")
    assert T.make_box(tm.fields, "tile", (0, 0)).tx_bytes == 4096
    got = tma_load(tm, (0, 0), 4096, dump=8192)           # balanced
    np.testing.assert_array_equal(got, smem_model(unpack(G, 4), 4, 16))
    with pytest.raises(DeadlockError) as e:
        tma_load(tm, (0, 0), 8192)
    assert ("(current phase 0, 0 of 1 arrivals pending, tx-count 4096)" in str(e.value))


@pytest.mark.parametrize("name, swizzle, what, allowed", [
    ("b6x16_p32", "128B_atom_64B", "load", "none (load and store), 128B (load and store), "
                                           "128B_atom_32B (load and store), 128B_atom_64B (store)"),
])
def test_a_load_with_a_store_only_swizzle_is_refused(name, swizzle, what, allowed):
    G = packed_array(2, 128, 6)
    tm = tensor_map(G, box=(128, 2), dtype=name, swizzle=swizzle)
    msg = err(lambda: tma_load(tm, (0, 0), 256))
    assert (f"a TMA {what} with a {name} (16U6_ALIGN16B) map swizzled {swizzle}; the driver allows: "
            f"{allowed}") in msg


# ----------------------------------------------------------------------------- stores
def test_fp6_store_writes_the_packed_bytes_and_ignores_the_gaps():
    codes = RNG.integers(0, 64, (2, 128), dtype=np.uint8)
    src = smem_model(codes, 6, 16).reshape(-1, 16)
    src[:, 12:] = 0xAB                                    # garbage in the gaps: never stored
    Y = np.full((3, 96), 0x5A, np.uint8)                  # 3 rows of 128 six-bit elements
    tma_store(tensor_map(Y, box=(128, 2), dtype="b6x16_p32"), src.reshape(-1), (0, 1))
    assert (Y[0] == 0x5A).all()
    np.testing.assert_array_equal(Y[1:], pack(codes, 6))


def test_fp4_store_through_the_128b_swizzle_drops_rows_outside():
    codes = RNG.integers(0, 16, (4, 128), dtype=np.uint8)
    dense = smem_model(codes, 4, 8)                        # .b4x16: rows of 64 bytes
    a = np.arange(len(dense))
    src = np.empty_like(dense)
    src[swz128(a)] = dense
    Y = np.zeros((6, 64), np.uint8)
    tma_store(tensor_map(Y, box=(128, 4), dtype="b4x16", swizzle=128), src, (0, 4))
    np.testing.assert_array_equal(Y[4:], pack(codes[:2], 4))     # rows 6, 7 are outside
    assert not Y[:4].any()


def test_fp4_store_at_an_element_boundary_inside_a_row():
    """A 34-element tensor (a multiple of 2, as the driver requires) with rows padded to 32
    bytes: a 32-wide box from element 16 writes elements 16..33 (bytes 8..16) and drops the
    rest; the bytes around keep their value."""
    Y = np.full((1, 32), 0xFF, np.uint8)
    tm = tensor_map(Y, box=(32, 1), dtype="b4x16", dims=(34, 1), strides=(32,))
    codes = np.arange(32, dtype=np.uint8) % 16
    tma_store(tm, smem_model(codes[None], 4, 8), (16, 0))
    want = np.full(32, 0xFF, np.uint8)
    want[8:17] = pack(codes[None, :18], 4)[0]
    np.testing.assert_array_equal(Y[0], want)


def test_store_refusals_follow_the_driver_and_the_isa():
    G = packed_array(2, 128, 4)
    tm = tensor_map(G, box=(128, 2), dtype="b4x16_p64")
    msg = err(lambda: tma_store(tm, np.zeros(256, np.uint8), (0, 0)))
    assert ("a TMA store with a b4x16_p64 (16U4_ALIGN16B) map swizzled none; the driver allows: "
            "none (load), 128B (load), 128B_atom_32B (load)") in msg
    tm = tensor_map(G, box=(128, 2), dtype="b4x16")
    assert ("a .add reduction into the packed sub-byte type b4x16 (16U4_ALIGN8B): tensor reductions "
            "take whole-byte element types only") in err(
        lambda: tma_store(tm, np.zeros(128, np.uint8), (0, 0), red="add"))


GAPS = """.version 8.6
.target sm_100a
.address_size 64
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 src, .param .u32 skip)
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    .shared .align 128 .b8 buf[256];
    ld.param.u64 %rd1, [src];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r9, [skip];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 12;
    add.u64 %rd2, %rd1, %rd2;
    ld.global.u32 %r2, [%rd2];
    ld.global.u32 %r3, [%rd2+4];
    ld.global.u32 %r4, [%rd2+8];
    shl.b32 %r5, %r1, 4;
    mov.u32 %r6, buf;
    add.u32 %r6, %r6, %r5;
    setp.ne.u32 %p2, %r1, %r9;
    @%p2 st.shared.v2.u32 [%r6], {%r2, %r3};
    @%p2 st.shared.u32 [%r6+8], %r4;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    mov.b64 %rd3, tm;
    cvta.param.u64 %rd3, %rd3;
    mov.u32 %r7, buf;
    @%p1 cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd3, {0, 0}], [%r7];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    ret;
}
"""


def test_a_store_never_reads_the_gaps_but_checks_every_packed_byte():
    """16 threads each write the 12 packed bytes of one 16-element fp6 group into its 16-byte
    unit and leave the gap unwritten: the store runs clean. A thread that skips its group
    leaves packed bytes unwritten: an uninitialized read."""
    ptxas_ok(GAPS, "sm_100a")
    codes = RNG.integers(0, 64, (2, 128), dtype=np.uint8)
    packed = pack(codes, 6)                               # 2 x 96 bytes = 16 groups of 12
    Y = np.zeros((2, 96), np.uint8)
    tm = tensor_map(Y, box=(128, 2), dtype="b6x16_p32")
    launch(GAPS, "k", [tm, packed.reshape(-1).copy(), np.uint32(99)], block=16)
    np.testing.assert_array_equal(Y, packed)
    with pytest.raises(UninitializedReadError, match=r"the TMA store reads shared address 0x50 'buf' "
                                                     r"\(\+80\) before any thread of this CTA wrote it"):
        launch(GAPS, "k", [tm, packed.reshape(-1).copy(), np.uint32(5)], block=16)
