"""Shared-memory race detection (part of the sanitizer).

The interpreter runs the warps of a CTA in lock step, so a kernel that forgets a ``bar.sync``
between one warp's store to shared memory and another warp's load of it still computes the
right answer here, and the wrong one on a GPU. This tracker makes such bugs visible: every byte
of shared memory remembers the warp that last stored it and the warps that read it, each
stamped with the CTA's *synchronization epoch*, which advances whenever the CTA passes a
barrier (bar.sync / barrier.sync / bar.red, named barriers included), an mbarrier completes a
phase or a cluster barrier completes. Then

* a load of a byte that another warp stored in the current epoch is a read-after-write race;
* a store to a byte that another warp loaded in the current epoch is a write-after-read race;
* a store to a byte that another warp stored in the current epoch is a write-write race, and so
  are stores of one instruction by lanes of different warps to the same byte (the group runs
  several warps). When both store the same value, every order leaves the same bytes: the PTX
  memory model still calls it a data race, but hardware gives the defined result (Triton's
  prologues and histograms zero shared words from every warp), so it is a
  ``SanitizerWarning`` (``RaceTracker.warn``), a ``RaceError`` under ``sanitize="strict"``.

Accesses by the lanes of one warp never race with each other (warps execute in program order;
lanes of one warp storing to one byte in one instruction is the ISA's unspecified-winner
store, not a race between warps),
and atomics and strong loads / stores (``.volatile``, ``.relaxed``, ``.acquire``, ``.release``:
flags that threads poll) are not tracked. Byte granularity: neighbouring bytes owned by different warps never
conflict.

Distributed shared memory: an access of another CTA of the cluster (through a
``.shared::cluster`` address) counts as accessor ``32 + its rank`` (``cluster.REMOTE_WARP``) and
is ordered against the owner's accesses only by what synchronizes the cluster: a completed
``barrier.cluster`` phase with release arrivals, or a phase of the owner's mbarrier.
"""
from __future__ import annotations

import numpy as np

from . import memory as M


class RaceFault(M.MemoryFault):
    pass


