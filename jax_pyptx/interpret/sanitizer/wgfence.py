"""``wgmma.fence`` (part of the sanitizer): the ordering the ISA asks for between ordinary
register accesses and ``wgmma.mma_async``.

PTX ISA, ``wgmma.fence``: every warp of a warpgroup must execute a ``wgmma.fence``

* before the warpgroup's first ``wgmma.mma_async``, and
* between a register access by a thread of the warpgroup and a ``wgmma.mma_async`` that
  accesses the same register as its accumulator or as a register holding a fragment of A,
  except for accumulator accesses between ``wgmma.mma_async`` instructions of the same shape
  (those are ordered by default);

otherwise the behaviour is undefined (shared memory written by the generic proxy needs
``fence.proxy.async`` instead: ``async_proxy``). ptxas (CUDA 13.0) repairs such code: it
injects a ``warpgroup.arrive`` where a fence is missing and says so in an info line (C7519,
"warpgroup.arrive is injected ... to allow use of registers in GMMA"), so the hardware computes
the right values at the cost of that wait. A missing fence is therefore a ``SanitizerWarning``
(an ``AsyncHazardError`` under ``sanitize="strict"``), once per ``mma_async`` instruction; the
classic case is a flash-attention rescale of the accumulator between two wgmma groups, or A
fragments loaded after the loop's single fence.

The check: once a kernel executes a ``wgmma.fence`` or a ``wgmma.mma_async``, every write by an
ordinary instruction (not a ``wgmma.*`` one: a ``wgmma.wait_group`` delivering accumulators is
the same-shape chain) to a register that some ``wgmma.mma_async`` of the program uses as its
accumulator or A fragment marks the writing threads; a ``wgmma.fence`` clears its threads'
marks, and so does an ``mma_async`` for its accumulator (which it overwrites). A ``wgmma.mma_async`` that reads a marked register for one of its threads (its A
registers; its accumulator when scale-d is true), or runs in a thread that never executed a
``wgmma.fence``, is reported. Not reported, since the hardware result is defined:
an earlier *read* of the register (an in-order read has completed before the asynchronous write
can land), and an accumulator written before an ``mma_async`` with scale-d false, which does not
read it (nvcc places the zeroing of ``float d[N] = {}`` after the ``wgmma.fence`` of inline asm,
and such code runs right on hardware).
"""
from __future__ import annotations

import numpy as np

from ...errors import AsyncHazardError


def watched(prog) -> set:
    """The register keys some ``wgmma.mma_async`` of ``prog`` uses as accumulator or A
    fragment (filled in as the instructions are decoded)."""
    return prog.wgmma_regs


