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


class NamedBarrier:
    """A named CTA barrier (``ptx.named_barrier(id, count=n)``): ``.sync()`` waits at it
    (``bar.sync id, count;``), ``.arrive()`` signals without waiting (``bar.arrive id,
    count;``, the producer side)."""

    __slots__ = ("barrier_id", "count")

    def __init__(self, barrier_id, count=None):
        self.barrier_id, self.count = barrier_id, count

    def sync(self, *, pred=None):
        """``bar.sync id{, count}``."""
        sync(self.barrier_id, self.count, pred=pred)

    def arrive(self, *, pred=None):
        """``bar.arrive id, count`` (a count is required)."""
        arrive(self.barrier_id, self.count, pred=pred)

    def __repr__(self):
        return f"NamedBarrier({self.barrier_id!r}, count={self.count!r})"


def named_barrier(barrier_id, *, count=None) -> NamedBarrier:
    """A :class:`NamedBarrier` (id 0..15 or a register; ``count`` threads, a multiple of 32).

    Examples:
        >>> named_barrier(1, count=128)
        NamedBarrier(1, count=128)
    """
    from ...errors import PtxValueError
    from ..context import user_loc

    if isinstance(barrier_id, int) and not 0 <= barrier_id < 16:
        raise PtxValueError(f"ptx.named_barrier: barrier_id={barrier_id!r} is not allowed; "
                            f"allowed: 0..15 or a register", loc=user_loc())
    if isinstance(count, int) and (count <= 0 or count % 32):
        raise PtxValueError(f"ptx.named_barrier: count={count!r} must be a positive multiple "
                            f"of 32", loc=user_loc())
    return NamedBarrier(barrier_id, count)


__all__ = ["sync", "arrive", "red_popc", "red_and", "red_or", "warp_sync", "NamedBarrier",
           "named_barrier"]
