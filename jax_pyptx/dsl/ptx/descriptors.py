"""Matrix descriptors, as pure-Python integers and as trace-time register arithmetic.

wgmma (sm_90a) shared-memory matrix descriptor, 64 bits (PTX ISA "Matrix Descriptor Format"):

==========  ====================================================================
bits 0-13   start address, ``(addr & 0x3FFFF) >> 4``
bits 16-29  leading-dimension byte offset (LBO) ``>> 4``
bits 32-45  stride-dimension byte offset (SBO) ``>> 4``
bits 49-51  matrix base offset (non-zero only when the start is not 1024/512/256-aligned)
bits 62-63  swizzle: 0 none (interleave), 1 128B, 2 64B, 3 32B
==========  ====================================================================

tcgen05 (sm_100a) shared-memory descriptor: the same address/LBO/SBO fields, bits 46-48 the
fixed value 0b001, bits 49-51 base offset, bit 52 LBO mode (0 relative, 1 absolute), bits 61-63
swizzle: 0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B.

tcgen05 instruction descriptor (32 bits, kind::f16/tf32/f8f6f4/i8): bits 0-1 sparsity selector,
2 sparsity, 3 saturate, 4-5 D type (f16 0, f32 1, s32 2), 7-9 A type, 10-12 B type, 13/14 negate
A/B, 15/16 transpose (MN-major) A/B, 17-22 N >> 3, 24-28 M >> 4, 30-31 max shift (.ws).
Block-scaled kinds: bits 4-5 B scale-factor id, 23 scale type (ue4m3 0, ue8m0 1), 29-30 A
scale-factor id.
"""
from __future__ import annotations

from ...errors import PtxValueError
from ..context import user_loc

WGMMA_SWIZZLE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
TCGEN05_SWIZZLE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}


def _err(fn, param, value, allowed):
    raise PtxValueError(f"{fn}: {param}={value!r} is not allowed; allowed: {allowed}",
                        loc=user_loc())


def _field(fn, param, value):
    if not isinstance(value, int) or value < 0 or value >= 1 << 18 or value % 16:
        _err(fn, param, value, "a multiple of 16 below 2**18 (bytes)")
    return value >> 4


def _swz(fn, swizzle, table):
    if swizzle not in table:
        _err(fn, "swizzle", swizzle, ", ".join(table))
    return table[swizzle]


def wgmma_desc(start: int, lbo: int, sbo: int, swizzle: str = "128B", base_offset: int = 0) -> int:
    """The 64-bit wgmma matrix descriptor for a shared-memory address ``start`` (bytes)."""
    fn = "ptx.wgmma.desc"
    if not 0 <= base_offset < 8:
        _err(fn, "base_offset", base_offset, "0..7")
    return (_field(fn, "start", start) | _field(fn, "lbo", lbo) << 16 |
            _field(fn, "sbo", sbo) << 32 | base_offset << 49 |
            _swz(fn, swizzle, WGMMA_SWIZZLE) << 62)


def tcgen05_smem_desc(start: int, lbo: int, sbo: int, swizzle: str = "128B",
                      base_offset: int = 0, lbo_absolute: bool = False) -> int:
    """The 64-bit tcgen05 shared-memory matrix descriptor."""
    fn = "ptx.tcgen05.smem_desc"
    if not 0 <= base_offset < 8:
        _err(fn, "base_offset", base_offset, "0..7")
    return (_field(fn, "start", start) | _field(fn, "lbo", lbo) << 16 |
            _field(fn, "sbo", sbo) << 32 | 1 << 46 | base_offset << 49 |
            int(bool(lbo_absolute)) << 52 | _swz(fn, swizzle, TCGEN05_SWIZZLE) << 61)


