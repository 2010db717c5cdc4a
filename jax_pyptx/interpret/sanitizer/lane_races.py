"""Races between lanes of one warp (part of the sanitizer's shared-memory race tracker,
``smem_races``; its module doc gives the rules): every warp has a *sync interval* id that
changes whenever it executes ``bar.warp.sync`` or a ``.sync`` collective (``warp_synced``) and
whenever its CTA passes a barrier (``RaceTracker.advance``); every byte remembers the lane and
interval of its last store, and the interval of the last warp that read it with the lane that
read it (or "several lanes"), in ``lane_tags.LaneTags``. ``LaneRaces`` is the tracker's half
that keeps them (``intra_load`` / ``intra_store``, for ``ld`` / ``st``).
"""
from __future__ import annotations

import numpy as np

from ..state import memory as M
from ..state.rows import flat_starts
from . import lane_tags as LT
from .lane_tags import BYTES, ROWS, LaneTags


class RaceFault(M.MemoryFault):
    pass


class LaneRaces:
    """The lanes-of-one-warp state and checks of ``smem_races.RaceTracker`` (which provides
    ``n``, ``stride``, ``data``, ``warn``, ``epoch``, ``_bytes`` and ``_new_bytes``)."""

    iv = None                       # per warp of the batch: its interval id (made by the first intra_*)
    _iv_ver = 0                     # bumped whenever ``iv`` changes (it invalidates ``_lc``)
    _lc = None                      # the last group's ``_Lanes`` (``_intra_begin``)

    def warp_synced(self, gwarps, distinct=False):
        """The warps ``gwarps`` (slot // 32 in the batch; ``distinct``: each once) executed a
        warp-synchronizing instruction: their lanes' earlier shared accesses are ordered before
        their later ones."""
        if self.iv is not None:
            gw = gwarps if distinct else np.unique(gwarps)
            self._renew(gw, len(gw))

    def _renew(self, gw, n):
        """New intervals for the ``n`` batch warps ``gw`` (an index array or a slice). While no
        warp has loaded or stored since its interval began, no tag names a current interval:
        new ids would change nothing, and none are handed out (a pipeline's mbarrier phases)."""
        if not (self._st_any or self._ld_any):
            return
        if self._iv_next + n >= _IV_LIMIT:        # ids run out: forget every interval
            self.w_tag.clear()
            if self.r_tag is not None:
                self.r_tag.clear()
            self._iv_next = len(self.iv) + 1
            self._iv_base = 1
            self.iv[:] = np.arange(1, len(self.iv) + 1)
        self.iv[gw] = np.arange(self._iv_next, self._iv_next + n, dtype=np.int32)
        self._iv_next += n
        self._iv_ver += 1
        if self._st_any:
            self.iv_st[gw] = False
            self._st_any = bool(self.iv_st.any())
        if self._ld_any:
            self.iv_ld[gw] = False
            self._ld_any = bool(self.iv_ld.any())

    def _intra_state(self, nwarps):
        if self.iv is None:
            n = self.n
            # interval ids count from 1 (a tag of 0, zeroed pages, is no access) and on from the
            # batches before (their tags are older: ``lane_tags``)
            base = self._iv_base = LT.first_id(nwarps)
            self.iv = np.arange(base, base + nwarps, dtype=np.int32)  # per warp of the batch: its interval id
            self._iv_ver += 1
            self._iv_next = base + nwarps
            self.w_tag = LaneTags(n, base)                  # per byte: interval * 32 + lane of its last store
            self.r_tag = None                               # interval * 64 + lane of its readers (MULTI:
                                                            # several; made by the first intra_load)
            self.iv_st = np.zeros(nwarps, bool)             # per warp: it stored in its interval
            self.iv_ld = np.zeros(nwarps, bool)             # ... it loaded (else nothing to compare with)
            self._st_any = self._ld_any = False             # iv_st.any(), iv_ld.any()

    def _intra_begin(self, banks, offs, nbytes, gwarps, lanes, nwarps, starts, aligned):
        """What ``intra_load`` and ``intra_store`` start from: the flat first bytes, the tags'
        layout (``LaneTags.layout``), for ``ROWS`` the rows' items (``LaneTags.items``), and
        the rows' ``_Lanes``."""
        self._intra_state(nwarps)
        if starts is None:
            starts = flat_starts(banks, offs, self.stride)
        lay = LaneTags.layout(starts, nbytes, aligned)
        c = self._lc
        if c is None or c.gwarps is not gwarps or c.lanes is not lanes or c.ver != self._iv_ver:
            c = self._lc = _Lanes(self.iv, self._iv_ver, gwarps, lanes)
        return starts, lay, (LaneTags.items(starts, nbytes) if lay == ROWS else None), c

    def intra_load(self, banks, offs, nbytes, gwarps, lanes, nwarps, idx=None, starts=None, aligned=False,
                   uw=None):
        """A load by lanes ``lanes`` of batch warps ``gwarps`` (module doc); ``idx``: its bytes
        (``_bytes``) when the caller has them, ``starts``: their flat first bytes, ``aligned``:
        every start is a multiple of ``nbytes``, a power of two, ``uw``: the distinct warps of
        ``gwarps`` (when the caller knows)."""
        starts, lay, q, ln = self._intra_begin(banks, offs, nbytes, gwarps, lanes, nwarps, starts, aligned)
        whole = lay != BYTES
        fw = gwarps if uw is None else uw                 # (the warps' flags: each warp once)
        if self._st_any and (ln.st or self.iv_st[fw].any()):
            wt, u = self.w_tag.take(starts, nbytes, lay, q)
            # same interval, another lane: tags agree above the lane bits, not in them
            bad = ln.tags(32, wt.shape[1]) ^ wt
            bad = bad.view(np.uint32) - np.uint32(1) < 31
            if bad.any():
                lane, k = np.argwhere(bad)[0]
                addr = int(offs[lane]) + int(k) * u
                raise RaceFault("race", int(lane), addr,
                                f"it reads shared address {addr:#x}{{where}} that lane {int(wt[lane, k]) & 31} of "
                                f"the same warp stored since the warp last synchronized: {_MISSING_WARP} between "
                                f"the store and this load", "shared")
        if self.r_tag is None:
            self.r_tag = LaneTags(self.n, self._iv_base)
        rt = self.r_tag
        if self._ld_any and (ln.ld or self.iv_ld[fw].any()):
            old, u = rt.take(starts, nbytes, lay, q)
            mine = ln.tags(64, old.shape[1])             # this warp's interval and the reading lane
            other = ((old ^ mine) < 64) & (old != mine)   # another lane read it in this interval
            tag = np.where(other, (mine & ~63) | _MULTI, mine)
        else:
            u = 4 if whole else 1
            tag = mine = ln.tags(64, nbytes // u)
        rt.put(starts, nbytes, u, tag, lay, q)
        if not ln.ld:
            self.iv_ld[fw] = ln.ld = True
        self._ld_any = True
        if u == 4 and q is not None:
            now = rt.words(q, nbytes)
        else:
            arr, at = rt.at(starts, nbytes, u)
            now = arr[at]
        dup = ((now ^ mine) < 64) & (now != tag)          # lanes of this warp in this instruction
        if dup.any():
            arr, at = rt.at(starts, nbytes, u)
            arr[at[dup]] = (mine[dup] & ~63) | _MULTI
        if u == 1:
            rt.promote(starts, nbytes)

    def intra_store(self, banks, offs, nbytes, gwarps, lanes, nwarps, vals=None, idx=None, starts=None,
                    aligned=False, uw=None, quiet=False):
        """A store by lanes ``lanes`` of batch warps ``gwarps``; ``vals`` as for ``on_store``,
        ``idx``, ``starts``, ``aligned`` and ``uw`` as for ``intra_load``. ``quiet``: record it
        only where no lane's bytes need comparing with other lanes' (nothing to report): False,
        and nothing recorded, where they do (else True)."""
        starts, lay, q, ln = self._intra_begin(banks, offs, nbytes, gwarps, lanes, nwarps, starts, aligned)
        whole = lay != BYTES
        fw = gwarps if uw is None else uw
        if self._ld_any and (ln.ld or self.iv_ld[fw].any()):
            if quiet:
                return False
            rt, u = self.r_tag.take(starts, nbytes, lay, q)
            war = ln.tags(64, rt.shape[1]) ^ rt
            war = war.view(np.uint32) - np.uint32(1) < 63   # another lane (or several)
            if war.any():
                lane, k = np.argwhere(war)[0]
                addr = int(offs[lane]) + int(k) * u
                r = int(rt[lane, k]) & 63
                who = "other lanes" if r == _MULTI else f"lane {r}"
                raise RaceFault("race", int(lane), addr,
                                f"it overwrites shared address {addr:#x}{{where}} that {who} of the same warp "
                                f"loaded since the warp last synchronized: {_MISSING_WARP} between that load and "
                                f"this store", "shared")
        pu = 4 if whole else 1
        mine = ln.tags(32, nbytes // pu)                  # this warp's interval and the storing lane
        if self._st_any and (ln.st or self.iv_st[fw].any()):
            wt, u = self.w_tag.take(starts, nbytes, lay, q)
            # tags below every interval of these warps (stores before their warps last synchronized,
            # the usual case) cannot share one: then nothing to compare lane by lane
            if len(wt) and int(wt.max()) >= ln.low << 5:
                if quiet:
                    return False
                bad = (wt ^ (mine if u == pu else ln.tags(32, nbytes))).view(np.uint32) - np.uint32(1) < 31
                if bad.any():
                    if u != 1:
                        wt, bad = np.repeat(wt, u, axis=1), np.repeat(bad, u, axis=1)
                    self._intra_ww(banks, offs, nbytes, gwarps, nwarps, vals, idx, wt, bad)
        self.w_tag.put(starts, nbytes, pu, mine, lay, q)       # whole words: each word's bytes get one tag
        if pu == 1:
            self.w_tag.promote(starts, nbytes)
        if not ln.st:
            self.iv_st[fw] = ln.st = True
        self._st_any = True
        return True

    def _intra_ww(self, banks, offs, nbytes, gwarps, nwarps, vals, idx, wt, bad):
        """Report lanes of one warp storing bytes (``bad``, per byte) another lane stored in the
        warp's interval (``wt``: their tags): a warning where every such byte gets its value again."""
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
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
            return
        raise RaceFault("race", int(lane), addr,
                        f"it stores to shared address {addr:#x}{{where}} that lane {other} of the same "
                        f"warp also stored since the warp last synchronized, a different value: which "
                        f"one the byte keeps is undefined ({_MISSING_WARP} between the two stores, or "
                        f"let one lane write it)", "shared")


class _Lanes:
    """One group's rows as the lane checks see them (``LaneRaces._intra_begin`` keeps the last
    group's: a run of accesses by the same threads, between interval changes, makes them once):
    each row's interval id and lane (int32), the lowest interval id, the row tags ``interval *
    m + lane`` repeated over ``k`` units (``tags``, read-only), and whether every warp of the
    group is known to have stored (``st``) or loaded (``ld``) in its interval (``iv_st`` /
    ``iv_ld`` set for them: only a change of interval clears those, and it makes a new one)."""

    __slots__ = ("gwarps", "lanes", "ver", "iv", "lane", "low", "_tags", "st", "ld")

    def __init__(self, iv, ver, gwarps, lanes):
        self.gwarps, self.lanes, self.ver = gwarps, lanes, ver
        self.iv = iv[gwarps]
        self.lane = lanes.view(np.int32) if lanes.dtype == np.uint32 else lanes.astype(np.int32, copy=False)
        self.low = int(self.iv.min()) if len(self.iv) else 0
        self._tags = {}
        self.st = self.ld = False

    def tags(self, m: int, k: int):
        """``interval * m + lane`` of each row repeated over ``k`` units: (n, k) int32."""
        t = self._tags.get((m, k))
        if t is None:
            t = self._tags[(m, k)] = _per_unit(self.iv * m + self.lane, k)
            t.flags.writeable = False
        return t


def _per_unit(tags, k):
    """Row tags ``tags`` (n,) repeated over ``k`` units of each row: (n, k) int32, contiguous."""
    if k == 1:
        return tags.reshape(-1, 1)
    if k == 2:      # one multiply: the 64-bit row holds the tag twice
        return (tags.view(np.uint32).astype(np.uint64) * np.uint64(0x100000001)).view(np.int32).reshape(-1, 2)
    return np.repeat(tags, k).reshape(-1, k)


_IV_LIMIT = LT.ID_LIMIT
_MULTI = 32                              # read tag lane field: several lanes read the byte
_MISSING_WARP = ("since independent thread scheduling (sm_70) the lanes of a warp are not in lock step, "
                 "so a bar.warp.sync (__syncwarp) is missing")
