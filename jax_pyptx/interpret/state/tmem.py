"""Tensor Memory (tcgen05): per CTA a space of 128 lanes x 512 columns of 32-bit cells
(PTX ISA "Tensor Memory"), allocated in columns.

A TMEM address is 32 bits: lane in bits 31-16, column in bits 15-0. ``tcgen05.alloc`` hands out
a power-of-two number of columns (32 .. 512), aligned to its size, and writes the address
(lane 0, first column) to shared memory; every allocation must be freed with
``tcgen05.dealloc`` before the kernel exits. The sanitizer reports accesses to columns the CTA
does not hold (naming the ``dealloc`` that freed them when there was one), reads of cells no
instruction wrote, and allocations still held at exit.

``read_rects`` / ``write_rects`` access a matrix that sits in TMEM as a few rectangles (a
tcgen05.mma accumulator: ``rects``) with slices; on any problem they defer to ``read`` /
``write``, which give the report. ``read_rects_of`` / ``write_rects_of`` do so in several CTAs
at once, where ``rects_ok`` finds nothing to report in any.
"""
from __future__ import annotations

import numpy as np

from ...errors import TensorMemoryError, UninitializedReadError
from ...isa.fragments import TMEM_COLUMNS, TMEM_LANES
from . import shadow


def split(taddr):
    """(lane, column) arrays of TMEM addresses."""
    a = np.asarray(taddr).astype(np.int64)
    return (a >> 16) & 0xFFFF, a & 0xFFFF


class Allocation:
    __slots__ = ("cta", "start", "ncols", "d", "freed_by")

    def __init__(self, cta, start, ncols, d):
        self.cta, self.start, self.ncols, self.d = cta, start, ncols, d
        self.freed_by = None


def _where(d):
    loc = getattr(d.ins, "loc", None)
    text = d.text.rstrip(";")
    return f"{loc}: {text}" if loc is not None else f"{text} ({d.where()})"


