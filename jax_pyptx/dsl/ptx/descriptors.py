"""Matrix descriptors, as pure-Python integers and as trace-time register arithmetic.

Every field position and code below is from the PTX ISA's tables (section names cited):

wgmma (sm_90a) shared-memory matrix descriptor, 64 bits ("Matrix Descriptor Format",
9.7.15.5.1.2.2), ``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``:

==========  ====================================================================
bits 0-13   encode(matrix start address)
bits 16-29  encode(leading dimension byte offset, LBO)
bits 32-45  encode(stride dimension byte offset, SBO)
bits 49-51  matrix base offset (any swizzle but none; see :func:`matrix_base_offset`)
bits 62-63  swizzle: 0 none, 1 128B, 2 64B, 3 32B
==========  ====================================================================

tcgen05 (sm_100a) shared-memory descriptor ("Shared memory descriptor", 9.7.16.4.1, Table 40):
the same start/LBO/SBO fields, bits 46-48 the fixed value 0b001, bits 49-51 base offset, bit 52
leading-dimension stride mode (0 relative offset, 1 absolute address: 128B swizzle, K-major,
base offset 0 only), bits 53-60 zero, bits 61-63 swizzle: 0 none, 1 128B with 32B atomicity,
2 128B, 4 64B, 6 32B.

tcgen05 instruction descriptor, 32 bits ("Instruction descriptor", 9.7.16.4.2).
Table 42 (kind::f16, tf32, f8f6f4, i8): bits 0-1 sparsity selector, 2 sparsity, 3 saturate
(i8), 4-5 D type (f16 0, f32 1, s32 2), 7-9 A type, 10-12 B type, 13/14 negate A/B (not i8),
15/16 transpose (MN-major) A/B, 17-22 N >> 3, 24-28 M >> 4, 30-31 maximum shift (.ws).
Tables 43/44 (block-scaled kind::mxf8f6f4, mxf4, mxf4nvf4): bit 2 sparsity, 4-5 B
scale-factor data id, 7-9 A type, 10-12 B type (10-11 for mxf4*), 13/14 negate, 15/16
transpose (0 for mxf4*), 17-22 N >> 3, 23 scale type (ue4m3 0, ue8m0 1), **27-28 M >> 7**
(bits 24-26 reserved), 29-30 A scale-factor data id, 31 K dimension (mxf4*: 1 = dense K=96).
"""
from __future__ import annotations

from ...errors import PtxValueError
from ...isa.descriptors import (
    IDESC_D_TYPE_CODES, IDESC_TYPE_CODES, MAX_SHIFT_CODES, TCGEN05_IDESC,
    TCGEN05_IDESC_BLOCK_SCALED, TCGEN05_SMEM, TCGEN05_SWIZZLE_CODES, WGMMA_SMEM,
    WGMMA_SWIZZLE_CODES, address_field, encode,
)
from ..context import user_loc

WGMMA_SWIZZLE = {v: k for k, v in WGMMA_SWIZZLE_CODES.items()}
TCGEN05_SWIZZLE = {v: k for k, v in TCGEN05_SWIZZLE_CODES.items()}
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}
# where a swizzle's repeating pattern starts (the base offset is 0 there)
PATTERN_BYTES = {"32B": 256, "64B": 512, "128B": 1024, "128B_base32B": 1024}


def _err(fn, param, value, allowed):
    raise PtxValueError(f"{fn}: {param}={value!r} is not allowed; allowed: {allowed}",
                        loc=user_loc())


def _field(fn, param, value):
    if not isinstance(value, int) or value < 0 or value >= 1 << 18 or value % 16:
        _err(fn, param, value, "a multiple of 16 below 2**18 (bytes)")
    return address_field(value)


def _swz(fn, swizzle, table):
    if swizzle not in table:
        _err(fn, "swizzle", swizzle, ", ".join(table))
    return table[swizzle]


def _base(fn, base_offset, swizzle):
    if not isinstance(base_offset, int) or not 0 <= base_offset < 8:
        _err(fn, "base_offset", base_offset, "0..7")
    if base_offset and swizzle == "none":
        _err(fn, "base_offset", base_offset, "0 without swizzling")
    return base_offset


