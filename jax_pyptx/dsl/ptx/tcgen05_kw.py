"""The documented keyword forms of ``ptx.tcgen05`` and its descriptor helpers:
``make_instr_desc_f16bf16_f32`` (an int), ``descriptor`` / ``masked_descriptor`` (a b64
register from a shared address), ``ld(dst_regs, taddr, shape=, count=)``,
``st(taddr, src_regs, shape=, count=)``, ``commit(mbar, multicast_mask=, space=)``,
``mma(d, a, b, idesc, scale_d=, pred_operand=, collector_a=, a_is_tmem=, ...)``. The
instruction functions take ``_t``, the ``ptx.tcgen05`` module whose emitters they use
(``ptx.tcgen05.ld`` etc. pass it).

Shared-memory descriptor (PTX ISA "Shared memory descriptor"): bits 0-13 start >> 4, 16-29
LBO >> 4, 32-45 SBO >> 4, 46-48 version (0b001), 49-51 base offset, 52 LBO mode, 61-63
swizzle (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B).
Instruction descriptor for kind::f16 / tf32 with f32 accumulation ("Instruction
descriptor"): bit 2 sparse, 3 saturate, 4-5 D type (1 = f32), 7-9 / 10-12 A / B type
(f16 0, bf16 1, tf32 2), 13 / 14 negate A / B, 15 / 16 A / B MN-major, 17-22 N >> 3,
24-28 M >> 4, 30-31 maximum shift.
"""
from __future__ import annotations

from ...errors import PtxTypeError, PtxValueError
from ...ir.nodes import Addr
from ...isa.descriptors import (
    IDESC_TYPE_CODES, TCGEN05_IDESC, TCGEN05_SMEM, TCGEN05_SWIZZLE_CODES, encode,
)
from ..context import user_loc
from ..values import Register, as_operand
from ._wrap import emit
from .wgmma_kw import as_reg_array, masked_address, predicate

BLACKWELL_MASKED_DESC_B128 = 0x4000404000010000
SWIZZLE_CODES = {name.upper(): code for code, name in TCGEN05_SWIZZLE_CODES.items()}
_AB = {t: c for kind in ("f16", "tf32") for c, t in IDESC_TYPE_CODES[kind].items()}


def _err(fn, name, v, allowed):
    raise PtxValueError(f"{fn}: {name}={v!r} is not allowed; allowed: {allowed}",
                        loc=user_loc(3))


def make_instr_desc_f16bf16_f32(*, m: int = 128, n: int = 256, ab_dtype="bf16", a_major="K",
                                b_major="K", scale_a: int = 1, scale_b: int = 1,
                                saturate: bool = False, sparse: bool = False,
                                max_shift: int = 0) -> int:
    """The 32-bit instruction descriptor of a ``tcgen05.mma`` kind::f16 (or tf32) with f32
    accumulation. Defaults (M=128, N=256, bf16, K-major) give 138413200."""
    fn = "ptx.tcgen05.make_instr_desc_f16bf16_f32"
    if m not in (64, 128, 256):
        _err(fn, "m", m, "64, 128, 256")
    if not isinstance(n, int) or n % 8 or not 8 <= n <= 256:
        _err(fn, "n", n, "a multiple of 8 in 8..256")
    ab = getattr(ab_dtype, "name", str(ab_dtype)).lstrip(".")
    if ab not in _AB:
        _err(fn, "ab_dtype", ab_dtype, "f16, bf16, tf32")
    majors = []
    for name, v in (("a_major", a_major), ("b_major", b_major)):
        v2 = str(v).upper()
        if v2 not in ("K", "MN"):
            _err(fn, name, v, "K, MN")
        majors.append(int(v2 == "MN"))
    for name, v in (("scale_a", scale_a), ("scale_b", scale_b)):
        if v not in (1, -1):
            _err(fn, name, v, "1, -1")
    if max_shift not in (0, 1, 2, 3):
        _err(fn, "max_shift", max_shift, "0..3")
    f = _AB[ab]
    return encode(TCGEN05_IDESC, sparse=int(bool(sparse)), saturate=int(bool(saturate)), d_type=1,
                  a_type=f, b_type=f, neg_a=int(scale_a == -1), neg_b=int(scale_b == -1),
                  a_mn=majors[0], b_mn=majors[1], n=n, m=m, max_shift=max_shift)


