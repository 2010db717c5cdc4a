"""``ptx.bar``: CTA barriers, named and counted. ``ptx.bar.sync()`` is ``bar.sync 0``;
``ptx.bar.sync(1, 128)`` a named barrier for 128 threads; ``aligned=False`` gives the
``barrier.*`` spelling (threads may diverge). ``arrive``, ``red_popc``, ``red_and``,
``red_or``; ``warp_sync(mask)`` is ``bar.warp.sync``."""
from __future__ import annotations

from ...types import pred as pred_t, u32
from ._wrap import emit, new


def _name(op, aligned):
    return f"bar.{op}" if aligned is None else (f"barrier.{op}.aligned" if aligned else
                                                f"barrier.{op}")


def sync(barrier=0, count=None, *, aligned=None, pred=None):
    """``bar.sync a{, b}`` (``aligned=True``: ``barrier.sync.aligned``, False: ``barrier.sync``)."""
    emit(_name("sync", aligned), (barrier,) + ((count,) if count is not None else ()), pred)


def arrive(barrier, count, *, aligned=None, pred=None):
    """``bar.arrive a, b``: signal without waiting (producer side of a named barrier)."""
    emit(_name("arrive", aligned), (barrier, count), pred)


def red_popc(barrier, p, count=None, *, aligned=None, out=None, pred=None):
    """``bar.red.popc.u32 d, a{, b}, {!}p``: count of threads with p true."""
    out = out or new(u32)
    op = "bar.red.popc.u32" if aligned is None else (
        "barrier.red.popc.aligned.u32" if aligned else "barrier.red.popc.u32")
    emit(op, (out, barrier) + ((count,) if count is not None else ()) + (p,), pred)
    return out


def _red_pred(kind):
    def fn(barrier, p, count=None, *, aligned=None, out=None, pred=None):
        out = out or new(pred_t)
        op = f"bar.red.{kind}.pred" if aligned is None else (
            f"barrier.red.{kind}.aligned.pred" if aligned else f"barrier.red.{kind}.pred")
        emit(op, (out, barrier) + ((count,) if count is not None else ()) + (p,), pred)
        return out
    fn.__name__ = f"red_{kind}"
    fn.__doc__ = f"``bar.red.{kind}.pred p, a{{, b}}, {{!}}c``: {kind} of c over the CTA."
    return fn


red_and = _red_pred("and")
red_or = _red_pred("or")


def warp_sync(mask=0xFFFFFFFF, *, pred=None):
    """``bar.warp.sync membermask``."""
    emit("bar.warp.sync", (mask,), pred)


__all__ = ["sync", "arrive", "red_popc", "red_and", "red_or", "warp_sync"]
