"""Which warps accessed which parts of shared memory in the latest epoch (part of the
sanitizer's shared-memory race tracker, ``smem_races``): a summary on Python ints that lets an
access skip the per-chunk comparison when none of its warps comes near what another warp did.

Every access the tracker records (``on_load`` / ``on_store``, a copy's ranges) adds the
``BLOCK``-byte blocks it spans, as CTA-local offsets (one bit per block, the same bits for every
CTA), to the set of the warp that made it, per kind ("r": loaded, "w": stored). Blocks of 128
bytes rather than the tracker's 16-byte chunks keep the sets' ints a few dozen machine words; a
warp's share of a buffer is rarely finer. The sets are those of the latest epoch of any CTA
(``RaceTracker._emax``) and restart when a later one is reached. An access whose rows are whole
warps laid out alike in every CTA (``Group.warp_blocks``) adds each warp's hull of offsets to that
warp's set; any other access adds its whole span under ``ANY``, another warp to every later one.

While every CTA is in one epoch (``RaceTracker._one``, then the latest), every chunk stamp of that
epoch lies in a block of the set of the warp that left it (an access of a CTA still behind is
recorded under the later epoch: the sets over-approximate, never miss). So an access each of whose
warps' hulls meets no block another warp's set of a kind holds can find no chunk of that kind
another warp accessed in the current epoch (``RaceTracker._hits`` would find none): that check is
skipped, and its own stamps can stay deferred. A block two warps accessed lies in both sets, so it
always leads to the per-chunk check. Two warps of different CTAs never share a byte, so the sets
and hulls ignore the CTA; two warps of one access whose hulls are disjoint store no byte in
common (``RaceTracker.on_store``'s same-instruction check).
"""
from __future__ import annotations

ANY = -1                         # the set of accesses not split by warp
BLOCK = 128                      # bytes a bit
_SHIFT = BLOCK.bit_length() - 1


def span_bits(lo: int, hi: int) -> int:
    """The blocks of CTA-local offsets ``[lo, hi)`` (not empty), one bit each."""
    c0 = lo >> _SHIFT
    return ((1 << (((hi - 1) >> _SHIFT) + 1 - c0)) - 1) << c0


def warp_hulls(offs, nbytes: int, blocks):
    """(``[(warp, the blocks of its hull)]``, whether the hulls are pairwise disjoint) of an
    access of ``nbytes`` at offsets ``offs`` whose rows are laid out as ``blocks`` = (repeats,
    warps a repeat, [their warps]): the repeats by those warps by the same number of rows each,
    in order (``Group.warp_blocks``: CTAs by warps by 32 lanes); None when the rows do not
    divide so."""
    nrep, nw, local = blocks
    k, rest = divmod(len(offs), nrep * nw)
    if rest or not k:
        return None
    if nw == 1:
        lo, hi = int(offs.min()), int(offs.max()) + nbytes
        return [(local[0], span_bits(lo, hi))], True
    # each warp's rows of every repeat as one row (a copy): two one-axis reductions
    o = offs.reshape(nrep, nw, k).transpose(1, 0, 2).reshape(nw, nrep * k) if nrep > 1 else offs.reshape(nw, k)
    los = o.min(axis=1).tolist()
    his = o.max(axis=1).tolist()
    out, spans = [], []
    for w, lo, hi in zip(local, los, his):
        hi += nbytes
        out.append((w, span_bits(lo, hi)))
        spans.append((lo, hi))
    spans.sort()
    apart = all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    return out, apart


class WarpCover:
    """The sets of the module doc: ``add`` records, ``clear`` answers. Per kind, the sets are
    kept as [{warp or ANY: its blocks}, the blocks of all, the blocks of two or more]: the blocks
    of warps other than ``w`` are then ``(all ^ own[w]) | several`` (own[w] lies in all), a
    couple of operations on non-negative ints."""
    __slots__ = ("ep", "sets")

    def __init__(self):
        self.ep = 0                                  # the epoch the sets are of
        self.sets = {"r": [{}, 0, 0], "w": [{}, 0, 0]}

    def add(self, kind: str, ep: int, hulls) -> None:
        """Accesses of ``kind`` recorded while ``ep`` is the latest epoch: ``hulls`` =
        [(warp or ANY, block bits)]."""
        if ep != self.ep:                            # a later epoch: the old sets can never
            self.ep = ep                             # hold a current stamp again
            self.sets = {"r": [{}, 0, 0], "w": [{}, 0, 0]}
        st = self.sets[kind]
        own, every, several = st
        for w, bits in hulls:
            mine = own.get(w, 0)
            several |= bits & (every ^ mine)
            own[w] = mine | bits
            every |= bits
        st[1], st[2] = every, several

    def clear(self, kind: str, ep: int, hulls) -> bool:
        """Whether no warp of ``hulls`` ([(warp, block bits)]) meets a block of ``kind`` another
        warp accessed in epoch ``ep``, the one every CTA is in."""
        if ep != self.ep:                            # nothing recorded in it yet
            return True
        own, every, several = self.sets[kind]
        for w, bits in hulls:
            if bits & every and bits & ((every ^ own.get(w, 0)) | several):
                return False
        return True
