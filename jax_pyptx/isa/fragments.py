"""Fragment layouts of the warp- and warpgroup-level matrix instructions (PTX ISA "Matrix
fragments for mma.m16n8k*", "ldmatrix", "Register fragments and shared memory matrix layouts"
of wgmma): which (row, col) of a matrix each element a thread holds is.

The one copy of these facts: the DSL's ``ptx.mma.fragment_*`` / ``ptx.wgmma.accumulator`` and
the interpreter's mma.sync / ldmatrix / stmatrix / movmatrix read them. Pure Python (no NumPy);
every layout is a tuple, per lane, of (row, col) per element, memoised.

Lane terms: ``groupID = lane >> 2``, ``threadID_in_group = lane % 4``.
"""
from __future__ import annotations

from functools import lru_cache

WARP = 32


def mnk(shape: str) -> tuple:
    """``"m16n8k16"`` (or ``".m16n8k16"``) -> (16, 8, 16)."""
    s = shape.lstrip(".")
    if not s.startswith("m") or "n" not in s or "k" not in s:
        raise ValueError(f"shape {shape!r} is not of the form mMnNkK")
    m, rest = s[1:].split("n", 1)
    n, k = rest.split("k", 1)
    return int(m), int(n), int(k)


def _per_reg(elem_bits: int) -> int:
    """Elements packed in one 32-bit register (a 64-bit element fills two: 1 here)."""
    return max(1, 32 // elem_bits)


def _mma_element(which: str, M: int, K: int, elem_bits: int, g: int, t: int, i: int) -> tuple:
    per = _per_reg(elem_bits)
    r, j = divmod(i, per)
    if which == "c":
        if M == 16:                                  # c0,c1: row g; c2,c3: row g + 8
            return g + 8 * (i >= 2), 2 * t + (i & 1)
        return g, 2 * t + i                          # m8n8: two elements, row g
    if which == "a":
        if M == 16:                                  # register r: rows g + 8*(r&1), K/2 halves
            return g + 8 * (r & 1), t * per + j + (K // 2) * (r >> 1)
        return g, t * per + i
    if M == 16:                                      # b (K x N, "col"): n = groupID
        return t * per + j + (K // 2) * r, g
    return t * per + i, g


def mma_count(shape: str, which: str) -> int:
    """Elements per lane of operand ``which`` ("a", "b", "c"/"d") of ``mma.sync`` ``shape``."""
    M, N, K = mnk(shape)
    if which in ("c", "d"):
        return M * N // WARP
    return (M if which == "a" else N) * K // WARP


@lru_cache(maxsize=None)
def mma_fragment(shape: str, which: str, elem_bits: int = 16) -> tuple:
    """Layout of operand ``which`` ("a": M x K row-major, "b": K x N, "c"/"d": M x N) of
    ``mma.sync.aligned.<shape>`` with ``elem_bits``-bit elements: per lane, a tuple of (row, col)
    of each element (element i of register r = i // (32 / elem_bits)).

    Shapes: m16n8kK (K = 4 .. 256) and m8n8kK (m8n8k4 .f64, m8n8k16 8-bit, ...)."""
    M, N, K = mnk(shape)
    if (M, N) not in ((16, 8), (8, 8)):
        raise ValueError(f"mma shape {shape!r} has no fragment layout here; allowed: m16n8kK, m8n8kK")
    w = "c" if which == "d" else which
    if w not in ("a", "b", "c"):
        raise ValueError(f"fragment {which!r}: allowed: a, b, c, d")
    # the rows and K halves above hold while A fits four registers (m16n8) or one (m8n8);
    # wider shapes (m16n8k8/k16 .f64, the Volta m8n8k4 .f16) lay their fragments out otherwise
    if w != "c" and (K * elem_bits > 256 if M == 16 else
                     K * elem_bits not in (128, 256) or (K * elem_bits == 256) != (elem_bits == 64)):
        raise ValueError(f"mma shape {shape!r} with {elem_bits}-bit inputs has no fragment layout here")
    n = mma_count(shape, w)
    return tuple(tuple(_mma_element(w, M, K, elem_bits, lane >> 2, lane % 4, i) for i in range(n))
                 for lane in range(WARP))


# ----------------------------------------------------------------------------- ldmatrix
def ldmatrix_row_lane(matrix: int, row: int) -> int:
    """The lane whose address operand gives row ``row`` of matrix ``matrix`` (ldmatrix /
    stmatrix .m8n8: lanes 8i..8i+7 address the rows of matrix i)."""
    return 8 * matrix + row


@lru_cache(maxsize=None)
def ldmatrix_fragment() -> tuple:
    """Per lane, the (row, col) of the two b16 elements (low half first) a lane holds of each
    8x8 matrix of ``ldmatrix`` / ``stmatrix`` / ``movmatrix`` .m8n8.b16: row groupID, columns
    2*threadID_in_group + {0, 1} (the mma m8n8 accumulator layout)."""
    return tuple(((lane >> 2, 2 * (lane % 4)), (lane >> 2, 2 * (lane % 4) + 1))
                 for lane in range(WARP))


@lru_cache(maxsize=None)
def stmatrix_fragment(shape: str = "m8n8") -> tuple:
    """Per lane, the (row, col) of each element it holds of one matrix of ``stmatrix``:

    * ``m8n8`` (``.b16``): two elements, as ``ldmatrix_fragment``;
    * ``m16n8`` (``.b8``, always ``.trans``): four 8-bit elements ``e0..e3`` of one 32-bit
      register (``e0`` in the low byte): row ``groupID + 8 * (i >> 1)``, column
      ``2 * threadID_in_group + (i & 1)`` (the mma m16n8 accumulator layout). With ``.trans``
      the matrix is stored column-major: row address ``c`` of the matrix (lane ``8m + c``)
      receives column ``c``, 16 bytes."""
    s = shape.lstrip(".")
    if s == "m8n8":
        return ldmatrix_fragment()
    if s == "m16n8":
        return tuple(tuple((lane // 4 + 8 * (i >> 1), 2 * (lane % 4) + (i & 1)) for i in range(4))
                     for lane in range(WARP))
    raise ValueError(f"stmatrix shape {shape!r}: allowed: m8n8, m16n8")


# ----------------------------------------------------------------------------- wgmma
def wgmma_accumulator(n: int, thread: int, elem_bits: int = 32) -> list:
    """(row, col) of each accumulator element thread ``thread`` (0..127) of the warpgroup holds
    for ``wgmma .m64nN``: warp w covers rows 16w..16w+15; element i sits at row
    16w + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2 (N/2 elements per thread)."""
    w, lane = divmod(thread, WARP)
    return [(16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2)
            for i in range(n // 2)]


# ----------------------------------------------------------------------------- tcgen05
# tcgen05.ld / tcgen05.st data-path shapes: shape -> (32-bit registers per thread for each
# ``.num`` repetition, largest ``.num``) (PTX ISA "tcgen05 Matrix fragments").
TCGEN05_LD_SHAPES = {"16x64b": (1, 128), "16x128b": (2, 64), "16x256b": (4, 32),
                     "32x32b": (1, 128), "16x32bx2": (1, 128)}


def tcgen05_ld_regs(shape: str, num: int) -> int:
    """Registers per thread of ``tcgen05.ld/st .shape.x<num>``."""
    return TCGEN05_LD_SHAPES[shape.lstrip(".")][0] * num