class FenceState:
    """Per batch: which threads executed a ``wgmma.fence`` and which watched registers an
    ordinary instruction wrote since the writing thread's last fence.

    Kept as epochs, so that a fence costs one store whatever was written: a fence stamps its
    threads with a new epoch (``fence_at``); a write stamps the register's threads with the
    epoch after the current one (``stamp[key]``), and ``last[key]`` is its latest stamp. A
    register is written since a thread's last fence when its stamp there is above the thread's
    fence epoch; an ``mma_async`` clears its accumulator's stamps (the same-shape chain).

    A write is recorded as ``(slots, epoch)`` in ``pend[key]`` and stamped into the array only
    when a check or a clean needs the register's stamps (``_stamps``): a register rewritten and
    fenced every loop iteration (a flash-attention rescale) costs no array store. A write by the
    same slots as an earlier pending one (the same ``Group.ok``, which groups of one slot set
    share, or the same slot array) replaces it, and a register with more than ``PEND`` pending
    writes is stamped, so the lists stay short."""

    PEND = 4                      # pending writes of one register before they are stamped

    def __init__(self, ctx):
        self.keys = watched(ctx.prog)
        self.epoch = 1
        self.fence_at = np.zeros(ctx.N, np.int64)   # per slot: epoch of its last wgmma.fence (0: none)
        self.stamp = {}           # key -> int64 (N,): epoch of the slot's last write (0: none)
        self.pend = {}            # key -> [(token, slots, epoch)]: writes not yet in stamp[key]
        self.last = {}            # key -> its greatest stamp
        self.top = 0              # the greatest stamp of all
        self.src = {}             # key -> Decoded of the last such write
        self._at = None           # (slots, epoch, fence_at there, its least): ``_fences``

    def wrote(self, ctx, key, g):
        """``Context.write`` of a watched register by the threads of ``g``."""
        d = ctx.cur
        if d is not None and d.ins.opcode.startswith("wgmma."):
            return                # wgmma.wait_group delivering accumulators
        self._wrote(((key, d),), g)

    def wrote_each(self, finals, g):
        """The writes of the watched registers of ``finals`` (``(key, Decoded)`` pairs, in
        order: a segment's results written at once, ``Context.write_blocks``) by the threads of
        ``g``, each stamped with the epoch after the current one (the class doc)."""
        self._wrote(_watched(finals, self.keys), g)

    def _wrote(self, pairs, g):
        """``wrote_each`` of ``pairs`` (``(key, Decoded)``, every key watched)."""
        tok = getattr(g, "ok", None)
        idx = g.idx
        if tok is None:
            tok = idx
        if not pairs:
            return
        pend = self.pend
        e = self.epoch + 1
        w = (tok, idx, e)
        keys = [k for k, _ in pairs]
        self.last.update(dict.fromkeys(keys, e))
        self.top = e
        self.src.update(pairs)
        for key in keys:
            p = pend.get(key)
            if p is None:
                pend[key] = [w]
            elif p[-1][0] is tok:   # the same slots written again: the older write is covered
                p[-1] = w
            else:
                for j, x in enumerate(p):
                    if x[0] is tok:
                        del p[j]
                        break
                p.append(w)
                if len(p) > self.PEND:
                    self._stamps(key)

    def _stamps(self, key):
        """The stamp array of ``key`` with its pending writes applied (made on first use)."""
        m = self.stamp.get(key)
        if m is None:
            m = self.stamp[key] = np.zeros(len(self.fence_at), np.int64)
        p = self.pend.pop(key, None)
        if p:
            for _, idx, e in p:
                m[idx] = e
        return m

    def wrote_all(self, ctx, keys, g):
        """``wrote`` for each watched register of ``keys`` (``Context.write_rows``)."""
        d = ctx.cur
        if (d is not None and d.ins.opcode.startswith("wgmma.")) or self.keys.isdisjoint(keys):
            return
        watched = self.keys
        self._wrote(tuple((k, d) for k in keys if k in watched), g)

    def fence(self, g):
        self.epoch += 1
        self.fence_at[g.idx] = self.epoch

    def _fences(self, g):
        """(fence epochs of ``g``'s threads, the least of them): the checks and the clean of one
        ``mma_async`` (and of a run of them between fences) look them up once. Kept for the slot
        array (held with the answer, so its identity is not reused) while no fence ran."""
        c = self._at
        if c is None or c[0] is not g.idx or c[1] != self.epoch:
            at = self.fence_at[g.idx]
            c = self._at = (g.idx, self.epoch, at, int(at.min()))
        return c[2], c[3]

    def _dirty(self, keys, since):
        """The keys of ``keys`` some thread may have written after ``since`` (its oldest fence)."""
        if self.top <= since:         # nothing watched was written since
            return []
        last = self.last
        return [k for k in keys if last.get(k, 0) > since]

    def quiet(self, g) -> bool:
        """Whether every thread of ``g`` passed a fence after the last watched write of any
        thread: ``check`` and ``clean`` then find nothing for ``g`` (or any part of it), until
        a register is written or a fence runs."""
        since = self._fences(g)[1]
        return bool(since) and self.top <= since

    def clean(self, g, keys):
        """The threads of ``g`` hold ``keys`` ordered for the next ``mma_async`` (a fence, or an
        ``mma_async`` that writes them: the same-shape accumulator chain)."""
        if not self.last:
            return
        for key in self._dirty(keys, self._fences(g)[1]):
            self._stamps(key)[g.idx] = 0

    def check(self, ctx, g, acc_keys, a_keys):
        """Before a ``wgmma.mma_async`` of ``g`` reads ``acc_keys`` / ``a_keys``: warn (module
        doc) and go on."""
        at, since = self._fences(g)
        if not since:
            ctx.warn(AsyncHazardError,
                     "no wgmma.fence before this warpgroup's first wgmma.mma_async: the PTX ISA requires "
                     f"one (it orders the earlier register writes before the tensor core reads them); {_PTXAS}",
                     g, int(np.argmin(at)))
            return
        if self.top <= since:
            return
        for what, keys in (("accumulator", acc_keys), ("A-fragment", a_keys)):
            for key in self._dirty(keys, since):
                mine = self._stamps(key)[g.idx] > at
                if mine.any():
                    ctx.warn(AsyncHazardError,
                             f"this wgmma.mma_async reads {what} register {_name(key)}, which "
                             f"{_where(self.src.get(key))} wrote after the warpgroup's last wgmma.fence: "
                             f"the PTX ISA requires a wgmma.fence between a register access and a "
                             f"wgmma.mma_async that accesses the same register; {_PTXAS}", g,
                             int(np.argmax(mine)))
                    return


_PTXAS = ("ptxas repairs it by injecting a warpgroup.arrive (info C7519: \"warpgroup.arrive is injected "
          "... to allow use of registers in GMMA\"), so the hardware computes the right values, at the "
          "cost of that wait (put a wgmma.fence after the last write instead)")


#: id(finals) -> (finals, watched keys' count, its watched pairs): a segment's results, filtered
#: once (``_watched``)
_WATCHED: dict = {}


def _watched(finals, keys):
    """The pairs of ``finals`` (a segment's ``(key, Decoded)`` results, a tuple the segment keeps)
    whose register is watched (``keys``, the program's set, which only grows), filtered once per
    tuple and set size."""
    got = _WATCHED.get(id(finals))
    if got is None or got[0] is not finals or got[1] != len(keys):
        if len(_WATCHED) > 1024:
            _WATCHED.clear()
        got = _WATCHED[id(finals)] = (finals, len(keys), tuple(kd for kd in finals if kd[0] in keys))
    return got[2]


def state(ctx) -> FenceState | None:
    """The batch's ``FenceState`` (made on first use); None without the sanitizer."""
    if not ctx.sanitize:
        return None
    st = ctx.wgfence
    if st is None:
        st = ctx.wgfence = FenceState(ctx)
    return st


def _name(key):
    return key.split("::")[-1].split("#")[0]


def _where(d):
    if d is None:
        return "an instruction"
    loc = getattr(d.ins, "loc", None)
    return f"`{d.text}` ({loc})" if loc is not None else f"`{d.text}` ({d.where()})"