def canonical_strides(major: str, swizzle: str, mn: int, k: int, elem_bits: int) -> tuple:
    """(LBO, SBO) in bytes for an ``mn`` x ``k`` operand stored in the canonical layout.

    K-major, swizzled: swizzle atoms of 8 rows x S bytes (S = 32/64/128) stacked along MN
    (SBO = 8*S), successive K atoms ``mn*S`` bytes apart (LBO; the hardware ignores it for
    swizzled K-major). K-major, none: 8x16-byte core matrices, K-adjacent ones 128 bytes apart
    (LBO), MN-adjacent 8-row groups ``(k*elem_bits/8/16)*128`` apart (SBO). MN-major, swizzled:
    atoms of S bytes along MN x 8 K-rows; the next atom along MN at LBO = 8*S, the next 8
    K-rows at SBO = ``mn*elem_bits`` bytes. MN-major, none: core matrices 16 bytes of MN x 8
    K-rows; LBO = ``(mn*elem_bits/8/16)*128`` between K groups, SBO = 128 between MN groups.
    """
    fn = "ptx.wgmma.canonical_strides"
    if major not in ("K", "MN"):
        _err(fn, "major", major, "K, MN")
    if swizzle not in SWIZZLE_BYTES:
        _err(fn, "swizzle", swizzle, ", ".join(SWIZZLE_BYTES))
    s = SWIZZLE_BYTES[swizzle]
    k_bytes, mn_bytes = k * elem_bits // 8, mn * elem_bits // 8
    if major == "K":
        if swizzle == "none":
            return 128, (k_bytes // 16) * 128
        return mn * s, 8 * s
    if swizzle == "none":
        return (mn_bytes // 16) * 128, 128
    return 8 * s, mn_bytes * 8


# ----------------------------------------------------------------------------- tcgen05 idesc
_KIND_TYPES = {
    "f16": {"f16": 0, "bf16": 1}, "tf32": {"tf32": 2},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf4": {"e2m1": 1}, "mxf4nvf4": {"e2m1": 1},
}
_D_TYPES = {"f16": 0, "f32": 1, "s32": 2}


def _name(t):
    return t.name if hasattr(t, "name") else str(t).lstrip(".")


def _mn(fn, kind, m, n, cta_group):
    ms = (64, 128) if cta_group == 1 else (128, 256)
    if m not in ms:
        _err(fn, "M", m, ", ".join(map(str, ms)))
    step = 8 if (cta_group == 1 and m == 64) else 16
    if not isinstance(n, int) or not step <= n <= 256 or n % step:
        _err(fn, "N", n, f"{step}..256 step {step}")


def tcgen05_instr_desc(kind: str, m: int, n: int, dtype, atype, btype=None, *, a_major="K",
                       b_major="K", neg_a=False, neg_b=False, saturate=False, sparse=False,
                       sparse_id2: int = 0, max_shift: int = 0, cta_group: int = 1) -> int:
    """The 32-bit instruction descriptor of ``tcgen05.mma`` kind::f16/tf32/f8f6f4/i8."""
    fn = "ptx.tcgen05.instr_desc"
    if kind not in ("f16", "tf32", "f8f6f4", "i8"):
        _err(fn, "kind", kind, "f16, tf32, f8f6f4, i8")
    types = _KIND_TYPES[kind]
    a, b = _name(atype), _name(btype or atype)
    for p, v in (("atype", a), ("btype", b)):
        if v not in types:
            _err(fn, p, v, ", ".join(types))
    d = _name(dtype)
    allowed_d = ("s32",) if kind == "i8" else ("f16", "f32") if kind in ("f16", "f8f6f4") \
        else ("f32",)
    if d not in allowed_d:
        _err(fn, "dtype", d, ", ".join(allowed_d))
    _mn(fn, kind, m, n, cta_group)
    for p, v in (("a_major", a_major), ("b_major", b_major)):
        if v not in ("K", "MN"):
            _err(fn, p, v, "K, MN")
    if max_shift not in (0, 8, 16, 32):
        _err(fn, "max_shift", max_shift, "0, 8, 16, 32")
    return (sparse_id2 & 3 | int(sparse) << 2 | int(saturate) << 3 | _D_TYPES[d] << 4 |
            types[a] << 7 | types[b] << 10 | int(neg_a) << 13 | int(neg_b) << 14 |
            int(a_major == "MN") << 15 | int(b_major == "MN") << 16 | (n >> 3) << 17 |
            (m >> 4) << 24 | {0: 0, 8: 1, 16: 2, 32: 3}[max_shift] << 30)


def tcgen05_instr_desc_block_scaled(kind: str, m: int, n: int, atype, btype=None, *,
                                   scale_type="ue8m0", a_sf_id: int = 0, b_sf_id: int = 0,
                                   a_major="K", b_major="K", neg_a=False, neg_b=False,
                                   sparse=False, sparse_id2: int = 0, cta_group: int = 1) -> int:
    """The 32-bit instruction descriptor of ``tcgen05.mma ... .block_scale``
    (kind::mxf8f6f4, mxf4, mxf4nvf4; D is f32)."""
    fn = "ptx.tcgen05.instr_desc_block_scaled"
    if kind not in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        _err(fn, "kind", kind, "mxf8f6f4, mxf4, mxf4nvf4")
    types = _KIND_TYPES[kind]
    a, b = _name(atype), _name(btype or atype)
    for p, v in (("atype", a), ("btype", b)):
        if v not in types:
            _err(fn, p, v, ", ".join(types))
    st = _name(scale_type)
    allowed = ("ue8m0", "ue4m3") if kind == "mxf4nvf4" else ("ue8m0",)
    if st not in allowed:
        _err(fn, "scale_type", st, ", ".join(allowed))
    for p, v in (("a_sf_id", a_sf_id), ("b_sf_id", b_sf_id)):
        if v not in (0, 1, 2, 3):
            _err(fn, p, v, "0..3")
    _mn(fn, kind, m, n, cta_group)
    return (sparse_id2 & 3 | int(sparse) << 2 | b_sf_id << 4 | types[a] << 7 |
            types[b] << 10 | int(neg_a) << 13 | int(neg_b) << 14 | int(a_major == "MN") << 15 |
            int(b_major == "MN") << 16 | (n >> 3) << 17 | int(st == "ue8m0") << 23 |
            (m >> 4) << 24 | a_sf_id << 29)


# ----------------------------------------------------------------------------- trace time
def desc_from_address(address, high_bits: int, fn: str = "ptx.wgmma.desc_reg"):
    """Emit ``d = ((u64)address & 0x3FFFF) >> 4 | high_bits`` for a u32/u64 shared address
    register (or a shared buffer): 4 instructions (cvt/mov, and, shr, or)."""
    from ...types import b64, u32, u64
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
           "tcgen05_instr_desc_block_scaled", "desc_from_address", "desc_advance",
           "WGMMA_SWIZZLE", "TCGEN05_SWIZZLE"]