def descriptor_bits(*, stride_bytes: int, leading_bytes: int = 16, swizzle="128B",
                    version: int = 1, base_offset: int = 0, lbo_mode: int = 0) -> int:
    """The constant fields of a tcgen05 shared-memory descriptor."""
    fn = "ptx.tcgen05.descriptor"
    sw = str(swizzle).upper()
    if sw not in SWIZZLE_CODES:
        _err(fn, "swizzle", swizzle, ", ".join(SWIZZLE_CODES))
    for name, v in (("stride_bytes", stride_bytes), ("leading_bytes", leading_bytes)):
        if not isinstance(v, int) or v < 0 or v % 16 or v >= 1 << 18:
            _err(fn, name, v, "a multiple of 16 below 2**18")
    if version not in (0, 1, 2, 3):
        _err(fn, "version", version, "0..3")
    if base_offset not in range(8):
        _err(fn, "base_offset", base_offset, "0..7")
    if lbo_mode not in (0, 1):
        _err(fn, "lbo_mode", lbo_mode, "0, 1")
    return encode(TCGEN05_SMEM, lbo=leading_bytes, sbo=stride_bytes, version=version,
                  base_offset=base_offset, lbo_mode=lbo_mode, swizzle=SWIZZLE_CODES[sw])


def descriptor(smem_addr, *, byte_offset=0, stride_bytes: int, leading_bytes: int = 16,
               swizzle="128B", version: int = 1, base_offset: int = 0, lbo_mode: int = 0
               ) -> Register:
    """A u64 register with the shared-memory descriptor of ``smem_addr`` (u32 register,
    shared buffer or symbol) + ``byte_offset``."""
    bits = descriptor_bits(stride_bytes=stride_bytes, leading_bytes=leading_bytes,
                           swizzle=swizzle, version=version, base_offset=base_offset,
                           lbo_mode=lbo_mode)
    return masked_descriptor(smem_addr, byte_offset=byte_offset, const_bits=bits)


def masked_descriptor(smem_addr, *, byte_offset=0, mask: int = 0x3FFF0,
                      const_bits: int = BLACKWELL_MASKED_DESC_B128) -> Register:
    """``cvt.u64.u32 d, ((addr + byte_offset) & mask) >> 4; or.b64 d, d, const_bits;``
    (default: 128B swizzle, LBO 16, SBO 1024, version 1)."""
    d = masked_address("ptx.tcgen05.masked_descriptor", smem_addr, byte_offset, mask)
    emit("or.b64", (d, d, int(const_bits)))
    return d


def _dtype_b32(fn, dtype):
    name = getattr(dtype, "name", str(dtype)).lstrip(".")
    if name != "b32":
        _err(fn, "dtype", dtype, "b32")


def ld(_t, dst_regs, taddr, *, shape="16x128b", count: int = 1, dtype="b32",
       pack: bool = False, pred=None):
    """``tcgen05.ld.sync.aligned.<shape>.x<count>.b32[.pack::16b] {dst}, [taddr];``."""
    fn = "ptx.tcgen05.ld"
    _dtype_b32(fn, dtype)
    out = as_reg_array(fn, "dst_regs", dst_regs)
    n = _t._shape(fn, shape, count)
    if len(out) != n:
        raise PtxValueError(f"{fn}: shape {shape} x{count} loads {n} registers per thread; "
                            f"dst_regs has {len(out)}", loc=user_loc())
    return _t._ld_positional(taddr, shape, count, pack16=pack, out=out, pred=pred)


def st(_t, taddr, src_regs, *, shape="16x128b", count: int = 1, dtype="b32",
       unpack: bool = False, pred=None):
    """``tcgen05.st.sync.aligned.<shape>.x<count>.b32[.unpack::16b] [taddr], {src};``."""
    fn = "ptx.tcgen05.st"
    _dtype_b32(fn, dtype)
    regs = as_reg_array(fn, "src_regs", src_regs)
    n = _t._shape(fn, shape, count)
    if len(regs) != n:
        raise PtxValueError(f"{fn}: shape {shape} x{count} stores {n} registers per thread; "
                            f"src_regs has {len(regs)}", loc=user_loc())
    return _t._st_positional(taddr, regs, shape, unpack16=unpack, pred=pred)


