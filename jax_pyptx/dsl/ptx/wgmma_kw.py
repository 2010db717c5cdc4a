"""The documented keyword forms of ``ptx.wgmma``: ``mma_async(shape=, dtype_d=, dtype_a=,
dtype_b=, d=, a=, b=, ...)``, and descriptor builders from a shared address
(``make_descriptor``, ``auto_descriptor``, ``masked_descriptor``).

Descriptor fields (PTX ISA "Matrix Descriptor Format"): bits 0-13 the start address >> 4,
16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset, 62-63 swizzle (0 none, 1 128B, 2 64B,
3 32B). The constant fields are folded into one ``or``.
"""
from __future__ import annotations

import re

from ...errors import PtxTypeError, PtxValueError
from ...ir.nodes import Sym
from ...isa.descriptors import WGMMA_SMEM, address_field, encode
from ...types import b64, pred as pred_t, u32, u64
from ..context import user_loc
from ..values import Register, RegArray, str_operand
from ._wrap import emit, new

SWIZZLE_NONE, SWIZZLE_128B, SWIZZLE_64B, SWIZZLE_32B = 0, 1, 2, 3
MASKED_DESC_B128 = 0x4000004000010000


def _check_int(fn, name, v, lo, hi):
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise PtxValueError(f"{fn}: {name}={v!r} is not allowed; allowed: {lo}..{hi}",
                            loc=user_loc(3))
    return v


def _symbol(fn, x):
    """A shared symbol (with offset) for a buffer, a view of one or a symbol name."""
    if hasattr(x, "__ptx_operand__"):
        op = x.__ptx_operand__()
    elif isinstance(x, str):
        op = str_operand(x)
    else:
        op = x
    if type(op) is not Sym:
        raise PtxTypeError(f"{fn}: expected a register holding a shared address, a shared "
                           f"buffer or a symbol name, got {x!r}", loc=user_loc(3))
    return op


def _address64(fn, base) -> Register:
    if isinstance(base, Register):
        if base.type.bits == 64:
            return base
        if base.type.bits != 32 or base.type.kind == "float":
            raise PtxTypeError(f"{fn}: smem_base register {base.name} is {base.type.name}; "
                               f"expected a 32- or 64-bit integer address", loc=user_loc(3))
        a = new(u64)
        emit("cvt.u64.u32", (a, base))
        return a
    a = new(u64)
    emit("mov.u64", (a, _symbol(fn, base)))
    return a


def descriptor_bits(leading_byte_offset: int, stride_byte_offset: int, swizzle: int = 0,
                    base_offset: int = 0) -> int:
    """The constant (non-address) fields of a wgmma descriptor."""
    return encode(WGMMA_SMEM, lbo=address_field(leading_byte_offset),
                  sbo=address_field(stride_byte_offset), base_offset=base_offset & 7,
                  swizzle=swizzle & 3)


def make_descriptor(smem_base, *, leading_byte_offset: int, stride_byte_offset: int,
                    swizzle: int = 0, base_offset: int = 0, addr_byte_offset: int = 0
                    ) -> Register:
    """A u64 register with the wgmma descriptor of ``smem_base`` (a u32/u64 register, a
    shared buffer or a symbol) plus ``addr_byte_offset`` bytes: ``shr.u64 d, a, 4;
    and.b64 d, d, 16383; or.b64 d, d, CONST;``."""
    fn = "ptx.wgmma.make_descriptor"
    _check_int(fn, "swizzle", swizzle, 0, 3)
    _check_int(fn, "base_offset", base_offset, 0, 7)
    for name, v in (("leading_byte_offset", leading_byte_offset),
                    ("stride_byte_offset", stride_byte_offset)):
        _check_int(fn, name, v, 0, (1 << 18) - 1)
    a = _address64(fn, smem_base)
    if addr_byte_offset:
        a2 = new(u64)
        emit("add.s64", (a2, a, int(addr_byte_offset)))
        a = a2
    d = new(b64)
    emit("shr.u64", (d, a, 4))
    emit("and.b64", (d, d, 0x3FFF))
    emit("or.b64", (d, d, descriptor_bits(leading_byte_offset, stride_byte_offset, swizzle,
                                          base_offset)))
    return d


