"""Descriptor builders checked bit by bit against the PTX ISA.

Field positions come from the ISA's tables; expected values are computed by hand from the
ISA's worked examples (each test names the ISA section it follows).
"""
import itertools

import pytest

from jax_pyptx.dsl.ptx import descriptors as D
from jax_pyptx.errors import PtxValueError


def bits(v: int, lo: int, hi: int) -> int:
    """Bits lo..hi (inclusive) of v."""
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


# ----------------------------------------------------------------------------- wgmma
def test_wgmma_descriptor_field_positions():
    # PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format": 13-0 start, 29-16 LBO, 45-32 SBO,
    # 51-49 base offset, 63-62 swizzle; matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
    top = 0x3FFF0                                    # the largest 16-byte-aligned value
    assert D.wgmma_desc(top, 0, 0, "none") == 0x3FFF
    assert D.wgmma_desc(0, top, 0, "none") == 0x3FFF << 16
    assert D.wgmma_desc(0, 0, top, "none") == 0x3FFF << 32
    assert D.wgmma_desc(0, 0, 0, "128B", base_offset=7) == (7 << 49) | (1 << 62)
    assert [D.wgmma_desc(0, 0, 0, s) >> 62 for s in ("none", "128B", "64B", "32B")] == \
        [0, 1, 2, 3]
    v = D.wgmma_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, "32B", base_offset=7)
    for lo, hi in ((14, 15), (30, 31), (46, 48), (52, 61)):   # unused bits stay clear
        assert bits(v, lo, hi) == 0
    # a 128B-swizzled K-major tile at shared address 0x400: start 0x400 >> 4 = 0x40,
    # LBO 16 B -> 1, SBO 1024 B -> 64, mode 1
    assert D.wgmma_desc(0x400, 16, 1024, "128B") == 0x4000004000010040


def test_wgmma_base_offset_rules():
    # "Matrix base offset. This is valid for all swizzling modes except the no-swizzle mode";
    # 0 when the pattern starts on its 1024/512/256-byte boundary, else
    # (pattern start addr >> 0x7) & 0x7
    with pytest.raises(PtxValueError) as e:
        D.wgmma_desc(0, 0, 0, "none", base_offset=1)
    assert "base_offset=1 is not allowed; allowed: 0 without swizzling" in str(e.value)
    assert D.matrix_base_offset(0x400, "128B") == 0
    assert D.matrix_base_offset(0x480, "128B") == 1          # (0x480 >> 7) & 7 = 9 & 7
    assert D.matrix_base_offset(0x600, "64B") == 0           # 512-byte boundary
    assert D.matrix_base_offset(0x280, "64B") == 5           # 0x280 >> 7 = 5
    assert D.matrix_base_offset(0x380, "32B") == 7
    assert D.matrix_base_offset(0x300, "32B") == 0           # 256-byte boundary


# ISA 9.7.15.5.1.2.1.3 "Canonical Layouts", Examples: (major, swizzle, element bits, exact
# layout (rows: MN, cols: K), LBO and SBO in bytes, their descriptor encodings)
ISA_EXAMPLES = (
    # K-Major, no-swizzling, tf32: ((8,2),(4,4)):((4,32),(1,64)); LBO 64*4, SBO 32*4 -> 16, 8
    ("K", "none", 32, (((8, 2), (4, 32)), ((4, 4), (1, 64))), 256, 128, 16, 8),
    # K-Major, 32B swizzling, tf32: ((8,2),(4,4)):((8,64),(1,4)); LBO NA (1), SBO 64*4 -> 16
    ("K", "32B", 32, (((8, 2), (8, 64)), ((4, 4), (1, 4))), None, 256, 1, 16),
    # MN-Major, no-swizzling, bf16: ((8,1,2),(8,2)):((1,8,64),(8,128)); LBO 128*2, SBO 64*2
    ("MN", "none", 16, (((8, 1, 2), (1, 8, 64)), ((8, 2), (8, 128))), 256, 128, 16, 8),
    # MN-Major, 32B swizzling, bf16: ((8,2,2),(8,2)):((1,8,128),(16,256)); LBO 256, SBO 512
    ("MN", "32B", 16, (((8, 2, 2), (1, 8, 128)), ((8, 2), (16, 256))), 256, 512, 16, 32),
    # MN-Major, 64B swizzling, bf16: ((8,4,2),(8,2)):((1,8,256),(32,512)); LBO 512, SBO 1024
    ("MN", "64B", 16, (((8, 4, 2), (1, 8, 256)), ((8, 2), (32, 512))), 512, 1024, 32, 64),
)