def commit(_t, mbar, *, cta_group: int = 1, multicast: bool = False, multicast_mask=None,
           space="cluster", pred=None):
    """``tcgen05.commit.cta_group::N.mbarrier::arrive::one[.multicast::cluster]
    [.shared::cluster].b64 [mbar][, mask]``, the modifiers in the documented order (ptxas
    takes it). ``multicast_mask`` (a 16-bit register) implies ``multicast``;
    ``multicast=True`` without a mask signals every CTA of the kernel's cluster (a fresh u16
    holding ``(1 << cluster size) - 1``: ptxas needs the mask operand). ``space="cta"``: the
    generic address form (ptxas takes no ``.shared::cta``)."""
    from ...types import u16
    from ..context import current
    from ._wrap import new

    fn = "ptx.tcgen05.commit"
    if space not in ("cta", "cluster"):
        _err(fn, "space", space, "cta, cluster")
    cg = _t._cta(fn, cta_group)
    if multicast and multicast_mask is None:
        size = 1
        for n in current(fn).cluster:
            size *= n
        multicast_mask = new(u16)
        emit("mov.u16", (multicast_mask, (1 << size) - 1))
    if multicast_mask is None:
        sp = ".shared::cluster" if space == "cluster" else ""
        emit(f"tcgen05.commit{cg}.mbarrier::arrive::one{sp}.b64",
             [_t._addr(mbar, fn, "mbar")], pred)
        return
    emit(f"tcgen05.commit{cg}.mbarrier::arrive::one.multicast::cluster.shared::cluster.b64",
         [_t._addr(mbar, fn, "mbar"), multicast_mask], pred)


_COLLECTORS = ("discard", "lastuse", "fill", "use")


def mma(_t, d_tmem, a_desc, b_desc, idesc, *, cta_group: int = 1, kind="f16",
        enable_input_d=None, scale_d=None, sparse: bool = False, ashift: bool = False,
        collector_a=None, a_is_tmem: bool = False, sparse_metadata=None, pred_operand=None,
        scale_c=None, pred=None):
    """``tcgen05.mma{.sp}.cta_group::N.kind::K{.ashift}{.collector::a::C} [d], a, b
    {, [meta]}, idesc, P{, scale_c}``. The accumulate flag P is ``pred_operand``, else
    ``scale_d``, else ``enable_input_d`` (a register, or a truth value; none given: 0,
    D = A*B)."""
    fn = "ptx.tcgen05.mma"
    k = getattr(kind, "name", str(kind)).lstrip(".").replace("kind::", "")
    if k in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        raise PtxValueError(f"{fn}: kind={kind!r} is block-scaled: its tcgen05.mma takes the "
                            f"scale factors' TMEM addresses ([scale-A], [scale-B]), without "
                            f"which ptxas rejects it; use ptx.tcgen05.mma_block_scaled(d, a, b, "
                            f"idesc, scale_a, scale_b, kind={k!r})", loc=user_loc())
    if collector_a is not None and collector_a not in _COLLECTORS:
        _err(fn, "collector_a", collector_a, ", ".join(_COLLECTORS))
    if sparse and sparse_metadata is None:
        raise PtxValueError(f"{fn}: sparse=True needs sparse_metadata (its TMEM address)",
                            loc=user_loc())
    flag = pred_operand if pred_operand is not None else \
        scale_d if scale_d is not None else enable_input_d
    p = predicate(fn, flag if flag is not None else 0)
    a = a_desc
    if a_is_tmem and not isinstance(a, Addr):
        if not isinstance(a, Register):
            raise PtxTypeError(f"{fn}: a_is_tmem=True needs a register holding the TMEM "
                               f"address, got {a_desc!r}", loc=user_loc())
        a = Addr(as_operand(a), 0)
    return _t._mma_positional(d_tmem, a, b_desc, idesc, p, kind=kind, cta_group=cta_group,
                              collector=None if collector_a is None else f"a::{collector_a}",
                              ashift=ashift, scale_input_d=scale_c,
                              sparse_meta=sparse_metadata if sparse else None, pred=pred)


__all__ = ["make_instr_desc_f16bf16_f32", "descriptor", "descriptor_bits", "masked_descriptor",
           "ld", "st", "commit", "mma", "BLACKWELL_MASKED_DESC_B128"]