class TensorMemory:
    """The Tensor Memory of every CTA of a batch."""

    def __init__(self, ctx):
        n = ctx.nctas
        cells = n * TMEM_LANES * TMEM_COLUMNS           # (recycled between batches: ``recycle``)
        self.data = shadow.filled(cells, np.uint32).reshape(n, TMEM_LANES, TMEM_COLUMNS)
        self.defined = shadow.filled(cells, bool).reshape(n, TMEM_LANES, TMEM_COLUMNS) if ctx.sanitize else None
        # per CTA and column: every lane of it defined (a tensor-core accumulator written whole;
        # ``write_rects``), so that a read of whole columns looks here and not at its cells
        self.full = np.zeros((n, TMEM_COLUMNS), bool) if ctx.sanitize else None
        self.owner = np.full((n, TMEM_COLUMNS), -1, np.int64)      # allocation index per column
        self.last = np.full((n, TMEM_COLUMNS), -1, np.int64)       # last allocation that held it
        self.allocs: list[Allocation] = []
        self.relinquished = np.zeros(n, bool)
        self.sanitize = ctx.sanitize
        self.ok_rects = set()     # ``_rect_ok`` keys found held (and written): until a dealloc
        self._scratch = {}        # (n, rows, cols) -> ``scratch``'s arrays
        ctx.at_exit.append(self.check_exit)

    def scratch(self, n, rows, cols):
        """(float64, uint32) arrays (n, rows, cols) for a batched accumulator's values and cells
        (reused: a fresh megabyte is a page fault per page)."""
        got = self._scratch.get((n, rows, cols))
        if got is None:
            got = self._scratch[(n, rows, cols)] = (np.empty((n, rows, cols)), np.empty((n, rows, cols), np.uint32))
        return got

    def recycle(self):
        """The batch is over: the cell arrays go to the next one (``shadow``)."""
        shadow.recycle(self.data, self.defined)
        self.data = self.defined = None

    # ------------------------------------------------------------------ allocation
    def alloc(self, ctx, cta: int, ncols: int, d, g, lane) -> int:
        if self.relinquished[cta]:
            raise ctx.error(TensorMemoryError,
                            "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit",
                            g, lane)
        free = self.owner[cta] < 0
        for start in range(0, TMEM_COLUMNS, ncols):
            if free[start:start + ncols].all():
                a = Allocation(cta, start, ncols, d)
                self.allocs.append(a)
                self.owner[cta, start:start + ncols] = len(self.allocs) - 1
                self.last[cta, start:start + ncols] = len(self.allocs) - 1
                return start
        held = ", ".join(f"{x.ncols} at column {x.start}" for x in self.allocs
                         if x.cta == cta and x.freed_by is None)
        raise ctx.error(TensorMemoryError,
                        f"tcgen05.alloc of {ncols} columns can never complete: this CTA holds "
                        f"{held} of its {TMEM_COLUMNS} columns and no dealloc follows (the "
                        f"allocation would block forever)", g, lane)

    def dealloc(self, ctx, cta: int, col: int, ncols: int, d, g, lane):
        idx = self.owner[cta, col] if 0 <= col < TMEM_COLUMNS else -1
        a = self.allocs[idx] if idx >= 0 else None
        if a is None or a.start != col or a.ncols != ncols:
            have = ", ".join(f"{x.ncols} columns at {x.start}" for x in self.allocs
                             if x.cta == cta and x.freed_by is None) or "none"
            raise ctx.error(TensorMemoryError,
                            f"tcgen05.dealloc of {ncols} columns at column {col}: no such allocation "
                            f"(this CTA holds: {have})", g, lane)
        a.freed_by = d
        self.owner[cta, col:col + ncols] = -1
        self.ok_rects.clear()
        if self.defined is not None:
            self.defined[cta, :, col:col + ncols] = False
            self.full[cta, col:col + ncols] = False

    def relinquish(self, cta):
        self.relinquished[cta] = True

    def check_exit(self, ctx):
        if not self.sanitize:
            return
        for a in self.allocs:
            if a.freed_by is None:
                tid, c = ctx.thread_coords(a.cta * ctx.S)
                raise TensorMemoryError(
                    f"Tensor Memory not deallocated at exit: {a.ncols} columns at column {a.start} "
                    f"of CTA ({c[0]},{c[1]},{c[2]}), allocated by {_where(a.d)}; every tcgen05.alloc "
                    f"needs a tcgen05.dealloc before the kernel exits", loc=getattr(a.d.ins, "loc", None))

    # ------------------------------------------------------------------ access
    def check(self, ctx, ctas, cols, what, g, lane_of=None):
        """Every (cta, column) accessed must be allocated."""
        if np.size(cols):           # fast path: the CTAs from the lowest to the highest hold the columns
            lo, hi = int(np.min(cols)), int(np.max(cols))
            c0, c1 = (int(ctas), int(ctas)) if np.ndim(ctas) == 0 else (int(np.min(ctas)), int(np.max(ctas)))
            if 0 <= lo and hi < TMEM_COLUMNS and (self.owner[c0:c1 + 1, lo:hi + 1] >= 0).all():
                return
        shape = np.broadcast_shapes(np.shape(ctas), np.shape(cols))
        ctas = np.broadcast_to(np.asarray(ctas, np.int64), shape)
        cols = np.broadcast_to(np.asarray(cols, np.int64), shape)
        bad = (cols < 0) | (cols >= TMEM_COLUMNS)
        own = np.where(bad, -1, self.owner[ctas, np.clip(cols, 0, TMEM_COLUMNS - 1)])
        bad |= own < 0
        if not bad.any():
            return
        j = np.argwhere(bad)[0]
        c, col = int(ctas[tuple(j)]), int(cols[tuple(j)])
        lane = int(j[0]) if lane_of is None else lane_of(j)
        if not 0 <= col < TMEM_COLUMNS:
            msg = f"{what} reaches TMEM column {col}, outside the {TMEM_COLUMNS} columns"
        else:
            prev = self.last[c, col]
            if prev >= 0 and self.allocs[prev].freed_by is not None:
                a = self.allocs[prev]
                msg = (f"{what} uses TMEM column {col} after it was deallocated by "
                       f"{_where(a.freed_by)} (allocated by {_where(a.d)})")
            else:
                msg = f"{what} uses TMEM column {col}, which this CTA has not allocated (tcgen05.alloc)"
        raise ctx.error(TensorMemoryError, msg, g, lane)

    def _rows_held(self, c0: int, c1: int, cols) -> bool:
        """Every CTA from ``c0`` to ``c1`` holds the columns of slice ``cols`` (``check``'s fast
        path)."""
        return (0 <= cols.start and cols.stop <= TMEM_COLUMNS
                and bool((self.owner[c0:c1 + 1, cols] >= 0).all()))

    def read_rows(self, ctas, lanes, cols):
        """The cells of column slice ``cols`` of each (CTA, lane) row, (n, width); None when
        one may be outside an allocation or is unwritten (``read`` reports it, cell by cell)."""
        if not len(ctas):
            return None
        c0, c1 = int(ctas.min()), int(ctas.max())
        if not self._rows_held(c0, c1, cols):
            return None
        if self.defined is not None and not self.full[c0:c1 + 1, cols].all() \
                and not self.defined[ctas, lanes, cols].all():
            return None
        return self.data[ctas, lanes, cols]

    def write_rows(self, ctas, lanes, cols, values) -> bool:
        """``write`` of ``values`` (n, width) to column slice ``cols`` of each (CTA, lane) row;
        False (nothing written) when one may be outside an allocation (``write`` reports it)."""
        if not len(ctas) or not self._rows_held(int(ctas.min()), int(ctas.max()), cols):
            return False
        self.data[ctas, lanes, cols] = values
        if self.defined is not None:
            self.defined[ctas, lanes, cols] = True
        return True

    def _flat(self, ctas, lanes, cols):
        """Flat cell indices of (CTA, lane, column) (checked columns), or None when a lane lies
        outside TMEM (indexing by the three then raises)."""
        lanes = np.asarray(lanes)
        if lanes.size and (int(lanes.min()) < 0 or int(lanes.max()) >= TMEM_LANES):
            return None
        return (np.asarray(ctas, np.int64) * TMEM_LANES + lanes) * TMEM_COLUMNS + cols

    def read(self, ctx, ctas, lanes, cols, what, g, lane_of=None):
        self.check(ctx, ctas, cols, what, g, lane_of)
        ctas = np.asarray(ctas, np.int64)
        f = self._flat(ctas, lanes, cols)
        v = self.data[ctas, lanes, cols] if f is None else self.data.reshape(-1).take(f)
        if self.defined is not None:
            ok = self.defined[ctas, lanes, cols] if f is None else self.defined.reshape(-1).take(f)
            if not ok.all():
                j = np.argwhere(~ok)[0]
                lane = int(j[0]) if lane_of is None else lane_of(j)
                raise ctx.error(UninitializedReadError,
                                f"{what} reads TMEM lane {int(np.broadcast_to(lanes, ok.shape)[tuple(j)])} "
                                f"column {int(np.broadcast_to(cols, ok.shape)[tuple(j)])}, which no "
                                f"tcgen05.st / mma / cp wrote", g, lane)
        return v

    def write(self, ctx, ctas, lanes, cols, values, what, g, lane_of=None):
        self.check(ctx, ctas, cols, what, g, lane_of)
        ctas = np.asarray(ctas, np.int64)
        f = self._flat(ctas, lanes, cols)
        if f is None:
            self.data[ctas, lanes, cols] = values
            if self.defined is not None:
                self.defined[ctas, lanes, cols] = True
            return
        self.data.reshape(-1)[f] = values
        if self.defined is not None:
            self.defined.reshape(-1)[f] = True