def matrix_base_offset(pattern_start: int, swizzle: str = "128B") -> int:
    """The descriptor's base offset for a swizzle pattern starting at byte ``pattern_start``:
    0 on the pattern's boundary (1024/512/256 bytes for 128B/64B/32B), else
    ``(pattern_start >> 7) & 7`` (PTX ISA "Matrix Descriptor Format")."""
    if swizzle not in PATTERN_BYTES:
        _err("ptx.wgmma.matrix_base_offset", "swizzle", swizzle, ", ".join(PATTERN_BYTES))
    return 0 if pattern_start % PATTERN_BYTES[swizzle] == 0 else (pattern_start >> 7) & 7


def wgmma_desc(start: int, lbo: int, sbo: int, swizzle: str = "128B", base_offset: int = 0) -> int:
    """The 64-bit wgmma matrix descriptor for a shared-memory address ``start`` (bytes)."""
    fn = "ptx.wgmma.desc"
    return encode(WGMMA_SMEM, start=_field(fn, "start", start), lbo=_field(fn, "lbo", lbo),
                  sbo=_field(fn, "sbo", sbo), base_offset=_base(fn, base_offset, swizzle),
                  swizzle=_swz(fn, swizzle, WGMMA_SWIZZLE))


def tcgen05_smem_desc(start: int, lbo: int, sbo: int, swizzle: str = "128B",
                      base_offset: int = 0, lbo_absolute: bool = False) -> int:
    """The 64-bit tcgen05 shared-memory matrix descriptor. ``lbo_absolute``: ``lbo`` is the
    byte address of the second K chunk (48-byte K tiles; sm_103a), allowed with 128B
    swizzling, K-major operands and base offset 0 only."""
    fn = "ptx.tcgen05.smem_desc"
    sw = _swz(fn, swizzle, TCGEN05_SWIZZLE)
    _base(fn, base_offset, swizzle)
    if lbo_absolute and swizzle != "128B":
        _err(fn, "swizzle", swizzle, "128B with lbo_absolute=True")
    if lbo_absolute and base_offset:
        _err(fn, "base_offset", base_offset, "0 with lbo_absolute=True")
    return encode(TCGEN05_SMEM, start=_field(fn, "start", start), lbo=_field(fn, "lbo", lbo),
                  sbo=_field(fn, "sbo", sbo), base_offset=base_offset,
                  lbo_mode=int(bool(lbo_absolute)), swizzle=sw)


