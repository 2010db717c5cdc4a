"""``ptx.misc``: scheduling and debugging. ``nanosleep``, ``griddepcontrol_wait``,
``griddepcontrol_launch_dependents``, ``setmaxnreg``, ``trap``, ``brkpt``, ``pmevent``."""
from __future__ import annotations

from ._wrap import emit, int_range


def nanosleep(ns, *, pred=None):
    """``nanosleep.u32 t`` (0..1000000 ns hint)."""
    if isinstance(ns, int):
        int_range("ptx.misc.nanosleep", "ns", ns, 0, 1_000_000)
    emit("nanosleep.u32", (ns,), pred)


def griddepcontrol_wait(*, pred=None):
    """``griddepcontrol.wait``: wait for the prerequisite grids (programmatic dependent
    launch)."""
    emit("griddepcontrol.wait", (), pred)


def griddepcontrol_launch_dependents(*, pred=None):
    """``griddepcontrol.launch_dependents``."""
    emit("griddepcontrol.launch_dependents", (), pred)


def setmaxnreg(count: int, *, inc: bool = True, pred=None):
    """``setmaxnreg.inc|dec.sync.aligned.u32 count`` (24..256, multiple of 8; sm_90a)."""
    int_range("ptx.misc.setmaxnreg", "count", count, 24, 256, 8)
    emit(f"setmaxnreg.{'inc' if inc else 'dec'}.sync.aligned.u32", (count,), pred)


def trap(*, pred=None):
    """``trap``."""
    emit("trap", (), pred)


def brkpt(*, pred=None):
    """``brkpt``."""
    emit("brkpt", (), pred)


def pmevent(n: int, *, mask: bool = False, pred=None):
    """``pmevent a`` (0..15) or ``pmevent.mask a`` (16-bit mask)."""
    int_range("ptx.misc.pmevent", "n", n, 0, 0xFFFF if mask else 15)
    emit("pmevent.mask" if mask else "pmevent", (n,), pred)


__all__ = ["nanosleep", "griddepcontrol_wait", "griddepcontrol_launch_dependents",
           "setmaxnreg", "trap", "brkpt", "pmevent"]
