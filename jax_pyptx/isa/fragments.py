"""Fragment layouts of the warp- and warpgroup-level matrix instructions (PTX ISA "Matrix
fragments for mma.m16n8k*", "ldmatrix", "Register fragments and shared memory matrix layouts"
of wgmma, tcgen05 "Matrix fragments" and "Data Path Layout Organization"): which (row, col) of
a matrix each element a thread holds is (mma.sp's sparse A and its metadata included), where
each element of a shared-memory operand lies, and where tcgen05 data sits in Tensor Memory.

The one copy of these facts: the DSL's ``ptx.mma.fragment_*`` / ``ptx.wgmma.accumulator`` and
the interpreter's mma.sync / ldmatrix / stmatrix / movmatrix / wgmma / tcgen05 read them.
Pure Python (no NumPy); every layout is a tuple, per lane, of (row, col) per element, memoised.

Lane terms: ``groupID = lane >> 2``, ``threadID_in_group = lane % 4``.

Examples:
    >>> from jax_pyptx.isa.fragments import mma_fragment
    >>> mma_fragment("m16n8k16", "c", 32)[5]           # lane 5's four accumulator elements
    ((1, 2), (1, 3), (9, 2), (9, 3))
"""
from __future__ import annotations

from functools import lru_cache

WARP = 32


def mnk(shape: str) -> tuple:
    """``"m16n8k16"`` (or ``".m16n8k16"``) -> (16, 8, 16).

    Examples:
        >>> from jax_pyptx.isa.fragments import mnk
        >>> mnk("m16n8k16"), mnk(".m64n256k16")
        ((16, 8, 16), (64, 256, 16))
    """
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
    span = 4 * per                                   # K one register covers over a group of 4
    if which == "c":
        if M == 16:                                  # c0,c1: row g; c2,c3: row g + 8
            return g + 8 * (i >= 2), 2 * t + (i & 1)
        return g, 2 * t + i                          # m8n8: two elements, row g
    if which == "a":
        if M == 16:                                  # register r: rows g + 8*(r&1), K chunk r>>1
            return g + 8 * (r & 1), t * per + j + span * (r >> 1)
        return g, t * per + i
    if M == 16:                                      # b (K x N, "col"): n = groupID
        return t * per + j + span * r, g
    return t * per + i, g


def mma_count(shape: str, which: str) -> int:
    """Elements per lane of operand ``which`` ("a", "b", "c"/"d") of ``mma.sync`` ``shape``.

    Examples:
        >>> from jax_pyptx.isa.fragments import mma_count
        >>> mma_count("m16n8k16", "a"), mma_count("m16n8k16", "b"), mma_count("m16n8k16", "c")
        (8, 4, 4)
    """
    M, N, K = mnk(shape)
    if which in ("c", "d"):
        return M * N // WARP
    return (M if which == "a" else N) * K // WARP


