"""Fragment maps: which thread, register and packed element hold each element of a matrix
operand of a warp- or warpgroup-level matrix instruction.

The layouts come from :mod:`jax_pyptx.isa.fragments` (the one copy, also read by the DSL and
the interpreter); this module only arranges them as tables a figure, a test or a user can read.

Examples:
    >>> from jax_pyptx.viz.fragments import wgmma_map
    >>> m = wgmma_map(64, "d", "f32")
    >>> m.shape, m.holder(17, 3)
    ((64, 64), (37, 1, 0))
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import NotSupportedError
from ..isa import forms_for
from ..isa import fragments as F
from ..isa.fragments import mnk
from ..types import by_name

__all__ = ["FragmentMap", "fragment_map", "mma_map", "ldmatrix_map", "wgmma_map",
           "tcgen05_ld_map", "mma_types", "wgmma_types"]


@dataclass(frozen=True)
class FragmentMap:
    """Who holds each element of a ``rows x cols`` operand.

    ``thread[r, c]``: the thread (lane for warp-level ops, 0..127 for warpgroup ops; -1: none);
    ``reg[r, c]``: which of that thread's fragment registers; ``part[r, c]``: which packed
    element of the register (0 for 32-bit elements, 0/1 for 16-bit halves, low first).

    Examples:
        >>> from jax_pyptx.viz.fragments import FragmentMap, ldmatrix_map
        >>> m = ldmatrix_map(1)
        >>> isinstance(m, FragmentMap), int(m.thread[2, 4]), int(m.reg[2, 4]), int(m.part[2, 4])
        (True, 10, 0, 0)
    """

    title: str
    thread: np.ndarray
    reg: np.ndarray
    part: np.ndarray
    row_label: str = "row"
    col_label: str = "column"

    @property
    def shape(self) -> tuple:
        """(rows, cols) of the operand.

        Examples:
            >>> from jax_pyptx.viz.fragments import mma_map
            >>> mma_map("m16n8k16", "a", "bf16").shape, mma_map("m16n8k16", "b", "bf16").shape
            ((16, 16), (16, 8))
        """
        return self.thread.shape

    def holder(self, row: int, col: int) -> tuple:
        """``(thread, register, part)`` of element ``(row, col)``.

        Examples:
            >>> from jax_pyptx.viz.fragments import mma_map
            >>> mma_map("m16n8k16", "c", "f32").holder(9, 3)        # lane 5, register 3
            (5, 3, 0)
        """
        return int(self.thread[row, col]), int(self.reg[row, col]), int(self.part[row, col])

    def elements_of(self, thread: int) -> list:
        """``[(register, part, row, col), ...]`` that ``thread`` holds, in register order.

        Examples:
            >>> from jax_pyptx.viz.fragments import mma_map
            >>> mma_map("m16n8k16", "c", "f32").elements_of(5)
            [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 9, 2), (3, 0, 9, 3)]
        """
        rr, cc = np.nonzero(self.thread == thread)
        out = [(int(self.reg[r, c]), int(self.part[r, c]), int(r), int(c)) for r, c in zip(rr, cc)]
        return sorted(out)


def _empty(rows, cols):
    return (np.full((rows, cols), -1, np.int64), np.full((rows, cols), -1, np.int64),
            np.full((rows, cols), -1, np.int64))


# sub-byte multiplicand types of mma / wgmma (no PTX register type of their own)
_PACKED_BITS = {"s4": 4, "u4": 4, "b1": 1}


def _bits(dtype) -> int:
    name = _name(dtype)
    return _PACKED_BITS[name] if name in _PACKED_BITS else by_name(name).bits


def _name(dtype) -> str:
    return dtype.lstrip(".") if isinstance(dtype, str) else dtype.name


def _opts(form, group: str) -> tuple:
    for g in form.groups:
        if g.name == group:
            return tuple(o.lstrip(".") for o in g.options)
    return ()


@lru_cache(maxsize=None)
def mma_types() -> dict:
    """``{shape: {"a": types, "b": types, "c": accumulator types}}`` of every dense
    ``mma.sync`` form in the ISA table.

    Examples:
        >>> mma_types().get("m16n8k8").get("a")
        ('bf16', 'f16', 'f64', 'tf32')
    """
    out: dict = {}
    for form in forms_for("mma.sync"):
        for shape in _opts(form, "shape"):
            d = out.setdefault(shape, {"a": set(), "b": set(), "c": set()})
            d["a"].update(_opts(form, "atype"))
            d["b"].update(_opts(form, "btype"))
            d["c"].update(_opts(form, "ctype") + _opts(form, "dtype"))
    return {k: {w: tuple(sorted(v)) for w, v in d.items()} for k, d in sorted(out.items())}


@lru_cache(maxsize=None)
def wgmma_types() -> dict:
    """``{(accumulator type, A type): (N, ...)}`` of every dense ``wgmma.mma_async`` form in
    the ISA table (N = 8..256 step 8 for floating point, the ISA's subset for s8/u8/b1).

    Examples:
        >>> 40 in wgmma_types().get(("s32", "s8"))      # integer N: the ISA's subset
        False
    """
    out: dict = {}
    for form in forms_for("wgmma.mma_async"):
        for dt in _opts(form, "dtype"):
            for at in _opts(form, "atype"):
                out.setdefault((dt, at), set()).update(mnk(s)[1] for s in _opts(form, "shape"))
    return {k: tuple(sorted(v)) for k, v in sorted(out.items())}


def _per(bits: int) -> int:
    """Elements one register holds (a 64-bit element fills its own 64-bit register)."""
    return max(1, 32 // bits)


def mma_map(shape: str, operand: str, dtype="f16") -> FragmentMap:
    """``mma.sync.aligned.<shape>`` operand ``"a"`` (M x K), ``"b"`` (K x N) or ``"c"``/``"d"``
    (M x N) with ``dtype`` elements (the operand's own type: ``f32`` or ``f16`` for an f16
    mma's accumulator, packed two per register when f16), for every shape and type of the ISA
    table's ``mma.sync`` forms (``mma_types()``): m16n8k4 .. m16n8k256 and m8n8k4 (.f64),
    m8n8k16 (8-bit), m8n8k32 (4-bit), m8n8k128 (.b1). The Volta m8n8k4 ``.f16`` form, four 8x8
    products per warp, is not drawn.

    Examples:
        >>> mma_map("m16n8k16", "a", "bf16").holder(0, 0)       # lane 0, register 0, low half
        (0, 0, 0)
        >>> mma_map("m16n8k64", "a", "s4").holder(9, 35)        # 8 elements per register
        (4, 3, 3)
    """
    s = shape.lstrip(".")
    types = mma_types()
    if s not in types:
        raise ValueError(f"mma shape {shape!r} is not an mma.sync shape of the ISA table; allowed: "
                         f"{', '.join(types)}")
    which = "c" if operand == "d" else operand
    if which not in ("a", "b", "c"):
        raise ValueError(f"mma operand {operand!r}: allowed 'a', 'b', 'c', 'd'")
    name = _name(dtype)
    if name not in types[s][which]:
        role = {"a": "A", "b": "B", "c": "accumulator"}[which]
        raise ValueError(f"mma.sync .{s} has no {role} of type .{name}; allowed: "
                         f"{', '.join(types[s][which])}")
    M, N, K = mnk(s)
    bits = _bits(name)
    if s == "m8n8k4" and name != "f64":
        raise NotSupportedError(f"mma.sync .{s} .{name}: the Volta quad-pair layout (four 8x8x4 "
                                f"products per warp) is not drawn; .m8n8k4 .f64 is")
    layout = F.mma_fragment(s, which, bits if which != "c" else 32)
    rows, cols = {"a": (M, K), "b": (K, N), "c": (M, N)}[which]
    per = _per(bits) if which != "c" or bits == 16 else 1
    thread, reg, part = _empty(rows, cols)
    for lane, elems in enumerate(layout):
        for i, (r, c) in enumerate(elems):
            thread[r, c], reg[r, c], part[r, c] = lane, i // per, i % per
    return FragmentMap(f"mma.sync {s} {operand.upper()} ({name})", thread, reg, part)


def ldmatrix_map(num: int = 4, trans: bool = False) -> FragmentMap:
    """``ldmatrix.sync.aligned.m8n8.x<num>[.trans].b16``: ``num`` 8x8 b16 matrices side by side
    (matrix i in columns 8i..8i+7); register i of each lane holds two elements of matrix i.
    With ``.trans`` each matrix is read transposed (the lane holds (col, row)).

    Examples:
        >>> from jax_pyptx.viz.fragments import ldmatrix_map
        >>> m = ldmatrix_map(2, trans=True)
        >>> m.shape, m.holder(0, 9)
        ((8, 16), (4, 1, 0))
    """
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
    ``"d"`` the 64 x n accumulator (``dtype`` f32, s32, or f16: two elements per register, the
    lower column in the low half), ``"a"`` the 64 x K A operand from registers (``dtype`` the A
    type; K = 16 for f16/bf16, 8 for tf32, 32 for 8-bit types, 256 for b1), laid out per warp
    like ``mma.sync`` m16n8kK's A over rows 16w..16w+15. ``n`` must be an N of the ISA table's
    forms for that type (``wgmma_types()``).

    Examples:
        >>> wgmma_map(64, "d", "f16").holder(17, 3)              # thread 37, register 0, high half
        (37, 0, 1)
    """
    name = _name(dtype)
    table = wgmma_types()
    if operand == "d":
        ns = sorted({x for (dt, _), v in table.items() if dt == name for x in v})
        if not ns:
            raise ValueError(f"wgmma accumulator type .{name}: allowed: "
                             f"{', '.join(sorted({dt for dt, _ in table}))}")
    elif operand == "a":
        ns = sorted({x for (_, at), v in table.items() if at == name for x in v})
        if not ns:
            raise ValueError(f"wgmma A type .{name}: allowed: "
                             f"{', '.join(sorted({at for _, at in table}))}")
    else:
        raise ValueError(f"wgmma operand {operand!r}: registers hold 'a' or 'd'")
    if n not in ns:
        raise ValueError(f"wgmma .m64n{n} with .{name} {'accumulators' if operand == 'd' else 'A'}:"
                         f" N must be one of {', '.join(map(str, ns))}")
    bits = _bits(name)
    if operand == "d":
        thread, reg, part = _empty(64, n)
        per = 2 if bits == 16 else 1
        for t, elems in enumerate(F.wgmma_d_fragment(n)):
            for i, (r, c) in enumerate(elems):
                thread[r, c], reg[r, c], part[r, c] = t, i // per, i % per
        return FragmentMap(f"wgmma m64n{n} D ({name})", thread, reg, part)
    K = F.WGMMA_K[name]
    per = _per(bits)
    thread, reg, part = _empty(64, K)
    for t, elems in enumerate(F.wgmma_a_fragment(name)):
        for i, (r, c) in enumerate(elems):
            thread[r, c], reg[r, c], part[r, c] = t, i // per, i % per
    return FragmentMap(f"wgmma m64n{n}k{K} A ({name})", thread, reg, part)


def tcgen05_ld_map(shape: str = "32x32b", num: int = 1, pack: bool = False,
                   half_splitoff: int | None = None) -> FragmentMap:
    """``tcgen05.ld`` / ``tcgen05.st .<shape>.x<num>[.pack::16b]`` over the Tensor Memory one
    warp reaches: rows are TMEM lanes (from the address's lane; 32 for ``.32x32b``, 16 for the
    other shapes), columns 32-bit TMEM columns (from the address's column). Each cell: the warp
    lane whose register holds it, which register (``.num`` repetitions follow each other), and
    with ``pack`` which 16-bit half (a register packs the low halves of two adjacent columns).
    ``.16x32bx2``: lanes 0-15 reach the columns at the address, lanes 16-31 those at
    ``half_splitoff`` columns on (default: right after the first half's columns).

    Shapes (PTX ISA "Matrix fragments" of tcgen05): ``32x32b`` lane i holds TMEM lane i;
    ``16x64b`` lane 4g+2h+q holds TMEM lane g+8q, column h; ``16x128b`` lane 4g+t holds
    column t of TMEM lanes g and g+8; ``16x256b`` holds the mma m16n8 accumulator layout over
    8 columns.

    Examples:
        >>> tcgen05_ld_map("16x64b").holder(8, 0)                # TMEM lane 8: warp lane 1
        (1, 0, 0)
    """
    s = shape.lstrip(".")
    if s not in F.TCGEN05_LD_SHAPES:
        raise ValueError(f"tcgen05.ld shape {shape!r}: allowed: {', '.join(F.TCGEN05_LD_SHAPES)}")
    frag = F.tcgen05_ld_fragment(s, num, pack)
    mult = 2 if pack else 1
    lanes = F.tcgen05_lanes(s)
    if s == "16x32bx2":
        split = num * mult if half_splitoff is None else int(half_splitoff)
        if split < num * mult:
            raise ValueError(f"tcgen05.ld .16x32bx2.x{num}: half_splitoff={split} overlaps the "
                             f"first half's {num * mult} columns")
        cols = split + num * mult
    else:
        split = 0
        cols = max(c for regs in frag for _, c, _ in regs) + mult
    thread, reg, part = _empty(lanes, cols)
    for lane, regs in enumerate(frag):
        for i, (lo, co, half) in enumerate(regs):
            c = co + split * half
            for h in range(mult):
                thread[lo, c + h], reg[lo, c + h], part[lo, c + h] = lane, i, h
    p = ".pack::16b" if pack else ""
    return FragmentMap(f"tcgen05.ld {s}.x{num}{p}", thread, reg, part,
                       row_label="TMEM lane (from the address)",
                       col_label="TMEM column (from the address)")


def fragment_map(op: str, *args, **kw) -> FragmentMap:
    """Dispatch by instruction: ``fragment_map("mma", "m16n8k16", "a", "bf16")``,
    ``fragment_map("ldmatrix", 4)``, ``fragment_map("wgmma", 64, "d")``,
    ``fragment_map("tcgen05.ld", "16x256b", 2)``.

    Examples:
        >>> from jax_pyptx.viz.fragments import fragment_map
        >>> fragment_map("ldmatrix", 4).shape, fragment_map("tcgen05.ld", "16x256b", 2).title
        ((8, 32), 'tcgen05.ld 16x256b.x2')
    """
    table = {"mma": mma_map, "ldmatrix": ldmatrix_map, "wgmma": wgmma_map,
             "tcgen05.ld": tcgen05_ld_map}
    try:
        fn = table[op]
    except KeyError:
        raise ValueError(f"fragment_map: op {op!r} is not one of {', '.join(table)}") from None
    return fn(*args, **kw)