def rects(lane_of, col_of):
    """The rectangles a matrix laid out in TMEM at (``lane_of[r, c]``, ``col_of[r, c]``) offsets
    is made of: a list of (r0, r1, c0, c1, lane, col), rows r0..r1-1 and columns c0..c1-1 at
    lanes lane.. and columns col..; None when the layout has no such form (blocks of 16 rows x
    a quarter of the columns, merged where they continue each other)."""
    lane_of, col_of = np.asarray(lane_of), np.asarray(col_of)
    R, C = lane_of.shape
    if R % 16 or C % 4:
        return None
    bc = C // 4
    grid = []
    for r0 in range(0, R, 16):
        row = []
        for c0 in range(0, C, bc):
            lb, cb = lane_of[r0:r0 + 16, c0:c0 + bc], col_of[r0:r0 + 16, c0:c0 + bc]
            l, c = int(lb[0, 0]), int(cb[0, 0])
            if not ((lb == l + np.arange(16)[:, None]).all() and (cb == c + np.arange(bc)[None, :]).all()):
                return None
            if row and row[-1][4] == l and row[-1][5] + row[-1][3] - row[-1][2] == c:
                row[-1][3] = c0 + bc
            else:
                row.append([r0, r0 + 16, c0, c0 + bc, l, c])
        grid.append(row)
    out = []
    for row in grid:
        for p in row:
            q = next((q for q in out if q[1] == p[0] and q[2:4] == p[2:4] and q[5] == p[5]
                      and q[4] + q[1] - q[0] == p[4]), None)
            if q is not None:
                q[1] = p[1]
            else:
                out.append(p)
    return [tuple(p) for p in out]


def _rect_ok(tm, cta, lane0, col0, pieces, defined):
    """Every cell of the rectangles is in TMEM, allocated (and written, with ``defined``);
    remembered until a dealloc (cells are only freed, or made unwritten, by one)."""
    key = (cta, lane0, col0, tuple(pieces), defined)
    if key in tm.ok_rects:
        return True
    if not _rect_cells_ok(tm, cta, lane0, col0, pieces, defined):
        return False
    if len(tm.ok_rects) < 4096:
        tm.ok_rects.add(key)
    return True