@lru_cache(maxsize=None)
def mma_fragment(shape: str, which: str, elem_bits: int = 16) -> tuple:
    """Layout of operand ``which`` ("a": M x K row-major, "b": K x N, "c"/"d": M x N) of
    ``mma.sync.aligned.<shape>`` with ``elem_bits``-bit elements: per lane, a tuple of (row, col)
    of each element (element i of register r = i // (32 / elem_bits)).

    Shapes: m16n8kK (K = 4 .. 256, the f64 m16n8k8 / m16n8k16 of sm_90 included) and m8n8kK
    (m8n8k4 .f64, m8n8k16 8-bit, m8n8k32 4-bit, m8n8k128 .b1). Register r of A holds row
    ``groupID + 8 * (r & 1)``, K chunk ``r >> 1`` of ``4 * (32 / elem_bits)`` columns (one
    element per 64-bit register); register r of B holds K chunk r. The Volta m8n8k4 .f16 form
    (four 8x8x4 products per warp, one per quad-pair) has no layout here.

    Examples:
        >>> from jax_pyptx.isa.fragments import mma_fragment
        >>> mma_fragment("m16n8k16", "a")[0]                # lane 0 of A (bf16/f16)
        ((0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9))
    """
    M, N, K = mnk(shape)
    if (M, N) not in ((16, 8), (8, 8)):
        raise ValueError(f"mma shape {shape!r} has no fragment layout here; allowed: m16n8kK, m8n8kK")
    w = "c" if which == "d" else which
    if w not in ("a", "b", "c"):
        raise ValueError(f"fragment {which!r}: allowed: a, b, c, d")
    # m16n8: A in at most four 32-bit registers, or 64-bit elements (f64 k4 / k8 / k16);
    # m8n8: A in one register (one f64); the Volta m8n8k4 .f16 lays its fragments out otherwise
    if w != "c" and (K * elem_bits > 256 and (elem_bits != 64 or K > 16) if M == 16 else
                     K * elem_bits not in (128, 256) or (K * elem_bits == 256) != (elem_bits == 64)):
        raise ValueError(f"mma shape {shape!r} with {elem_bits}-bit inputs has no fragment layout here")
    n = mma_count(shape, w)
    return tuple(tuple(_mma_element(w, M, K, elem_bits, lane >> 2, lane % 4, i) for i in range(n))
                 for lane in range(WARP))



# ----------------------------------------------------------------------------- sparse mma
#: dense elements per chunk of a sparse A row (PTX ISA "Sparse matrix storage"): 2:4 for 16- and
#: 8-bit types, 1:2 for tf32, 4:8 (in pairs) for 4-bit types; half of each chunk is kept
SP_CHUNK = {16: 4, 8: 4, 32: 2, 4: 8}


@lru_cache(maxsize=None)
def mma_sp_fragment(shape: str, which: str, elem_bits: int = 16) -> tuple:
    """Layout of operand ``which`` of ``mma.sp{::ordered_metadata}.sync.aligned.<shape>``, per
    lane a tuple of (row, col) of each element, as ``mma_fragment``:

    * ``"a"``: the M x K/2 matrix of the kept (non-zero) elements, laid out as the dense A of
      shape m16n8k(K/2) (row ``groupID`` / ``groupID + 8``, compressed column); which dense
      column each holds is given by the metadata (``mma_sp_metadata``);
    * ``"b"``: K x N, register r holding K rows ``[r * span, (r + 1) * span)`` as the dense
      layouts do (up to four registers: 512 bits of K per lane);
    * ``"c"`` / ``"d"``: as the dense m16n8 accumulators.

    Examples:
        >>> from jax_pyptx.isa.fragments import mma_sp_fragment
        >>> mma_sp_fragment("m16n8k16", "a", 16)[0]      # lane 0: rows 0 and 8, kept cols 0-1
        ((0, 0), (0, 1), (8, 0), (8, 1))
    """
    M, N, K = mnk(shape)
    if M != 16 or N != 8 or elem_bits not in SP_CHUNK:
        raise ValueError(f"mma.sp shape {shape!r} with {elem_bits}-bit inputs has no fragment layout here")
    w = "c" if which == "d" else which
    if w == "a":
        return mma_fragment(f"m16n8k{K // 2}", "a", elem_bits)
    if w == "c":
        return mma_fragment(shape, "c", elem_bits)
    if w != "b":
        raise ValueError(f"fragment {which!r}: allowed: a, b, c, d")
    n = mma_count(shape, "b")
    return tuple(tuple(_mma_element("b", M, K, elem_bits, lane >> 2, lane % 4, i) for i in range(n))
                 for lane in range(WARP))


def mma_sp_threads(shape: str, elem_bits: int) -> int:
    """How many threads of each group of four hold metadata (1, 2 or 4): one 32-bit register
    covers 4 chunks of a row ``groupID`` (bits 0-15) and of row ``groupID + 8`` (bits 16-31).
    The sparsity selector then takes the values ``0 .. 4 // threads - 1``.

    Examples:
        >>> from jax_pyptx.isa.fragments import mma_sp_threads
        >>> mma_sp_threads("m16n8k16", 16), mma_sp_threads("m16n8k32", 16)
        (1, 2)
    """
    M, N, K = mnk(shape)
    return K // SP_CHUNK[elem_bits] // 4