def _mode(shape, stride, i):
    """CuTe: coordinate i of a (shape, stride) mode, colexicographic (first sub-mode fastest)."""
    off = 0
    for n, s in zip(shape, stride):
        off += (i % n) * s
        i //= n
    return off


def _size(shape):
    out = 1
    for n in shape:
        out *= n
    return out


def _canonical(major, swizzle, t, lbo, sbo, m, k):
    """The ISA's canonical layout (in elements) for T, LBO, SBO (elements), m and k."""
    c = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[swizzle]
    if major == "K":
        if swizzle == "none":   # ((8,m),(T,2k)):((1T,SBO),(1,LBO))
            return ((8, m), (t, sbo)), ((t, 2 * k), (1, lbo))
        return ((8, m), (c * t, sbo)), ((t, 2 * k), (1, t))   # ((8,m),(T,2k)):((cT,SBO),(1,T))
    if swizzle == "none":       # ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
        return ((t, 1, m), (1, t, sbo)), ((8, k), (t, lbo))
    # ((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))
    return ((t, c, m), (1, t, lbo)), ((8, k), (c * t, sbo))


@pytest.mark.parametrize("ex", ISA_EXAMPLES, ids=lambda e: f"{e[0]}-{e[1]}-{e[2]}bit")
def test_canonical_strides_reproduce_the_isa_examples(ex):
    major, swizzle, ebits, (rows, cols), lbo, sbo, lbo_enc, sbo_enc = ex
    mn, k = _size(rows[0]), _size(cols[0])
    got_lbo, got_sbo = D.canonical_strides(major, swizzle, mn, k, ebits)
    assert got_sbo == sbo
    if lbo is None:                  # "Swizzled layouts: not used, assumed to be 1"
        assert got_lbo == 16
    else:
        assert got_lbo == lbo
    desc = D.wgmma_desc(0, got_lbo, got_sbo, swizzle)
    assert (bits(desc, 16, 29), bits(desc, 32, 45)) == (lbo_enc, sbo_enc)
    # the canonical layout with these strides is the ISA's exact layout, element by element
    t, eb = 128 // ebits, ebits // 8
    m = mn // (8 if major == "K" else t * {"none": 1, "32B": 2, "64B": 4}[swizzle])
    kk = k // (2 * t) if major == "K" else k // 8
    crow, ccol = _canonical(major, swizzle, t, got_lbo // eb, got_sbo // eb, m, kk)
    assert (_size(crow[0]), _size(ccol[0])) == (mn, k)
    for r, c in itertools.product(range(mn), range(k)):
        want = _mode(*rows, r) + _mode(*cols, c)
        assert _mode(*crow, r) + _mode(*ccol, c) == want, (r, c)


def test_canonical_strides_other_shapes():
    # K-major none: core matrices along MN first: SBO 128, LBO (mn/8)*128
    assert D.canonical_strides("K", "none", 64, 16, 16) == (1024, 128)
    # K-major swizzled: SBO = 8 rows x swizzle bytes, LBO unused (16 -> encoded 1)
    assert D.canonical_strides("K", "128B", 64, 64, 16) == (16, 1024)
    assert D.canonical_strides("K", "64B", 64, 32, 16) == (16, 512)
    # MN-major 128B, bf16, MN = 128: LBO = next atom along MN (8 x 128 B), SBO = 8 K rows
    assert D.canonical_strides("MN", "128B", 128, 16, 16) == (1024, 2048)
    with pytest.raises(PtxValueError):
        D.canonical_strides("K", "none", 12, 16, 16)


# ----------------------------------------------------------------------------- tcgen05 smem
def test_tcgen05_shared_memory_descriptor_fields():
    # PTX ISA 9.7.16.4.1 "Shared memory descriptor", Table 40: 0-13 start, 16-29 LBO,
    # 32-45 SBO, 46-48 fixed 0b001, 49-51 base offset, 52 LBO mode, 53-60 zero, 61-63 swizzle
    assert D.tcgen05_smem_desc(0, 0, 0, "none") == 1 << 46
    assert bits(D.tcgen05_smem_desc(0, 0, 0, "none"), 46, 48) == 0b001
    assert [D.tcgen05_smem_desc(0, 0, 0, s) >> 61 for s in
            ("none", "128B_base32B", "128B", "64B", "32B")] == [0, 1, 2, 4, 6]
    v = D.tcgen05_smem_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, "64B", base_offset=5)
    assert (bits(v, 0, 13), bits(v, 16, 29), bits(v, 32, 45)) == (0x3FFF,) * 3
    assert (bits(v, 49, 51), bits(v, 52, 52), bits(v, 53, 60)) == (5, 0, 0)
    assert (bits(v, 14, 15), bits(v, 30, 31)) == (0, 0)
    # 128B-swizzled K-major bf16 tile at 0x400, SBO 8 rows x 128 B, LBO unused (16 B -> 1)
    assert D.tcgen05_smem_desc(0x400, 16, 1024, "128B") == \
        (2 << 61) | (1 << 46) | (64 << 32) | (1 << 16) | 0x40
    assert D.tcgen05_smem_desc(0, 0x500, 0, "128B", lbo_absolute=True) == \
        (2 << 61) | (1 << 52) | (1 << 46) | (0x50 << 16)


