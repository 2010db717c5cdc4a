"""``ptx.tma``: rank-3 "64-column stripe" TMA copies (Hopper).

A ``Tile(..., tma_rank=3, tma_box=(rows, cols))`` tensor's descriptor sees a 2-d tensor as
``(cols/64, rows, 64)`` stripes; these address it by ``(row, col)`` with coordinates
``{0, row, col/64}``::

    ptx.tma.load_3d(sA[s], A.tma_desc(), row=m0, col=k0, mbar=full[s])
    ptx.tma.store_3d(C.tma_desc(), sC, row=m0, col=n0)

A register ``col`` is shifted (``shr.u32 c, col, 6;``); an int one divided by 64.
"""
from __future__ import annotations

from ...errors import PtxTypeError, PtxValueError
from ...ir.nodes import Addr, Vec
from ...types import u32
from ..context import user_loc
from ..values import Register, Special, as_operand, materialize
from ._wrap import addr as _addr, emit, new

__all__ = ["load_3d", "load_3d_multicast", "store_3d"]

_LOAD = "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
_STORE = "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group"


def _coord(fn, c):
    if isinstance(c, Special):
        c = materialize(c)
    if isinstance(c, (Register, int)) and not isinstance(c, bool):
        return as_operand(c, u32)
    if isinstance(c, str):
        from ..values import str_operand

        return str_operand(c, u32)
    raise PtxTypeError(f"{fn}: a coordinate must be a register, an int or a name, got {c!r}",
                       loc=user_loc(4))


def _coords(fn, row, col, coords):
    if coords is not None:
        if len(coords) != 3:
            raise PtxValueError(f"{fn}: coords must have 3 entries, got {len(coords)}",
                                loc=user_loc(3))
        return Vec(tuple(_coord(fn, c) for c in coords))
    if row is None or col is None:
        raise PtxTypeError(f"{fn}: give row= and col= (or coords=)", loc=user_loc(3))
    if isinstance(col, int) and not isinstance(col, bool):
        c = col // 64
    else:
        if isinstance(col, Special):
            col = materialize(col)
        if not isinstance(col, Register):
            raise PtxTypeError(f"{fn}: col must be a register or an int, got {col!r}",
                               loc=user_loc(3))
        c = new(u32)
        emit("shr.u32", (c, col, 6))
    return Vec((_coord(fn, 0), _coord(fn, row), _coord(fn, c)))


def _tmap(fn, src, vec):
    base = _addr(src, fn, "src").base
    return Addr(base, 0, (vec,))


def load_3d(dst, src, row=None, col=None, mbar=None, coords=None, *, pred=None):
    """``cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    [dst], [src, {0, row, col/64}], [mbar];``."""
    fn = "ptx.tma.load_3d"
    if mbar is None:
        raise PtxValueError(f"{fn}: mbar= is required: a tensor load completes on an "
                            f"mbarrier", loc=user_loc())
    vec = _coords(fn, row, col, coords)
    emit(_LOAD, (_addr(dst, fn, "dst"), _tmap(fn, src, vec), _addr(mbar, fn, "mbar")), pred)


def load_3d_multicast(dst, src, row=None, col=None, mbar=None, mask=None, coords=None, *,
                      issuer=None, pred=None):
    """``load_3d`` into every CTA of ``mask`` (``.multicast::cluster``, a u16 CTA mask).
    ``issuer``: an int CTA rank (only that CTA issues it: guard ``%cluster_ctarank ==
    issuer``) or a predicate guard; not together with ``pred``."""
    fn = "ptx.tma.load_3d_multicast"
    if issuer is not None and pred is not None:
        raise PtxValueError(f"{fn}: give issuer= or pred=, not both", loc=user_loc())
    if mbar is None or mask is None:
        raise PtxValueError(f"{fn}: mbar= and mask= are required", loc=user_loc())
    if isinstance(issuer, int) and not isinstance(issuer, bool):
        from .cluster import rank

        pred = rank(issuer)
    elif issuer is not None:
        pred = issuer
    vec = _coords(fn, row, col, coords)
    emit(_LOAD + ".multicast::cluster",
         (_addr(dst, fn, "dst"), _tmap(fn, src, vec), _addr(mbar, fn, "mbar"), mask), pred)


def store_3d(dst, src, row=None, col=None, coords=None, *, pred=None):
    """``cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [dst, {0, row, col/64}],
    [src];`` (``dst`` the tensor map, ``src`` shared memory)."""
    fn = "ptx.tma.store_3d"
    vec = _coords(fn, row, col, coords)
    emit(_STORE, (_tmap(fn, dst, vec), _addr(src, fn, "src")), pred)
