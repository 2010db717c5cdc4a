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
* a store to a byte that another warp stored in the current epoch is a write-write race, even
  when both store the same value (the PTX memory model makes any two conflicting accesses
  unordered by synchronization a data race, whatever they store), and so are stores of one
  instruction by lanes of different warps to the same byte (the group runs several warps).

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
    def __init__(self, nbanks: int, stride: int):
        n = nbanks * stride
        self.stride = stride
        self.wwarp = np.full(n, -1, np.int16)       # last writer warp (within its CTA)
        self.wepoch = np.full(n, -1, np.int32)
        self.rmask = np.zeros(n, np.uint64)         # warps (and remote CTAs, bit 32+rank) that read in repoch
        self.repoch = np.full(n, -1, np.int32)
        self.epoch = np.zeros(nbanks, np.int32)
        self._scratch = np.full(n, -1, np.int16)    # per byte: a writer of the current store

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

    def on_store(self, banks, offs, nbytes, warps):
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
            lane, k = np.argwhere(bad)[0]
            self._ww(offs, lane, k, int(ww[lane, k]), int(warps[lane]))
        if len(warps) > 1 and warps.min() != warps.max():
            # lanes of different warps storing the same byte in this one instruction
            flat = idx.reshape(-1)
            w = np.repeat(warps.astype(np.int16), nbytes)
            self._scratch[flat] = w
            other = self._scratch[flat] != w
            if other.any():
                j = int(np.argmax(other))
                lane, k = divmod(j, nbytes)
                self._ww(offs, lane, k, int(self._scratch[flat[j]]), int(warps[lane]), same=True)
        self.wwarp[idx] = np.broadcast_to(warps[:, None], idx.shape)
        self.wepoch[idx] = np.broadcast_to(cur, idx.shape)

    def _ww(self, offs, lane, k, w, me, same=False):
        addr = int(offs[lane]) + int(k)
        when = "in this same instruction" if same else "since the last barrier"
        fix = "let one warp write it" if same else f"{_missing(w, me)} between the two stores, or let one warp write it"
        raise RaceFault("race", int(lane), addr,
                        f"it stores to shared address {addr:#x}{{where}} that {_who(w, me)} also stored "
                        f"{when}: two warps writing one byte with no barrier between them is a data "
                        f"race even when they write the same value ({fix})", "shared")


def _who(w: int, me: int) -> str:
    if w >= 32:
        return f"CTA rank {w - 32} of the cluster (through distributed shared memory)"
    return f"warp {w} of {'the CTA that owns it' if me >= 32 else 'this CTA'}"


def _missing(w: int, me: int) -> str:
    if w >= 32 or me >= 32:
        return ("a barrier.cluster (arrive.release + wait) or an mbarrier wait of the owning CTA "
                "is missing")
    return "a bar.sync (__syncthreads) is missing"