def test_tcgen05_absolute_lbo_restrictions():
    # 9.7.16.3.1.2.1: absolute address mode: 128B swizzle (16B atomicity) only, base offset 0
    with pytest.raises(PtxValueError) as e:
        D.tcgen05_smem_desc(0, 0, 0, "64B", lbo_absolute=True)
    assert "swizzle='64B' is not allowed; allowed: 128B with lbo_absolute=True" in str(e.value)
    with pytest.raises(PtxValueError):
        D.tcgen05_smem_desc(0, 0, 0, "128B", base_offset=1, lbo_absolute=True)


# ----------------------------------------------------------------------------- tcgen05 idesc
def test_instruction_descriptor_table_42_by_hand():
    # 9.7.16.4.2 "Instruction descriptor", Table 42. kind::f16, D F32 (=1 at 4-5), A BF16
    # (=1 at 7-9), B F16 (=0), negate A (bit 13), transpose B (bit 16), N=256 (>>3 = 32 at
    # 17-22), M=128 (>>4 = 8 at 24-28): 0x10 + 0x80 + 0x2000 + 0x10000 + 0x400000 + 0x8000000
    v = D.tcgen05_instr_desc("f16", 128, 256, "f32", "bf16", "f16", neg_a=True, b_major="MN")
    assert v == 0x08412090
    # kind::i8, D S32 (=2), A s8 (=1), B u8 (=0), saturate (bit 3), M=64 N=48, sparse with
    # selector 3: 3 + 0x4 + 0x8 + 0x20 + 0x80 + (6 << 17) + (4 << 24)
    v = D.tcgen05_instr_desc("i8", 64, 48, "s32", "s8", "u8", saturate=True, sparse=True,
                             sparse_id2=3)
    assert v == 0x040C00AF
    # kind::f8f6f4 E2M1 x E3M2 (5, 4), D F16 (0), transpose A: (5<<7)|(4<<10)|(1<<15)|...
    v = D.tcgen05_instr_desc("f8f6f4", 64, 8, "f16", "e2m1", "e3m2", a_major="MN", neg_b=True)
    assert v == (5 << 7) | (4 << 10) | (1 << 14) | (1 << 15) | (1 << 17) | (4 << 24)
    # kind::tf32 (A = B = 2) for .ws with maximum shift 16 (= 2 at 30-31), M=32, N=64
    v = D.tcgen05_instr_desc("tf32", 32, 64, "f32", "tf32", ws=True, max_shift=16)
    assert v == (1 << 4) | (2 << 7) | (2 << 10) | (8 << 17) | (2 << 24) | (2 << 30)
    for lo, hi in ((6, 6), (23, 23), (29, 29)):          # reserved bits
        assert bits(v, lo, hi) == 0


