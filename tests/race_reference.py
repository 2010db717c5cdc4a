"""The reference for tests/test_interp_race_bookkeeping.py: the sanitizer's race bookkeeping as
it was kept byte by byte (``sanitizer.RaceTracker`` and ``async_proxy``'s range checks at commit
bc5688f, verbatim), before issue 24 moved it to per-access records and 16-byte chunk stamps. The
new bookkeeping must raise, warn and pass exactly where this one does."""
from __future__ import annotations

import numpy as np

from jax_pyptx.interpret.state import memory as M
from jax_pyptx.interpret.sanitizer.smem_races import _IV_LIMIT, _MISSING_WARP, _MULTI, RaceFault, _missing, _who


class RefTracker:
    """The per-byte race tracker as it was before per-access bookkeeping (commit bc5688f),
    kept verbatim as the reference the new bookkeeping must agree with."""

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
        self.iv = None                              # lanes of one warp: made by the first intra_* call

    def advance(self, banks):
        """The CTAs ``banks`` passed a synchronization point."""
        self.epoch[banks] += 1
        if self.iv is not None:
            W = len(self.iv) // len(self.epoch)
            b = np.asarray(banks, np.int64).reshape(-1)
            self._renew((b[:, None] * W + np.arange(W)).reshape(-1))

    def advance_all(self):
        self.epoch += 1
        if self.iv is not None:
            self._renew(np.arange(len(self.iv)))

    # ------------------------------------------------------------------ lanes of one warp
    def warp_synced(self, gwarps):
        """The warps ``gwarps`` (slot // 32 in the batch) executed a warp-synchronizing
        instruction: their lanes' earlier shared accesses are ordered before their later ones."""
        if self.iv is not None:
            self._renew(np.unique(gwarps))

    def _renew(self, gw):
        if self._iv_next + len(gw) >= _IV_LIMIT:        # ids run out: forget every interval
            self.w_tag.fill(-1)
            self.r_tag.fill(-1)
            self._iv_next = len(self.iv)
            self.iv[:] = np.arange(len(self.iv))
        self.iv[gw] = self._iv_next + np.arange(len(gw), dtype=np.int32)
        self._iv_next += len(gw)
        self.iv_st[gw] = False
        self.iv_ld[gw] = False

    def _intra_state(self, nwarps):
        if self.iv is None:
            n = len(self.wwarp)
            self.iv = np.arange(nwarps, dtype=np.int32)     # per warp of the batch: its interval id
            self._iv_next = nwarps
            self.w_tag = np.full(n, -1, np.int32)           # per byte: interval * 32 + lane of its last store
            self.r_tag = np.full(n, -1, np.int32)           # interval * 64 + lane of its readers (MULTI: several)
            self.iv_st = np.zeros(nwarps, bool)             # per warp: it stored in its interval
            self.iv_ld = np.zeros(nwarps, bool)             # ... it loaded (else nothing to compare with)

    def intra_load(self, banks, offs, nbytes, gwarps, lanes, nwarps, idx=None):
        """A load by lanes ``lanes`` of batch warps ``gwarps`` (module doc); ``idx``: its bytes
        (``_bytes``) when the caller has them."""
        self._intra_state(nwarps)
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
        iv = self.iv[gwarps]
        lanes = lanes.astype(np.int32)
        if self.iv_st[gwarps].any():
            wt = self.w_tag[idx]
            bad = ((wt >> 5) == iv[:, None]) & ((wt & 31) != lanes[:, None])
        else:
            bad = None
        if bad is not None and bad.any():
            lane, k = np.argwhere(bad)[0]
            addr = int(offs[lane]) + int(k)
            raise RaceFault("race", int(lane), addr,
                            f"it reads shared address {addr:#x}{{where}} that lane {int(wt[lane, k]) & 31} of the "
                            f"same warp stored since the warp last synchronized: {_MISSING_WARP} between the "
                            f"store and this load", "shared")
        flat = idx.reshape(-1)
        mine = np.repeat(iv * 64 + lanes, nbytes)          # this warp's interval and the reading lane
        if self.iv_ld[gwarps].any():
            old = self.r_tag[flat]
            other = ((old >> 6) == (mine >> 6)) & (old != mine)  # another lane read it in this interval
            tag = np.where(other, (mine & ~63) | _MULTI, mine)
        else:
            tag = mine
        self.r_tag[flat] = tag
        self.iv_ld[gwarps] = True
        now = self.r_tag[flat]
        dup = ((now >> 6) == (mine >> 6)) & (now != tag)     # lanes of this warp in this instruction
        if dup.any():
            self.r_tag[flat[dup]] = (mine[dup] & ~63) | _MULTI

    def intra_store(self, banks, offs, nbytes, gwarps, lanes, nwarps, vals=None, idx=None):
        """A store by lanes ``lanes`` of batch warps ``gwarps``; ``vals`` as for ``on_store``."""
        self._intra_state(nwarps)
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
        iv = self.iv[gwarps][:, None]
        lanes = lanes.astype(np.int32)[:, None]
        if self.iv_ld[gwarps].any():
            rt = self.r_tag[idx]
            war = ((rt >> 6) == iv) & ((rt & 63) != lanes)
        else:
            war = None
        if war is not None and war.any():
            lane, k = np.argwhere(war)[0]
            addr = int(offs[lane]) + int(k)
            r = int(rt[lane, k]) & 63
            who = "other lanes" if r == _MULTI else f"lane {r}"
            raise RaceFault("race", int(lane), addr,
                            f"it overwrites shared address {addr:#x}{{where}} that {who} of the same warp "
                            f"loaded since the warp last synchronized: {_MISSING_WARP} between that load and "
                            f"this store", "shared")
        if self.iv_st[gwarps].any():
            wt = self.w_tag[idx]
            bad = ((wt >> 5) == iv) & ((wt & 31) != lanes)
        else:
            bad = None
        if bad is not None and bad.any():
            new = self._new_bytes(vals, idx.shape)
            diff = bad if new is None else bad & (self.data[idx] != new)
            lane, k = np.argwhere(diff if diff.any() else bad)[0]
            addr = int(offs[lane]) + int(k)
            other = int(wt[lane, k]) & 31
            if not diff.any():
                f = RaceFault("race", int(lane), addr,
                              f"it stores to shared address {addr:#x}{{where}} the value that lane {other} of the "
                              f"same warp also stored since the warp last synchronized: a data race by the PTX "
                              f"memory model, but every order leaves the same bytes ({_MISSING_WARP} between "
                              f"the two stores, or let one lane write it)", "shared")
                if self.warn is None:
                    raise f
                self.warn(f, int(gwarps[lane]) % (nwarps // len(self.epoch)), int(banks[lane]))
            else:
                raise RaceFault("race", int(lane), addr,
                                f"it stores to shared address {addr:#x}{{where}} that lane {other} of the same "
                                f"warp also stored since the warp last synchronized, a different value: which "
                                f"one the byte keeps is undefined ({_MISSING_WARP} between the two stores, or "
                                f"let one lane write it)", "shared")
        self.w_tag[idx] = np.broadcast_to(iv * 32 + lanes, idx.shape)
        self.iv_st[gwarps] = True

    def _bytes(self, banks, offs, nbytes):
        base = banks.astype(np.int64) * self.stride + offs.astype(np.int64)
        return base[:, None] + np.arange(nbytes)

    def on_load(self, banks, offs, nbytes, warps, idx=None):
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)                      # (n, nbytes)
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

    def on_store(self, banks, offs, nbytes, warps, vals=None, idx=None):
        """``vals``: the stored bytes (n, nbytes), to tell same-value write-write races apart
        (None: every write-write race is an error); ``idx``: the bytes when the caller has them."""
        if idx is None:
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


def ref_race_store_range(race, bank: int, lo: int, hi: int, warp: int):
    """A store by ``warp`` of CTA ``bank`` to its shared bytes ``[lo, hi)``."""
    sl = slice(bank * race.stride + lo, bank * race.stride + hi)
    cur = race.epoch[bank]
    t = race.rmask.dtype.type
    readers = np.where(race.repoch[sl] == cur, race.rmask[sl], t(0)) & ~t(1 << int(warp))
    if readers.any():
        k = int(np.argmax(readers != 0))
        other = int(readers[k])
        w = (other & -other).bit_length() - 1
        who = f"warp {w} of this CTA" if w < 32 else f"CTA rank {w - 32} of the cluster"
        raise M.MemoryFault("race", 0, lo + k,
                            f"it overwrites shared address {lo + k:#x}{{where}} that {who} loaded since "
                            f"the last barrier: a bar.sync (or the mbarrier wait that frees the buffer) is "
                            f"missing between that load and this copy", "shared")
    race.wwarp[sl] = warp
    race.wepoch[sl] = cur


def ref_race_load_range(race, bank: int, lo: int, hi: int, warp: int):
    """A load by ``warp`` of CTA ``bank`` of its shared bytes ``[lo, hi)``."""
    sl = slice(bank * race.stride + lo, bank * race.stride + hi)
    cur = race.epoch[bank]
    ww = race.wwarp[sl]
    bad = (ww >= 0) & (ww != warp) & (race.wepoch[sl] == cur)
    if bad.any():
        k = int(np.argmax(bad))
        w = int(ww[k])
        who = f"warp {w} of this CTA" if w < 32 else f"CTA rank {w - 32} of the cluster"
        raise M.MemoryFault("race", 0, lo + k,
                            f"it reads shared address {lo + k:#x}{{where}} that {who} stored since the "
                            f"last barrier: a bar.sync (__syncthreads) is missing between the store and "
                            f"this copy", "shared")
    t = race.rmask.dtype.type
    stale = race.repoch[sl] != cur
    race.rmask[sl] = np.where(stale, t(0), race.rmask[sl]) | t(1 << int(warp))
    race.repoch[sl] = cur
