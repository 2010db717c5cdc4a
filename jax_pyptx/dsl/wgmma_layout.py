"""Canonical GMMA shared-memory layouts for wgmma operands (``pyptx.wgmma_layout``).

Given a tile's element size, its extents and which dimension is contiguous ("major"), pick
the swizzle family and the descriptor's leading/stride byte offsets (LBO/SBO) of the layout
TMA writes and ``wgmma`` reads. The row width ``W`` in bytes (K-major: ``k * elem_bytes``,
MN-major: ``n * elem_bytes``) decides the family: 16 bytes interleaved (no swizzle), 32, 64,
or 128 and more bytes swizzled. Rows wider than 128 bytes are stored as 128-byte column
stripes one after the other (the rank-3 TMA convention), so LBO steps from stripe to stripe.

Pure functions of their arguments: no trace needed.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import PtxValueError


class LayoutType(enum.IntEnum):
    """The swizzle family; the value is the wgmma descriptor's swizzle code (bits 62-63)."""

    INTERLEAVE = 0
    B128 = 1
    B64 = 2
    B32 = 3


class Major(enum.IntEnum):
    """Which dimension is contiguous in shared memory."""

    K = 0
    MN = 1


_SWIZZLE = {LayoutType.INTERLEAVE: "NONE", LayoutType.B32: "32B", LayoutType.B64: "64B",
            LayoutType.B128: "128B"}
_FAMILY = {16: LayoutType.INTERLEAVE, 32: LayoutType.B32, 64: LayoutType.B64,
           128: LayoutType.B128}


@dataclass(frozen=True)
class GmmaLayout:
    """A canonical layout: family, LBO/SBO in bytes, and the matching swizzle names for the
    TMA descriptor (``"NONE"``...) and for ``smem.alloc(swizzle=)`` (``None``...)."""

    layout_type: LayoutType
    leading_byte_offset: int
    stride_byte_offset: int
    tma_swizzle: str
    smem_swizzle: str | None

    @property
    def swizzle_code(self) -> int:
        return int(self.layout_type)


def _make(t: LayoutType, lbo: int, sbo: int) -> GmmaLayout:
    sw = _SWIZZLE[t]
    return GmmaLayout(t, lbo, sbo, sw, None if t is LayoutType.INTERLEAVE else sw)


def _major(major) -> Major:
    if isinstance(major, Major):
        return major
    if isinstance(major, str):
        m = major.upper()
        if m in ("K", "MN"):
            return Major[m]
    elif isinstance(major, int) and not isinstance(major, bool) and major in (0, 1):
        return Major(major)
    raise PtxValueError(f"major={major!r} is not allowed; allowed: 'K', 'MN' (or Major.K, "
                        f"Major.MN)")


def pick_gmma_layout(*, elem_bytes: int, m_or_n: int, k: int, major) -> GmmaLayout:
    """The canonical layout of an ``m_or_n`` x ``k`` operand tile (``PtxValueError``, a
    ``ValueError``, for shapes no canonical layout covers)."""
    major = _major(major)
    for name, v in (("elem_bytes", elem_bytes), ("m_or_n", m_or_n), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise PtxValueError(f"pick_gmma_layout: {name}={v!r} must be a positive int")
    if major is Major.K:
        w = k * elem_bytes
        if w <= 128 and w not in _FAMILY:
            raise PtxValueError(
                f"pick_gmma_layout: a K-major row of {k} x {elem_bytes}-byte elements is {w} "
                f"bytes, which is not one of the canonical GMMA widths {{16, 32, 64, 128}} "
                f"(or a multiple of 128)")
        if m_or_n % 8:
            raise PtxValueError(f"pick_gmma_layout: m={m_or_n} must be a multiple of 8 (rows "
                                f"of a core matrix)")
        if w > 128:
            if w % 128:
                raise PtxValueError(f"pick_gmma_layout: a K-major row of {w} bytes wider than "
                                    f"128 must be a multiple of 128")
            return _make(LayoutType.B128, m_or_n * 128, 1024)
        return _make(_FAMILY[w], 16, 8 * w)
    w = m_or_n * elem_bytes
    if k % 8:
        raise PtxValueError(f"pick_gmma_layout: k={k} must be a multiple of 8 for an MN-major "
                            f"operand")
    if w < 16 or (w <= 128 and w not in _FAMILY) or (w > 128 and w % 128):
        raise PtxValueError(
            f"pick_gmma_layout: an MN-major row of {m_or_n} x {elem_bytes}-byte elements is "
            f"{w} bytes, which is not one of the canonical GMMA widths {{16, 32, 64, 128}} "
            f"(or a multiple of 128)")
    if w == 16:
        return _make(LayoutType.INTERLEAVE, 8 * w, 16)
    if w > 128:
        return _make(LayoutType.B128, k * 128, 1024)
    return _make(_FAMILY[w], 16, 8 * w)


def _elem_bytes(dtype) -> int:
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype
    bits = getattr(dtype, "bits", None)
    if bits is None:
        raise PtxValueError(f"dtype={dtype!r} must be a PTX type (bf16, f16, ...) or a byte "
                            f"size")
    return max(bits // 8, 1)


def layout_for_a(*, dtype, m: int, k: int) -> GmmaLayout:
    """The A operand (K-major ``m`` x ``k``)."""
    return pick_gmma_layout(elem_bytes=_elem_bytes(dtype), m_or_n=m, k=k, major=Major.K)


def layout_for_b(*, dtype, k: int, n: int) -> GmmaLayout:
    """The B operand (MN-major ``k`` x ``n``)."""
    return pick_gmma_layout(elem_bytes=_elem_bytes(dtype), m_or_n=n, k=k, major=Major.MN)


__all__ = ["LayoutType", "Major", "GmmaLayout", "pick_gmma_layout", "layout_for_a",
           "layout_for_b"]
