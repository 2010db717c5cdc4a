"""Fragment maps: which thread, register and packed element hold each element of a matrix
operand of a warp- or warpgroup-level matrix instruction.

The layouts come from :mod:`jax_pyptx.isa.fragments` (the one copy, also read by the DSL and
the interpreter); this module only arranges them as tables a figure, a test or a user can read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa import fragments as F
from ..types import by_name

__all__ = ["FragmentMap", "fragment_map", "mma_map", "ldmatrix_map", "wgmma_map"]


@dataclass(frozen=True)
class FragmentMap:
    """Who holds each element of a ``rows x cols`` operand.

    ``thread[r, c]``: the thread (lane for warp-level ops, 0..127 for warpgroup ops; -1: none);
    ``reg[r, c]``: which of that thread's fragment registers; ``part[r, c]``: which packed
    element of the register (0 for 32-bit elements, 0/1 for 16-bit halves, low first).
    """

    title: str
    thread: np.ndarray
    reg: np.ndarray
    part: np.ndarray

    @property
    def shape(self) -> tuple:
        return self.thread.shape

    def holder(self, row: int, col: int) -> tuple:
        """``(thread, register, part)`` of element ``(row, col)``."""
        return int(self.thread[row, col]), int(self.reg[row, col]), int(self.part[row, col])

    def elements_of(self, thread: int) -> list:
        """``[(register, part, row, col), ...]`` that ``thread`` holds, in register order."""
        rr, cc = np.nonzero(self.thread == thread)
        out = [(int(self.reg[r, c]), int(self.part[r, c]), int(r), int(c)) for r, c in zip(rr, cc)]
        return sorted(out)


def _empty(rows, cols):
    return (np.full((rows, cols), -1, np.int64), np.full((rows, cols), -1, np.int64),
            np.full((rows, cols), -1, np.int64))


def _bits(dtype) -> int:
    return by_name(dtype.lstrip(".")).bits if isinstance(dtype, str) else dtype.bits


def mma_map(shape: str, operand: str, dtype="f16") -> FragmentMap:
    """``mma.sync.aligned.<shape>`` operand ``"a"`` (M x K), ``"b"`` (K x N) or ``"c"``/``"d"``
    (M x N) with ``dtype`` elements, e.g. ``mma_map("m16n8k16", "a", "bf16")``.

    >>> mma_map("m16n8k16", "a", "bf16").holder(0, 0)       # lane 0, register 0, low half
    (0, 0, 0)
    """
    M, N, K = F.mnk(shape)
    bits = _bits(dtype)
    which = "c" if operand == "d" else operand
    layout = F.mma_fragment(shape, which, bits if which != "c" else 32)
    rows, cols = {"a": (M, K), "b": (K, N), "c": (M, N)}[which]
    per = 1 if which == "c" or bits >= 32 else 32 // bits
    thread, reg, part = _empty(rows, cols)
    for lane, elems in enumerate(layout):
        for i, (r, c) in enumerate(elems):
            thread[r, c], reg[r, c], part[r, c] = lane, i // per, i % per
    return FragmentMap(f"mma.sync {shape} {operand.upper()} ({dtype})", thread, reg, part)


def ldmatrix_map(num: int = 4, trans: bool = False) -> FragmentMap:
    """``ldmatrix.sync.aligned.m8n8.x<num>[.trans].b16``: ``num`` 8x8 b16 matrices side by side
    (matrix i in columns 8i..8i+7); register i of each lane holds two elements of matrix i.
    With ``.trans`` each matrix is read transposed (the lane holds (col, row))."""
    if num not in (1, 2, 4):
        raise ValueError(f"ldmatrix .x{num}: allowed .x1, .x2, .x4")
    thread, reg, part = _empty(8, 8 * num)
    for lane, elems in enumerate(F.ldmatrix_fragment()):
        for m in range(num):
            for h, (r, c) in enumerate(elems):
                if trans:
                    r, c = c, r
                thread[r, 8 * m + c], reg[r, 8 * m + c], part[r, 8 * m + c] = lane, m, h
    t = ".trans" if trans else ""
    return FragmentMap(f"ldmatrix m8n8.x{num}{t}.b16", thread, reg, part)


def wgmma_map(n: int, operand: str = "d", dtype="f32") -> FragmentMap:
    """``wgmma.mma_async .m64n<n>`` register fragments over the 128 threads of a warpgroup:
    ``"d"`` the 64 x n accumulator (``dtype`` f32/f16/s32), ``"a"`` the 64 x K A operand from
    registers (K = 256 / element bits: 16 for f16/bf16, 8 for tf32, 32 for 8-bit types), laid
    out per warp like ``mma.sync`` m16n8kK's A over rows 16w..16w+15."""
    bits = _bits(dtype)
    if operand == "d":
        thread, reg, part = _empty(64, n)
        per = 2 if bits == 16 else 1
        for t in range(128):
            for i, (r, c) in enumerate(F.wgmma_accumulator(n, t)):
                thread[r, c], reg[r, c], part[r, c] = t, i // per, i % per
        return FragmentMap(f"wgmma m64n{n} D ({dtype})", thread, reg, part)
    if operand != "a":
        raise ValueError(f"wgmma operand {operand!r}: registers hold 'a' or 'd'")
    K = 256 // bits
    warp = mma_map(f"m16n8k{K}", "a", dtype)
    thread, reg, part = _empty(64, K)
    for w in range(4):
        sl = slice(16 * w, 16 * w + 16)
        thread[sl], reg[sl], part[sl] = warp.thread + 32 * w, warp.reg, warp.part
    return FragmentMap(f"wgmma m64n{n}k{K} A ({dtype})", thread, reg, part)


def fragment_map(op: str, *args, **kw) -> FragmentMap:
    """Dispatch by instruction: ``fragment_map("mma", "m16n8k16", "a", "bf16")``,
    ``fragment_map("ldmatrix", 4)``, ``fragment_map("wgmma", 64, "d")``."""
    table = {"mma": mma_map, "ldmatrix": ldmatrix_map, "wgmma": wgmma_map}
    try:
        fn = table[op]
    except KeyError:
        raise ValueError(f"fragment_map: op {op!r} is not one of {', '.join(table)}") from None
    return fn(*args, **kw)