@lru_cache(maxsize=None)
def mma_sp_metadata(shape: str, elem_bits: int, selector: int) -> tuple:
    """Where the metadata of each chunk of the sparse A lies: per row (0..15), per chunk q of
    the row, ``(lane, bit)``: the 4-bit field at ``bit`` of the metadata register of ``lane``.
    With ``T = mma_sp_threads``, threads ``4 * groupID + T * selector + j`` (j < T) contribute:
    thread j holds chunks ``4j .. 4j + 3`` of rows ``groupID`` (bits ``4 * (q % 4)``) and
    ``groupID + 8`` (bits ``16 + 4 * (q % 4)``). A field is two 2-bit indices, the low one for
    the first kept element (pair, for 4-bit types) of the chunk; for tf32 it is 0b0100 (the
    element at position 0 is kept) or 0b1110 (position 1).

    Examples:
        >>> from jax_pyptx.isa.fragments import mma_sp_metadata
        >>> meta = mma_sp_metadata("m16n8k16", 16, 0)
        >>> meta[0], meta[8]            # rows 0 and 8: lane 0, low and high half
        (((0, 0), (0, 4), (0, 8), (0, 12)), ((0, 16), (0, 20), (0, 24), (0, 28)))
    """
    M, N, K = mnk(shape)
    t = mma_sp_threads(shape, elem_bits)
    if not 0 <= selector < 4 // t:
        raise ValueError(f"sparsity selector {selector} of mma.sp {shape} with {elem_bits}-bit inputs: "
                         f"allowed: 0..{4 // t - 1}")
    chunks = K // SP_CHUNK[elem_bits]
    return tuple(tuple((4 * (r % 8) + t * selector + q // 4, 16 * (r // 8) + 4 * (q % 4)) for q in range(chunks))
                 for r in range(M))


# ----------------------------------------------------------------------------- ldmatrix
def ldmatrix_row_lane(matrix: int, row: int) -> int:
    """The lane whose address operand gives row ``row`` of matrix ``matrix`` (ldmatrix /
    stmatrix .m8n8: lanes 8i..8i+7 address the rows of matrix i).

    Examples:
        >>> from jax_pyptx.isa.fragments import ldmatrix_row_lane
        >>> ldmatrix_row_lane(0, 0), ldmatrix_row_lane(2, 5)
        (0, 21)
    """
    return 8 * matrix + row


@lru_cache(maxsize=None)
def ldmatrix_fragment() -> tuple:
    """Per lane, the (row, col) of the two b16 elements (low half first) a lane holds of each
    8x8 matrix of ``ldmatrix`` / ``stmatrix`` / ``movmatrix`` .m8n8.b16: row groupID, columns
    2*threadID_in_group + {0, 1} (the mma m8n8 accumulator layout).

    Examples:
        >>> from jax_pyptx.isa.fragments import ldmatrix_fragment
        >>> ldmatrix_fragment()[9]                          # lane 9: row 2, columns 2 and 3
        ((2, 2), (2, 3))
    """
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
      receives column ``c``, 16 bytes.

    Examples:
        >>> from jax_pyptx.isa.fragments import stmatrix_fragment
        >>> stmatrix_fragment()[4], stmatrix_fragment("m16n8")[4]
        (((1, 0), (1, 1)), ((1, 0), (1, 1), (9, 0), (9, 1)))
    """
    s = shape.lstrip(".")
    if s == "m8n8":
        return ldmatrix_fragment()
    if s == "m16n8":
        return tuple(tuple((lane // 4 + 8 * (i >> 1), 2 * (lane % 4) + (i & 1)) for i in range(4))
                     for lane in range(WARP))
    raise ValueError(f"stmatrix shape {shape!r}: allowed: m8n8, m16n8")


# ----------------------------------------------------------------------------- wgmma
WARPGROUP = 128
#: K of wgmma.mma_async per input type (dense; the sparse forms double it)
WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}


def wgmma_accumulator(n: int, thread: int, elem_bits: int = 32) -> list:
    """(row, col) of each accumulator element thread ``thread`` (0..127) of the warpgroup holds
    for ``wgmma .m64nN``: warp w covers rows 16w..16w+15; element i sits at row
    16w + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2 (N/2 elements per thread;
    with ``.f16`` accumulators elements 2j and 2j+1 share register j).

    Examples:
        >>> from jax_pyptx.isa.fragments import wgmma_accumulator
        >>> wgmma_accumulator(16, 37)                       # thread 37 of an m64n16 accumulator
        [(17, 2), (17, 3), (25, 2), (25, 3), (17, 10), (17, 11), (25, 10), (25, 11)]
    """
    w, lane = divmod(thread, WARP)
    return [(16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2)
            for i in range(n // 2)]


@lru_cache(maxsize=None)
def wgmma_d_fragment(n: int) -> tuple:
    """Per thread of the warpgroup (128), the (row, col) of each of its N/2 accumulator
    elements of ``wgmma .m64nN`` (PTX ISA "Register Fragments", matrix D).

    Examples:
        >>> from jax_pyptx.isa.fragments import wgmma_accumulator, wgmma_d_fragment
        >>> d = wgmma_d_fragment(64)
        >>> len(d), len(d[0]), list(d[37]) == wgmma_accumulator(64, 37)
        (128, 32, True)
    """
    return tuple(tuple(wgmma_accumulator(n, t)) for t in range(WARPGROUP))


@lru_cache(maxsize=None)
def wgmma_a_fragment(atype: str) -> tuple:
    """Per thread of the warpgroup (128), the (row, col) of each element of matrix A (64 x K)
    that its four ``.b32`` A registers hold when A comes from registers (PTX ISA "Register
    Fragments", matrix A): warp w holds rows 16w..16w+15 in the layout of ``mma.m16n8kK``'s A
    fragment (element i of register r = i // (32 / bits), low bits first).

    Examples:
        >>> from jax_pyptx.isa.fragments import wgmma_a_fragment
        >>> frag = wgmma_a_fragment("bf16")
        >>> len(frag), frag[32][0]                          # thread 32 (warp 1) starts at row 16
        (128, (16, 0))
    """
    bits = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}
    if atype not in bits:
        raise ValueError(f"wgmma A type {atype!r}: allowed: {', '.join(bits)}")
    k = WGMMA_K[atype]
    warp = mma_fragment(f"m16n8k{k}", "a", bits[atype])
    return tuple(tuple((16 * (t // WARP) + r, c) for r, c in warp[t % WARP]) for t in range(WARPGROUP))


# ----------------------------------------------------------------------------- smem layouts
#: swizzle width in bytes of each mode name (the repeating pattern is 8 rows of this width)
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}


@lru_cache(maxsize=256)
def smem_matrix_offsets(major: str, swizzle: str, mn: int, k: int, elem_bits: int,
                        lbo: int, sbo: int) -> tuple:
    """Bit offsets (before swizzling) from the matrix start of each element (mn, k) of an
    ``mn`` x ``k`` wgmma / tcgen05 operand in shared memory, row-major over (mn, k), per the PTX
    ISA's canonical layouts ("Shared Memory Matrix Layout", with T = 128 / elem_bits elements
    per 16 bytes and S the swizzle width in bytes; LBO / SBO in bytes):

    * K-major, no swizzle: ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``: 8 rows of 16 bytes per core
      matrix, the next 8 rows SBO on, the next 16-byte K chunk LBO on;
    * K-major, swizzled: ``((8,m),(T,2k)):((S/16*T,SBO),(1,T))``: rows S bytes apart, K chunks
      adjacent, the next 8 rows SBO on;
    * MN-major, no swizzle: ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``: 16 bytes of MN, the next
      16 bytes of MN SBO on, 8 K rows 16 bytes apart, the next 8 K rows LBO on;
    * MN-major, swizzled: ``((T,S/16,m),(8,k)):((1,T,LBO),(S/16*T,SBO))``: S bytes of MN per
      row, the next S bytes of MN LBO on, 8 K rows S bytes apart, the next 8 K rows SBO on.

    Examples:
        >>> from jax_pyptx.isa.fragments import smem_matrix_offsets
        >>> offs = smem_matrix_offsets("K", "none", 8, 8, 16, lbo=128, sbo=256)
        >>> offs[:3], offs[8]                               # bits: element (0, 1) is 16 bits on
        ((0, 16, 32), 128)
    """
    s = SWIZZLE_BYTES[swizzle]
    t = 128 // elem_bits
    out = []
    for r in range(mn):
        for c in range(k):
            if major == "K":
                chunk, within = divmod(c, t)
                if swizzle == "none":
                    off = (r % 8) * 16 + (r // 8) * sbo + chunk * lbo
                else:
                    off = (r % 8) * s + (r // 8) * sbo + chunk * 16
            else:
                chunk, within = divmod(r, t)
                if swizzle == "none":
                    off = chunk * sbo + (c % 8) * 16 + (c // 8) * lbo
                else:
                    atom, cc = divmod(chunk, s // 16)
                    off = cc * 16 + atom * lbo + (c % 8) * s + (c // 8) * sbo
            out.append(off * 8 + within * elem_bits)
    return tuple(out)


# ----------------------------------------------------------------------------- tcgen05
# tcgen05.ld / tcgen05.st data-path shapes: shape -> (32-bit registers per thread for each
# ``.num`` repetition, largest ``.num``) (PTX ISA "tcgen05 Matrix fragments").
TCGEN05_LD_SHAPES = {"16x64b": (1, 128), "16x128b": (2, 64), "16x256b": (4, 32),
                     "32x32b": (1, 128), "16x32bx2": (1, 128)}
#: TMEM: lanes x 32-bit columns per CTA
TMEM_LANES, TMEM_COLUMNS = 128, 512


def tcgen05_ld_regs(shape: str, num: int) -> int:
    """Registers per thread of ``tcgen05.ld/st .shape.x<num>``.

    Examples:
        >>> from jax_pyptx.isa.fragments import tcgen05_ld_regs
        >>> tcgen05_ld_regs("32x32b", 4), tcgen05_ld_regs("16x256b", 1)
        (4, 4)
    """
    return TCGEN05_LD_SHAPES[shape.lstrip(".")][0] * num


def _ld_element(shape: str, lane: int, r: int) -> tuple:
    """(lane offset, column offset, half) of register r of one repetition."""
    g, t = lane // 4, lane % 4
    if shape == "32x32b":
        return lane, 0, 0
    if shape == "16x64b":            # two columns per lane: lanes g and g+8, column (lane/2)%2
        return g + 8 * (lane % 2), (lane // 2) % 2, 0
    if shape == "16x128b":           # four columns: lane g + 8r, column lane%4
        return g + 8 * r, t, 0
    if shape == "16x256b":           # the mma m16n8 accumulator layout on eight columns
        return g + 8 * (r // 2), 2 * t + r % 2, 0
    if shape == "16x32bx2":          # lanes 0-15 at taddr, lanes 0-15 at taddr + immHalfSplitoff
        return lane % 16, 0, lane // 16
    raise ValueError(f"tcgen05.ld/st shape {shape!r}: allowed: {', '.join(TCGEN05_LD_SHAPES)}")


_SHAPE_COLS = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8, "16x32bx2": 1}


@lru_cache(maxsize=None)
def tcgen05_ld_fragment(shape: str, num: int = 1, pack: bool = False) -> tuple:
    """Per lane of the warp (32), for each of its ``tcgen05.ld/st .shape.x<num>`` registers:
    (TMEM lane offset, TMEM column offset, half) from the address ``taddr`` (half 1 of
    ``.16x32bx2`` is at ``taddr + immHalfSplitoff`` columns). Repetition j of ``.num`` covers
    the next columns (registers of repetition j follow those of j-1). With ``.pack::16b`` /
    ``.unpack::16b`` a register holds the low halves of two adjacent columns, so the column
    offsets double (the register's low half is column c, its high half column c+1).

    The shapes: ``.32x32b`` lane i holds TMEM lane i; ``.16x64b`` lanes 4g+{0,1} hold lane g,
    4g+{2,3} lane g+8 (columns 0/1 alternating); ``.16x128b`` lane 4g+t holds column t of
    lanes g and g+8; ``.16x256b`` is the ``mma.m16n8`` accumulator layout over 8 columns;
    ``.16x32bx2`` lanes 0-15 and 16-31 read TMEM lanes 0-15 at two column bases.

    Examples:
        >>> from jax_pyptx.isa.fragments import tcgen05_ld_fragment
        >>> tcgen05_ld_fragment("32x32b", 2)[7]             # lane 7: TMEM lane 7, columns 0 and 1
        ((7, 0, 0), (7, 1, 0))
    """
    s = shape.lstrip(".")
    per, top = TCGEN05_LD_SHAPES[s]
    if num not in tuple(2 ** i for i in range(8) if 2 ** i <= top):
        raise ValueError(f"tcgen05 shape .{s}: .x{num} is not allowed (largest .x{top})")
    width = _SHAPE_COLS[s]
    mult = 2 if pack else 1
    out = []
    for lane in range(WARP):
        regs = []
        for j in range(num):
            for r in range(per):
                lo, co, half = _ld_element(s, lane, r)
                regs.append((lo, (co + j * width) * mult, half))
        out.append(tuple(regs))
    return tuple(out)


def tcgen05_lanes(shape: str) -> int:
    """TMEM lanes a warp accesses with ``tcgen05.ld/st .shape`` (16 or 32).

    Examples:
        >>> from jax_pyptx.isa.fragments import tcgen05_lanes
        >>> tcgen05_lanes("32x32b"), tcgen05_lanes("16x256b")
        (32, 16)
    """
    return 32 if shape.lstrip(".") == "32x32b" else 16


@lru_cache(maxsize=None)
def tcgen05_d_layout(m: int, n: int, cta_group: int = 1, ws: bool = False) -> tuple:
    """Where matrix D of ``tcgen05.mma`` lives in a CTA's Tensor Memory (PTX ISA "Data Path
    Layout Organization"): for each (row, col) of the CTA's part of D (row-major; M/2 rows per
    CTA for ``.cta_group::2``), the (lane, column) offset from the D address.

    * M=128 (cta_group::1, and .ws) and M=256 (cta_group::2, 128 rows per CTA): "4x1", row i
      in lane i;
    * M=64 without .ws: "4x1 with half the data path": rows 16s..16s+15 in lanes 32s..32s+15
      (the D address may add 16 to the lane);
    * M=64 .ws and M=128 cta_group::2 (64 rows per CTA): "2x2": columns [0, N/2) in lanes 0-63,
      columns [N/2, N) in lanes 64-127 at columns 0..N/2-1;
    * M=32 .ws: "1x4": column quarter q in lanes 32q..32q+31.

    Examples:
        >>> from jax_pyptx.isa.fragments import tcgen05_d_layout
        >>> d = tcgen05_d_layout(128, 64)
        >>> d[0], d[64 * 5 + 3]                             # row 5, column 3: lane 5, column 3
        ((0, 0), (5, 3))
    """
    rows = m // cta_group
    out = []
    for r in range(rows):
        for c in range(n):
            if rows == 128:
                out.append((r, c))
            elif rows == 64 and not ws and cta_group == 1:
                out.append((r % 16 + 32 * (r // 16), c))
            elif rows == 64:
                q, cc = divmod(c, n // 2)
                out.append((r + 64 * q, cc))
            elif rows == 32 and ws:
                q, cc = divmod(c, n // 4)
                out.append((r + 32 * q, cc))
            else:
                raise ValueError(f"tcgen05.mma: M={m} with cta_group::{cta_group}"
                                 f"{' .ws' if ws else ''} has no data path layout")
    return tuple(out)