class RaceTracker:
    def __init__(self, nbanks: int, stride: int, data=None):
        n = nbanks * stride
        self.stride = stride
        self.data = data                            # the space's bytes (same-value stores)
        self.warn = None                            # (RaceFault, warp, bank) -> None: same-value
                                                    # write-write races warn instead of raising
        self.wwarp = np.full(n, -1, np.int16)       # last writer warp (within its CTA)
        self.wepoch = np.full(n, -1, np.int32)
        self.rmask = np.zeros(n, np.uint64)         # warps (and remote CTAs, bit 32+rank) that read in repoch
        self.repoch = np.full(n, -1, np.int32)
        self.epoch = np.zeros(nbanks, np.int32)
        self._scratch = np.full(n, -1, np.int16)    # per byte: a writer of the current store
        self._bscratch = None                       # per byte: the value it stores (made on first use)

    def advance(self, banks):
        """The CTAs ``banks`` passed a synchronization point."""
        self.epoch[banks] += 1

    def advance_all(self):
        self.epoch += 1

    def _bytes(self, banks, offs, nbytes):
        base = banks.astype(np.int64) * self.stride + offs.astype(np.int64)
        return base[:, None] + np.arange(nbytes)

    def on_load(self, banks, offs, nbytes, warps):
        idx = self._bytes(banks, offs, nbytes)                          # (n, nbytes)
        cur = self.epoch[banks][:, None]
        ww = self.wwarp[idx]
        bad = (ww >= 0) & (ww != warps[:, None]) & (self.wepoch[idx] == cur)
        if bad.any():
            lane, k = np.argwhere(bad)[0]
            addr = int(offs[lane]) + int(k)
            raise RaceFault("race", int(lane), addr,
                            f"it reads shared address {addr:#x}{{where}} that {_who(int(ww[lane, k]), int(warps[lane]))} "
                            f"stored since the last barrier: {_missing(int(ww[lane, k]), int(warps[lane]))} "
                            f"between the store and this load", "shared")
        flat = idx.reshape(-1)
        stale = self.repoch[flat] != np.repeat(cur[:, 0], nbytes)
        if stale.any():
            self.rmask[flat[stale]] = 0
        self.repoch[flat] = np.repeat(cur[:, 0], nbytes)
        bits = np.repeat(np.left_shift(np.uint64(1), warps.astype(np.uint64)), nbytes)
        np.bitwise_or.at(self.rmask, flat, bits)

    def on_store(self, banks, offs, nbytes, warps, vals=None):
        """``vals``: the stored bytes (n, nbytes), to tell same-value write-write races apart
        (None: every write-write race is an error)."""
        idx = self._bytes(banks, offs, nbytes)
        cur = self.epoch[banks][:, None]
        mine = np.left_shift(np.uint64(1), warps.astype(np.uint64))[:, None]
        readers = np.where(self.repoch[idx] == cur, self.rmask[idx], np.uint64(0)) & ~mine
        if readers.any():
            lane, k = np.argwhere(readers != 0)[0]
            addr = int(offs[lane]) + int(k)
            other = int(readers[lane, k])
            w = (other & -other).bit_length() - 1
            raise RaceFault("race", int(lane), addr,
                            f"it overwrites shared address {addr:#x}{{where}} that {_who(w, int(warps[lane]))} loaded "
                            f"since the last barrier: {_missing(w, int(warps[lane]))} between that load and "
                            f"this store", "shared")
        ww = self.wwarp[idx]
        bad = (ww >= 0) & (ww != warps[:, None]) & (self.wepoch[idx] == cur)
        if bad.any():
            new = self._new_bytes(vals, idx.shape)
            diff = bad if new is None else bad & (self.data[idx] != new)
            lane, k = np.argwhere(diff if diff.any() else bad)[0]
            self._ww(offs, lane, k, int(ww[lane, k]), int(warps[lane]), value=not diff.any(), bank=banks[lane])
        if len(warps) > 1 and warps.min() != warps.max():
            # lanes of different warps storing the same byte in this one instruction
            flat = idx.reshape(-1)
            w = np.repeat(warps.astype(np.int16), nbytes)
            self._scratch[flat] = w
            other = self._scratch[flat] != w
            if other.any():
                new = self._new_bytes(vals, idx.shape)
                if new is not None:          # the byte the winning lane stores, against each lane's
                    nb = new.reshape(-1)
                    if self._bscratch is None:
                        self._bscratch = np.zeros(len(self._scratch), np.uint8)
                    win = self._bscratch
                    win[flat] = nb
                    diff = other & (win[flat] != nb)
                else:
                    diff = other
                j = int(np.argmax(diff if diff.any() else other))
                lane, k = divmod(j, nbytes)
                self._ww(offs, lane, k, int(self._scratch[flat[j]]), int(warps[lane]), same=True,
                         value=not diff.any(), bank=banks[lane])
        self.wwarp[idx] = np.broadcast_to(warps[:, None], idx.shape)
        self.wepoch[idx] = np.broadcast_to(cur, idx.shape)

    def _new_bytes(self, vals, shape):
        if vals is None or self.data is None:
            return None
        return np.ascontiguousarray(vals).view(np.uint8).reshape(shape)

    def _ww(self, offs, lane, k, w, me, same=False, value=False, bank=0):
        """Report a write-write race; ``value``: both store the same value (a warning through
        ``self.warn`` where one is set)."""
        addr = int(offs[lane]) + int(k)
        when = "in this same instruction" if same else "since the last barrier"
        fix = "let one warp write it" if same else f"{_missing(w, me)} between the two stores, or let one warp write it"
        if value:
            f = RaceFault("race", int(lane), addr,
                          f"it stores to shared address {addr:#x}{{where}} the value that {_who(w, me)} also "
                          f"stored {when}: a data race by the PTX memory model, but every order leaves the same "
                          f"bytes ({fix})", "shared")
            if self.warn is not None:
                self.warn(f, me, int(bank))
                return
            raise f
        raise RaceFault("race", int(lane), addr,
                        f"it stores to shared address {addr:#x}{{where}} that {_who(w, me)} also stored "
                        f"{when}, a different value, with no barrier between them: which one the byte "
                        f"keeps is undefined ({fix})", "shared")


def _who(w: int, me: int) -> str:
    if w >= 32:
        return f"CTA rank {w - 32} of the cluster (through distributed shared memory)"
    return f"warp {w} of {'the CTA that owns it' if me >= 32 else 'this CTA'}"


def _missing(w: int, me: int) -> str:
    if w >= 32 or me >= 32:
        return ("a barrier.cluster (arrive.release + wait) or an mbarrier wait of the owning CTA "
                "is missing")
    return "a bar.sync (__syncthreads) is missing"
