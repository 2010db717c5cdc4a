"""Schedules: when asynchronous work completes, and which warps run next (``launch(...,
schedule=, seed=)`` and every path built on it).

A GPU gives an asynchronous operation no fixed completion time: anything from its issue to the
wait that must observe it is legal, and so is any interleaving of the warps. A kernel that is
right only under one of them (it reads a TMA destination before its mbarrier phase, waits on the
wrong parity, reads a wgmma operand stage it already refilled) breaks on hardware sooner or
later. The interpreter can run three schedules:

* ``"eager"`` (the default): an operation completes at its earliest legal point (a TMA load
  writes shared memory when issued, a ``wgmma.mma_async`` reads its shared-memory operands when
  issued), and the scheduler runs the lowest-PC group of threads first;
* ``"late"``: an operation completes at the last point the ISA allows: a bulk / TMA copy into
  shared memory lands when the mbarrier phase that counts its bytes completes, and that phase
  is only completed by a wait that needs it (a wait that the phase's parity already satisfies,
  e.g. one on the wrong parity, does not pull it in); a ``wgmma.mma_async`` reads its operands
  when the ``wgmma.wait_group`` that retires it executes; a ``tcgen05.mma`` or ``tcgen05.cp``
  reads its operands and writes Tensor Memory when the ``tcgen05.commit`` that tracks it
  arrives, and that arrival too waits for a thread that needs its mbarrier; a ``tcgen05.st``
  writes its cells at the thread's ``tcgen05.wait::st``; an ``st.async`` lands, as a copy does,
  when a wait needs the phase of the mbarrier that counts it; a bulk or TMA store (shared to
  global) reads its source when ``cp.async.bulk.wait_group`` retires its bulk async-group;
* ``"random"``: each such operation is eager or late at random, and the scheduler picks the next
  group of threads at random, from ``numpy.random.default_rng(seed)``: reproducible, so a run
  that fails can be replayed with the same ``seed``.

``cp.async`` (Ampere) already completes at its wait in every schedule, and ``tcgen05.ld``
delivers at issue in every schedule (the register scoreboard makes a reader wait for it on
hardware: ``asyncregs``). A report raised under a
schedule other than ``"eager"`` names it (and the seed) so that it can be replayed.
"""
from __future__ import annotations

import numpy as np

from ...errors import PtxValueError

MODES = ("eager", "late", "random")


class Schedule:
    """The schedule of one launch (``Context.schedule``)."""

    __slots__ = ("mode", "seed", "rng")

    def __init__(self, mode: str = "eager", seed=None):
        self.mode, self.seed = mode, seed
        self.rng = np.random.default_rng(seed) if mode == "random" else None

    @property
    def eager(self) -> bool:
        return self.mode == "eager"

    def late(self) -> bool:
        """Whether the asynchronous operation being issued completes late."""
        if self.mode == "eager":
            return False
        if self.mode == "late":
            return True
        return bool(self.rng.integers(2))

    def pick(self, runnable):
        """The group to run next under ``"random"`` (None: the usual choice)."""
        if self.rng is None or len(runnable) < 2:
            return None
        return runnable[int(self.rng.integers(len(runnable)))]

    def describe(self) -> str:
        if self.mode == "eager":
            return ""
        if self.mode == "late":
            return "schedule='late'"
        return f"schedule='random', seed={self.seed}"


EAGER = Schedule()


def make_schedule(schedule="eager", seed=None) -> Schedule:
    """A ``Schedule`` from the ``schedule=`` / ``seed=`` arguments, or a ``PtxValueError`` naming
    the parameter, what was given and what is allowed."""
    if isinstance(schedule, Schedule):
        return schedule
    if not isinstance(schedule, str) or schedule not in MODES:
        raise PtxValueError(f"schedule={schedule!r} is not a schedule: use 'eager' (asynchronous work "
                            f"completes as early as allowed), 'late' (as late as allowed) or 'random' "
                            f"(either, and warps in random order, from seed=)")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise PtxValueError(f"seed={seed!r} is not a seed: give a non-negative int")
        if schedule != "random":
            raise PtxValueError(f"seed={seed} is only used with schedule='random' (schedule={schedule!r})")
        seed = int(seed)
    elif schedule == "random":
        seed = 0
    return EAGER if schedule == "eager" else Schedule(schedule, seed)


def name_schedule(err, schedule: Schedule):
    """Add the schedule (and seed) that showed ``err`` to its message."""
    what = schedule.describe()
    if what and what not in str(err):
        text = f"{err} [under {what}: replay with these arguments]"
        err.args = (text,) + tuple(err.args[1:])
        if hasattr(err, "message"):
            err.message = f"{err.message} [under {what}: replay with these arguments]"
    return err