def _elem_bytes(dtype) -> int:
    bits = getattr(dtype, "bits", None)
    if bits is None:
        from ...types import by_name

        bits = by_name(str(dtype)).bits
    return max(bits // 8, 1)


def auto_descriptor(smem_base, *, dtype, shape, major) -> Register:
    """The descriptor of a tile in its canonical GMMA layout: ``major="K"`` with
    ``shape=(m, k)``, anything else MN-major with ``shape=(k, n)`` (``pyptx.wgmma_layout``)."""
    from ..wgmma_layout import Major, pick_gmma_layout

    if isinstance(major, str):
        mj = Major.K if major.upper() == "K" else Major.MN
    else:
        mj = Major(int(major))
    r, c = tuple(shape)[-2:]
    try:
        lay = pick_gmma_layout(elem_bytes=_elem_bytes(dtype), m_or_n=r if mj is Major.K else c,
                               k=c if mj is Major.K else r, major=mj)
    except PtxValueError as e:
        raise PtxValueError(f"ptx.wgmma.auto_descriptor: {e.message}", loc=user_loc()) from None
    return make_descriptor(smem_base, leading_byte_offset=lay.leading_byte_offset,
                           stride_byte_offset=lay.stride_byte_offset,
                           swizzle=lay.swizzle_code)


def masked_address(fn, smem_addr, byte_offset: int, mask: int) -> Register:
    """``((base + byte_offset) & mask) >> 4`` in a fresh u64 (the start-address field)."""
    if isinstance(smem_addr, Register):
        base = smem_addr
        if base.type.bits != 32:
            raise PtxTypeError(f"{fn}: smem_addr register {base.name} is {base.type.name}; "
                               f"expected a 32-bit shared address", loc=user_loc(3))
    else:
        base = new(u32)
        emit("mov.u32", (base, _symbol(fn, smem_addr)))
    if byte_offset:
        t = new(u32)
        emit("add.u32", (t, base, byte_offset))
        base = t
    m = new(u32)
    emit("and.b32", (m, base, mask))
    emit("shr.u32", (m, m, 4))
    d = new(u64)
    emit("cvt.u64.u32", (d, m))
    return d


def masked_descriptor(smem_addr, *, byte_offset=0, mask: int = 0x3FF80,
                      const_bits: int = MASKED_DESC_B128) -> Register:
    """``cvt.u64.u32 d, ((addr + byte_offset) & mask) >> 4; or.b64 d, d, const_bits;``: a
    descriptor whose constant fields are given whole (default: 128B swizzle, LBO 16,
    SBO 1024)."""
    fn = "ptx.wgmma.masked_descriptor"
    d = masked_address(fn, smem_addr, byte_offset, mask)
    emit("or.b64", (d, d, int(const_bits)))
    return d


_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def parse_shape(fn, shape) -> tuple:
    if isinstance(shape, str):
        m = _SHAPE.match(shape.lstrip("."))
        if m:
            return tuple(int(g) for g in m.groups())
    elif isinstance(shape, (tuple, list)) and len(shape) == 3 and \
            all(isinstance(v, int) for v in shape):
        return tuple(shape)
    raise PtxValueError(f"{fn}: shape={shape!r} is not allowed; expected 'm64nNkK' or "
                        f"(64, N, K)", loc=user_loc(3))


def as_reg_array(fn, name, x):
    if isinstance(x, RegArray):
        return x
    if isinstance(x, (list, tuple)) and x and all(isinstance(r, Register) for r in x):
        return RegArray(list(x), x[0].type)
    raise PtxTypeError(f"{fn}: {name} must be a RegArray or a list of registers, got {x!r}",
                       loc=user_loc(3))


def _operand_desc(fn, x, offset):
    """A wgmma operand: a descriptor register as is; a ``smem.wgmma_tile`` buffer (or view)
    gets its descriptor built here."""
    lay = getattr(x, "gmma_layout", None)
    if lay is not None:
        return make_descriptor(x, leading_byte_offset=lay.leading_byte_offset,
                               stride_byte_offset=lay.stride_byte_offset,
                               swizzle=lay.swizzle_code, addr_byte_offset=offset)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], Register):
        return RegArray(list(x), x[0].type)
    return x


def predicate(fn, v) -> object:
    """A predicate operand from a register (non-pred: ``setp.ne.b32 p, r, 0;``) or a Python
    truth value (an immediate 1/0)."""
    if isinstance(v, Register):
        if v.type.kind == "pred":
            return v
        p = new(pred_t)
        emit(f"setp.ne.b{v.type.bits if v.type.bits in (16, 32, 64) else 32}", (p, v, 0))
        return p
    if isinstance(v, (bool, int)):
        return 1 if v else 0
    raise PtxTypeError(f"{fn}: expected a register or a bool, got {v!r}", loc=user_loc(3))


def mma_async(_mma, k_of, *, shape, dtype_d, dtype_a, dtype_b, d, a, b, scale_d=False,
              scale_a: int = 1, scale_b: int = 1, trans_a: int = 0, trans_b: int = 0,
              a_k_offset: int = 0, b_k_offset: int = 0, pred=None):
    """``wgmma.mma_async.sync.aligned.mMnNkK.<d>.<a>.<b> {d}, a, b, scale_d, scale_a,
    scale_b, trans_a, trans_b`` (the documented keyword form; ``ptx.wgmma.mma_async`` passes
    its emitter ``_mma`` and K table). ``a``/``b``: descriptor registers, or
    ``smem.wgmma_tile`` buffers whose descriptors are built here (offset by
    ``a_k_offset``/``b_k_offset`` bytes); ``a`` may also be 4 b32 registers. ``scale_d``: a
    predicate register, or a bool (False: D = A*B, True: D += A*B)."""
    fn = "ptx.wgmma.mma_async"
    m, n, k = parse_shape(fn, shape)
    if m != 64:
        raise PtxValueError(f"{fn}: shape={shape!r}: wgmma's M is 64", loc=user_loc())
    at = getattr(dtype_a, "name", str(dtype_a)).lstrip(".")
    want = k_of.get(at)
    if want is not None and k != want:
        raise PtxValueError(f"{fn}: shape={shape!r}: K for {at} is {want}, got {k}",
                            loc=user_loc())
    acc = as_reg_array(fn, "d", d)
    ad = _operand_desc(fn, a, a_k_offset)
    bd = _operand_desc(fn, b, b_k_offset)
    sd = predicate(fn, scale_d)
    return _mma(fn, "wgmma.mma_async", acc, ad, bd, (), n, dtype_d, dtype_a, dtype_b, sd,
                scale_a, scale_b, trans_a, trans_b, False, pred)


__all__ = ["make_descriptor", "auto_descriptor", "masked_descriptor", "mma_async",
           "descriptor_bits", "SWIZZLE_NONE", "SWIZZLE_128B", "SWIZZLE_64B", "SWIZZLE_32B",
           "MASKED_DESC_B128"]