def canonical_strides(major: str, swizzle: str, mn: int, k: int, elem_bits: int) -> tuple:
    """(LBO, SBO) in bytes of an ``mn`` x ``k`` operand in the ISA's canonical layout
    (PTX ISA "Canonical Layouts", 9.7.15.5.1.2.1.3, with T = 128 / elem_bits elements per
    16 bytes and S the swizzle width in bytes):

    - K-major, none: ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``: 8-row x 16-byte core matrices
      stored along MN first, so SBO = 128 and LBO = ``(mn/8)*128``.
    - K-major, swizzled: ``((8,m),(T,2k)):((cT,SBO),(1,T))``: 8 rows of S bytes per atom,
      SBO = 8*S; LBO is not used ("assumed 1": 16 bytes, encoded 1).
    - MN-major, none: ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``: SBO = 128 between MN chunks of
      16 bytes, LBO = ``(mn*elem_bits/8/16)*128`` between groups of 8 K rows.
    - MN-major, swizzled: ``((T,c,m),(8,k)):((1,T,LBO),(cT,SBO))``: LBO = 8*S to the next
      atom along MN, SBO = ``mn*elem_bits`` (8 K rows of the whole MN extent).
    """
    fn = "ptx.wgmma.canonical_strides"
    if major not in ("K", "MN"):
        _err(fn, "major", major, "K, MN")
    if swizzle not in SWIZZLE_BYTES:
        _err(fn, "swizzle", swizzle, ", ".join(SWIZZLE_BYTES))
    s = SWIZZLE_BYTES[swizzle]
    mn_bytes = mn * elem_bits // 8
    if major == "K":
        if mn % 8:
            _err(fn, "mn", mn, "a multiple of 8 (rows)")
        if swizzle == "none":
            return (mn // 8) * 128, 128
        return 16, 8 * s
    if mn_bytes % s:
        _err(fn, "mn", mn, f"a multiple of {s * 8 // elem_bits} elements ({s} bytes)")
    if swizzle == "none":
        return (mn_bytes // 16) * 128, 128
    return 8 * s, mn_bytes * 8


# ----------------------------------------------------------------------------- tcgen05 idesc
_KIND_TYPES = {kind: {t: c for c, t in codes.items()} for kind, codes in IDESC_TYPE_CODES.items()}
_D_TYPES = {t: c for c, t in IDESC_D_TYPE_CODES.items()}
_SHIFT_CODE = {v: c for c, v in MAX_SHIFT_CODES.items()}


def _name(t):
    return t.name if hasattr(t, "name") else str(t).lstrip(".")


def _allowed_n(kind, cta_group, ws, sparse):
    """N values of PTX ISA Table 39 ("Various combinations of .kind and shapes")."""
    if ws:
        return (64, 128) if sparse else (64, 128, 256)
    if kind == "i8":
        return tuple(range(32, 257, 32)) if cta_group == 2 else \
            (8, 16, 24) + tuple(range(32, 257, 16))
    return tuple(range(16, 257, 16)) if cta_group == 2 else tuple(range(8, 257, 8))


def _check_mn(fn, m, n, ms, ns):
    if m not in ms:
        _err(fn, "M", m, ", ".join(map(str, ms)))
    if n not in ns:
        step = ns[-1] - ns[-2]
        regular = len(ns) > 4 and ns == tuple(range(ns[0], 257, step))
        _err(fn, "N", n, f"{ns[0]}..256 step {step}" if regular else ", ".join(map(str, ns)))


def _types(fn, kind, atype, btype):
    types = _KIND_TYPES[kind]
    a, b = _name(atype), _name(btype or atype)
    for p, v in (("atype", a), ("btype", b)):
        if v not in types:
            _err(fn, p, v, ", ".join(types))
    return types[a], types[b]


def tcgen05_instr_desc(kind: str, m: int, n: int, dtype, atype, btype=None, *, a_major="K",
                       b_major="K", neg_a=False, neg_b=False, saturate=False, sparse=False,
                       sparse_id2: int = 0, max_shift: int = 0, cta_group: int = 1,
                       ws: bool = False) -> int:
    """The 32-bit instruction descriptor of ``tcgen05.mma`` kind::f16/tf32/f8f6f4/i8 (PTX ISA
    Table 42; shapes from Table 39; ``ws``: for ``tcgen05.mma.ws``, whose ``max_shift`` is
    the B-reuse shift)."""
    fn = "ptx.tcgen05.instr_desc"
    if kind not in ("f16", "tf32", "f8f6f4", "i8"):
        _err(fn, "kind", kind, "f16, tf32, f8f6f4, i8")
    ta, tb = _types(fn, kind, atype, btype)
    d = _name(dtype)
    allowed_d = ("s32",) if kind == "i8" else ("f16", "f32") if kind in ("f16", "f8f6f4") \
        else ("f32",)
    if d not in allowed_d:
        _err(fn, "dtype", d, ", ".join(allowed_d))
    if cta_group not in (1, 2) or (ws and cta_group != 1):
        _err(fn, "cta_group", cta_group, "1" if ws else "1, 2")
    ms = (32, 64, 128) if ws else (64, 128) if cta_group == 1 else (128, 256)
    _check_mn(fn, m, n, ms, _allowed_n(kind, cta_group, ws, sparse))
    for p, v in (("a_major", a_major), ("b_major", b_major)):
        if v not in ("K", "MN"):
            _err(fn, p, v, "K, MN")
    if kind == "i8" and (neg_a or neg_b):
        _err(fn, "neg_a" if neg_a else "neg_b", True, "False for kind i8")
    if saturate and kind != "i8":
        _err(fn, "saturate", saturate, "False unless kind is i8")
    if max_shift not in (0, 8, 16, 32) or (max_shift and not ws):
        _err(fn, "max_shift", max_shift, "0, 8, 16, 32 (non-zero with ws=True only)")
    if sparse_id2 not in (0, 1, 2, 3) or (sparse_id2 and not sparse):
        _err(fn, "sparse_id2", sparse_id2, "0..3 (non-zero with sparse=True only)")
    return encode(TCGEN05_IDESC, sparse_id2=sparse_id2, sparse=int(sparse),
                  saturate=int(saturate), d_type=_D_TYPES[d], a_type=ta, b_type=tb,
                  neg_a=int(neg_a), neg_b=int(neg_b), a_mn=int(a_major == "MN"),
                  b_mn=int(b_major == "MN"), n=n, m=m, max_shift=_SHIFT_CODE[max_shift])


def tcgen05_instr_desc_block_scaled(kind: str, m: int, n: int, atype, btype=None, *,
                                   scale_type="ue8m0", a_sf_id: int = 0, b_sf_id: int = 0,
                                   a_major="K", b_major="K", neg_a=False, neg_b=False,
                                   sparse=False, k96: bool = False, cta_group: int = 1) -> int:
    """The 32-bit instruction descriptor of ``tcgen05.mma ... .block_scale`` (kind::mxf8f6f4:
    PTX ISA Table 43; kind::mxf4, mxf4nvf4: Table 44; D is f32). M is 128 (cta_group 1) or
    128/256 (cta_group 2; sparse: 256) and sits at bits 27-28 as M >> 7; ``k96`` selects the
    dense K=96 shape of mxf4/mxf4nvf4 (M=256, cta_group 2)."""
    fn = "ptx.tcgen05.instr_desc_block_scaled"
    if kind not in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        _err(fn, "kind", kind, "mxf8f6f4, mxf4, mxf4nvf4")
    fp4 = kind != "mxf8f6f4"
    ta, tb = _types(fn, kind, atype, btype)
    st = _name(scale_type)
    allowed = ("ue8m0", "ue4m3") if kind == "mxf4nvf4" else ("ue8m0",)
    if st not in allowed:
        _err(fn, "scale_type", st, ", ".join(allowed))
    ids = (0, 2) if fp4 else (0, 1, 2, 3)
    for p, v in (("a_sf_id", a_sf_id), ("b_sf_id", b_sf_id)):
        if v not in ids:
            _err(fn, p, v, ", ".join(map(str, ids)))
    for p, v in (("a_major", a_major), ("b_major", b_major)):
        if v not in (("K",) if fp4 else ("K", "MN")):
            _err(fn, p, v, "K" if fp4 else "K, MN")
    if cta_group not in (1, 2):
        _err(fn, "cta_group", cta_group, "1, 2")
    ms = (128,) if cta_group == 1 else (256,) if (sparse or k96) else (128, 256)
    _check_mn(fn, m, n, ms, _allowed_n(kind, cta_group, False, sparse))
    if k96 and (not fp4 or sparse or cta_group != 2):
        _err(fn, "k96", k96, "True only for dense mxf4/mxf4nvf4 with cta_group=2, M=256")
    return encode(TCGEN05_IDESC_BLOCK_SCALED, sparse=int(sparse), b_sf_id=b_sf_id, a_type=ta,
                  b_type=tb, neg_a=int(neg_a), neg_b=int(neg_b), a_mn=int(a_major == "MN"),
                  b_mn=int(b_major == "MN"), n=n, ue8m0=int(st == "ue8m0"), m=m,
                  a_sf_id=a_sf_id, k96=int(k96))


# ----------------------------------------------------------------------------- trace time
def desc_from_address(address, high_bits: int, fn: str = "ptx.wgmma.desc_reg"):
    """Emit ``d = ((u64)address & 0x3FFFF) >> 4 | high_bits`` for a u32/u64 shared address
    register (or a shared buffer): 4 instructions (cvt/mov, and, shr, or)."""
    from ...types import b64, u64
    from ..smem import SharedBuffer
    from ..values import Register
    from ._wrap import emit, new

    if isinstance(address, SharedBuffer):
        address = address.ptr()
    if not isinstance(address, Register):
        raise PtxValueError(f"{fn}: address must be a register or a shared buffer, got "
                            f"{address!r}", loc=user_loc())
    wide = new(u64)
    if address.type.bits == 32:
        emit("cvt.u64.u32", (wide, address))
    else:
        emit("mov.b64", (wide, address))
    masked = new(b64)
    emit("and.b64", (masked, wide, 0x3FFFF))
    shifted = new(b64)
    emit("shr.b64", (shifted, masked, 4))
    out = new(b64)
    emit("or.b64", (out, shifted, high_bits))
    return out


def desc_advance(desc, byte_offset: int):
    """A descriptor moved ``byte_offset`` bytes along (e.g. the next K slice):
    ``add.s64 d, desc, byte_offset >> 4`` (one instruction)."""
    from ...types import b64
    from ._wrap import emit, new

    if byte_offset % 16:
        _err("ptx.wgmma.desc_advance", "byte_offset", byte_offset, "a multiple of 16")
    out = new(b64)
    emit("add.s64", (out, desc, byte_offset >> 4))
    return out


__all__ = ["wgmma_desc", "tcgen05_smem_desc", "canonical_strides", "tcgen05_instr_desc",
           "matrix_base_offset",
           "tcgen05_instr_desc_block_scaled", "desc_from_address", "desc_advance",
           "WGMMA_SWIZZLE", "TCGEN05_SWIZZLE"]
