"""Canonical GMMA shared-memory layouts for wgmma operands (``pyptx.wgmma_layout``).

Given a tile's element size, its extents and which dimension is contiguous ("major"), pick
the swizzle family and the descriptor's leading/stride byte offsets (LBO/SBO) of the layout
TMA writes and ``wgmma`` reads. The row width ``W`` in bytes (K-major: ``k * elem_bytes``,
MN-major: ``n * elem_bytes``) decides the family: 16 bytes interleaved (no swizzle), 32, 64,
or 128 and more bytes swizzled. Rows wider than 128 bytes are stored as 128-byte column
stripes one after the other (the rank-3 TMA convention), so LBO steps from stripe to stripe.

Pure functions of their arguments: no trace needed.

Examples:
    >>> from jax_pyptx.dsl.wgmma_layout import layout_for_a
    >>> from jax_pyptx.types import bf16
    >>> lay = layout_for_a(dtype=bf16, m=64, k=64)           # 128-byte rows
    >>> lay.layout_type, lay.tma_swizzle, lay.smem_swizzle
    (<LayoutType.B128: 1>, '128B', '128B')
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import PtxValueError


class LayoutType(enum.IntEnum):
    """The swizzle family; the value is the wgmma descriptor's swizzle code (bits 62-63).

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import LayoutType
        >>> LayoutType.B128.value, LayoutType.INTERLEAVE.value
        (1, 0)
    """

    INTERLEAVE = 0
    B128 = 1
    B64 = 2
    B32 = 3


class Major(enum.IntEnum):
    """Which dimension is contiguous in shared memory.

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import Major, pick_gmma_layout
        >>> [m.name for m in Major]
        ['K', 'MN']
        >>> pick_gmma_layout(elem_bytes=2, m_or_n=128, k=64, major=Major.MN).layout_type
        <LayoutType.B128: 1>
    """

    K = 0
    MN = 1


_SWIZZLE = {LayoutType.INTERLEAVE: "NONE", LayoutType.B32: "32B", LayoutType.B64: "64B",
            LayoutType.B128: "128B"}
_FAMILY = {16: LayoutType.INTERLEAVE, 32: LayoutType.B32, 64: LayoutType.B64,
           128: LayoutType.B128}


@dataclass(frozen=True)
class GmmaLayout:
    """A canonical layout: family, LBO/SBO in bytes, and the matching swizzle names for the
    TMA descriptor (``"NONE"``...) and for ``smem.alloc(swizzle=)`` (``None``...).

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import GmmaLayout, pick_gmma_layout
        >>> lay = pick_gmma_layout(elem_bytes=2, m_or_n=64, k=32, major="K")   # 64-byte rows
        >>> isinstance(lay, GmmaLayout), lay.layout_type, lay.leading_byte_offset, lay.stride_byte_offset
        (True, <LayoutType.B64: 2>, 16, 512)
    """

    layout_type: LayoutType
    leading_byte_offset: int
    stride_byte_offset: int
    tma_swizzle: str
    smem_swizzle: str | None

    @property
    def swizzle_code(self) -> int:
        """The wgmma descriptor's swizzle code (bits 62-63) of this layout's family.

        Examples:
            >>> from jax_pyptx.dsl.wgmma_layout import layout_for_b
            >>> from jax_pyptx.types import bf16
            >>> layout_for_b(dtype=bf16, k=64, n=128).swizzle_code
            1
        """
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
    ``ValueError``, for shapes no canonical layout covers).

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import pick_gmma_layout
        >>> pick_gmma_layout(elem_bytes=2, m_or_n=64, k=8, major="K").layout_type      # 16-byte rows
        <LayoutType.INTERLEAVE: 0>
        >>> try:
        ...     pick_gmma_layout(elem_bytes=2, m_or_n=60, k=64, major="K")
        ... except ValueError as e:
        ...     print(type(e).__name__)
        PtxValueError
    """
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
    """The A operand (K-major ``m`` x ``k``).

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import layout_for_a
        >>> from jax_pyptx.types import bf16
        >>> layout_for_a(dtype=bf16, m=64, k=16).layout_type       # 32-byte rows
        <LayoutType.B32: 3>
    """
    return pick_gmma_layout(elem_bytes=_elem_bytes(dtype), m_or_n=m, k=k, major=Major.K)


def layout_for_b(*, dtype, k: int, n: int) -> GmmaLayout:
    """The B operand (MN-major ``k`` x ``n``).

    Examples:
        >>> from jax_pyptx.dsl.wgmma_layout import layout_for_b
        >>> from jax_pyptx.types import bf16
        >>> lay = layout_for_b(dtype=bf16, k=64, n=256)             # 512-byte rows: 128-byte stripes
        >>> lay.layout_type, lay.leading_byte_offset
        (<LayoutType.B128: 1>, 8192)
    """
    return pick_gmma_layout(elem_bytes=_elem_bytes(dtype), m_or_n=n, k=k, major=Major.MN)


__all__ = ["LayoutType", "Major", "GmmaLayout", "pick_gmma_layout", "layout_for_a",
           "layout_for_b"]