def test_instruction_descriptor_shapes_and_rules_of_table_39():
    # cta_group 1: M 64/128, N 8..256 step 8 (M=128 included); cta_group 2: M 128/256, N step
    # 16; i8: N 8, 16, 24, 32, then step 16 (cta_group 2: step 32); .ws: M 32/64/128, N 64..256
    assert bits(D.tcgen05_instr_desc("f16", 128, 8, "f32", "f16"), 17, 22) == 1
    assert bits(D.tcgen05_instr_desc("f16", 256, 16, "f32", "f16", cta_group=2), 24, 28) == 16
    for bad in (dict(m=64, n=16, cta_group=2), dict(m=128, n=24, cta_group=2),
                dict(m=32, n=64), dict(m=128, n=72, ws=True)):
        with pytest.raises(PtxValueError):
            D.tcgen05_instr_desc("f16", dtype="f32", atype="f16", **bad)
    with pytest.raises(PtxValueError) as e:
        D.tcgen05_instr_desc("i8", 64, 40, "s32", "s8")
    assert "N=40 is not allowed; allowed: 8, 16, 24, 32, 48" in str(e.value)
    with pytest.raises(PtxValueError) as e:
        D.tcgen05_instr_desc("i8", 64, 32, "s32", "s8", neg_a=True)   # i8: "No Negate = 0"
    assert "neg_a=True is not allowed; allowed: False for kind i8" in str(e.value)
    with pytest.raises(PtxValueError):
        D.tcgen05_instr_desc("f16", 64, 32, "f32", "f16", max_shift=8)   # .ws only


def test_block_scaled_descriptor_tables_43_44_by_hand():
    # Table 44, kind::mxf4nvf4: B SF id 2 (bits 4-5), A = B = E2M1 (=1 at 7-9, 10-11), N=128
    # (>>3 = 16 at 17-22), scale type UE4M3 (bit 23 = 0), M=128 as M >> 7 = 1 at bits 27-28,
    # A SF id 2 (29-30): 0x20 + 0x80 + 0x400 + 0x200000 + 0x8000000 + 0x40000000
    v = D.tcgen05_instr_desc_block_scaled("mxf4nvf4", 128, 128, "e2m1", scale_type="ue4m3",
                                          a_sf_id=2, b_sf_id=2)
    assert v == 0x482004A0
    assert bits(v, 24, 26) == 0 and bits(v, 27, 28) == 1      # M is not at 24-28 here
    # Table 43, kind::mxf8f6f4: E5M2 x E2M3 (1, 3), UE8M0 (bit 23), SF ids 3/1, transpose B,
    # cta_group 2, M=256 (>>7 = 2), N=32, sparse (bit 2)
    v = D.tcgen05_instr_desc_block_scaled("mxf8f6f4", 256, 32, "e5m2", "e2m3", a_sf_id=3,
                                          b_sf_id=1, b_major="MN", sparse=True, cta_group=2)
    assert v == (1 << 2) | (1 << 4) | (1 << 7) | (3 << 10) | (1 << 16) | (4 << 17) | \
        (1 << 23) | (2 << 27) | (3 << 29)
    assert bits(v, 0, 1) == 0 and bits(v, 31, 31) == 0        # reserved for mxf8f6f4
    # Table 44 bit 31: K dimension, 1 = dense K=96 (cta_group 2, M=256)
    v = D.tcgen05_instr_desc_block_scaled("mxf4", 256, 64, "e2m1", cta_group=2, k96=True)
    assert v == (1 << 7) | (1 << 10) | (8 << 17) | (1 << 23) | (2 << 27) | (1 << 31)


def test_block_scaled_descriptor_rules():
    cases = (
        (dict(kind="mxf4", m=64, n=64, atype="e2m1"), "M=64 is not allowed; allowed: 128"),
        (dict(kind="mxf4", m=128, n=64, atype="e2m1", a_sf_id=1),
         "a_sf_id=1 is not allowed; allowed: 0, 2"),
        (dict(kind="mxf4nvf4", m=128, n=64, atype="e2m1", a_major="MN"),
         "a_major='MN' is not allowed; allowed: K"),
        (dict(kind="mxf4", m=128, n=64, atype="e2m1", scale_type="ue4m3"),
         "scale_type='ue4m3' is not allowed; allowed: ue8m0"),
        (dict(kind="mxf8f6f4", m=128, n=64, atype="e4m3", k96=True), "k96=True is not allowed"),
        (dict(kind="mxf8f6f4", m=128, n=64, atype="e4m3", sparse=True, cta_group=2),
         "M=128 is not allowed; allowed: 256"),
    )
    for kw, msg in cases:
        with pytest.raises(PtxValueError) as e:
            D.tcgen05_instr_desc_block_scaled(**kw)
        assert msg in str(e.value), (kw, str(e.value))