def _rect_cells_ok(tm, cta, lane0, col0, pieces, defined):
    for r0, r1, c0, c1, l, c in pieces:
        la, ca = lane0 + l, col0 + c
        lb, cb = la + r1 - r0, ca + c1 - c0
        if la < 0 or ca < 0 or lb > TMEM_LANES or cb > TMEM_COLUMNS:
            return False
        if not (tm.owner[cta, ca:cb] >= 0).all():
            return False
        if defined and tm.defined is not None and not tm.defined[cta, la:lb, ca:cb].all():
            return False
    return True


def read_rects(tm, ctx, cta, lane0, col0, pieces, shape, rel, what, g, lane_of=None):
    """``tm.read(ctx, cta, lane0 + rel[0], col0 + rel[1], ...)`` of a (rows, cols) matrix that
    ``pieces`` (``rects``) describe at TMEM (lane0, col0), with slices (``rel``: its cells' lane
    and column offsets, for the cell-by-cell read where the slices cannot be used)."""
    if not _rect_ok(tm, cta, lane0, col0, pieces, True):
        return tm.read(ctx, cta, lane0 + rel[0], col0 + rel[1], what, g, lane_of)
    return read_rects_of(tm, (cta,), lane0, col0, pieces, np.empty((1,) + tuple(shape), np.uint32))[0]


def write_rects(tm, ctx, cta, lane0, col0, pieces, values, rel, what, g, lane_of=None):
    """``tm.write`` of the (rows, cols) matrix ``values`` that ``pieces`` describe, with slices
    (``rel``: as for ``read_rects``)."""
    if not _rect_ok(tm, cta, lane0, col0, pieces, False):
        return tm.write(ctx, cta, lane0 + rel[0], col0 + rel[1], values, what, g, lane_of)
    write_rects_of(tm, (cta,), lane0, col0, pieces, values[None])


def _mark_rects(tm, cta, lane0, col0, pieces):
    """The rectangles' cells were written: defined until a dealloc (a k-loop's accumulator marks
    them once)."""
    key = (cta, lane0, col0, tuple(pieces), True)
    if tm.defined is None or key in tm.ok_rects:
        return
    for r0, r1, c0, c1, l, c in pieces:
        tm.defined[cta, lane0 + l:lane0 + l + r1 - r0, col0 + c:col0 + c + c1 - c0] = True
    for _, _, c0, c1, _, c in pieces:        # columns now defined in every lane
        cs = slice(col0 + c, col0 + c + c1 - c0)
        tm.full[cta, cs] = tm.defined[cta, :, cs].all(axis=0)
    if len(tm.ok_rects) < 4096:
        tm.ok_rects.add(key)


def rects_ok(tm, ctas, lane0, col0, pieces, defined) -> bool:
    """Whether ``read_rects`` (``defined``) or ``write_rects`` of the rectangles at (lane0,
    col0) of each CTA of ``ctas`` would use slices, with nothing to report."""
    return all(_rect_ok(tm, c, lane0, col0, pieces, defined) for c in ctas)


def read_rects_of(tm, ctas, lane0, col0, pieces, out):
    """``read_rects`` of the same rectangles in each CTA of ``ctas`` (``rects_ok``) into ``out``
    (uint32 (len(ctas), rows, cols)), returned."""
    for i, cta in enumerate(ctas):
        d = tm.data[cta]
        for r0, r1, c0, c1, l, c in pieces:
            out[i, r0:r1, c0:c1] = d[lane0 + l:lane0 + l + r1 - r0, col0 + c:col0 + c + c1 - c0]
    return out


def write_rects_of(tm, ctas, lane0, col0, pieces, values):
    """``write_rects`` of ``values`` (len(ctas), rows, cols) to the same rectangles in each CTA of
    ``ctas`` (distinct; ``rects_ok``)."""
    for i, cta in enumerate(ctas):
        d = tm.data[cta]
        for r0, r1, c0, c1, l, c in pieces:
            d[lane0 + l:lane0 + l + r1 - r0, col0 + c:col0 + c + c1 - c0] = values[i, r0:r1, c0:c1]
        _mark_rects(tm, cta, lane0, col0, pieces)


def tmem(ctx) -> TensorMemory:
    t = ctx.tmem
    if t is None:
        t = ctx.tmem = TensorMemory(ctx)
    return t
