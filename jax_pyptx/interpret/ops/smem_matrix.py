"""Matrix operands in shared memory for wgmma and tcgen05: descriptor decoding, the canonical
layouts with every swizzle mode, and element decoding.

A matrix descriptor (PTX ISA "Matrix Descriptor Format" for wgmma, "Shared Memory Descriptor"
for tcgen05) gives a start address, leading / stride dimension byte offsets (LBO / SBO), a base
offset and a swizzle mode. ``gather`` reads an ``mn`` x ``k`` operand of one descriptor per
matrix (a warpgroup's, or an issuing thread's) with one NumPy gather: element offsets come from
``isa.fragments.smem_matrix_offsets`` (the canonical layouts), the swizzle is applied to the
absolute shared-memory byte address (the pattern repeats every 8 rows of the swizzle width; the
base offset names the row of the pattern a start address not on a pattern boundary is at).
The pattern repeats every 1024 bytes, so the swizzled addresses of a layout at a given offset
within that period are computed once and shifted by each start.
``values`` turns raw element bits into float64 / int64 values.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError, UninitializedReadError
from ...isa.descriptors import TCGEN05_SMEM, TCGEN05_SWIZZLE_CODES, WGMMA_SMEM, WGMMA_SWIZZLE_CODES, decode
from ...isa.fragments import smem_matrix_offsets
from ...isa.swizzle import swizzle as _swizzle
from ..state import fp
from ..state.arith import ARITH
from ..sanitizer.async_proxy import check_async_read, spans_clear


class Desc:
    """A decoded matrix descriptor (byte quantities)."""

    __slots__ = ("start", "lbo", "sbo", "base", "swizzle", "lbo_mode", "raw", "fields")

    def __init__(self, start, lbo, sbo, base, swizzle, lbo_mode=0, raw=0):
        self.start, self.lbo, self.sbo, self.base = start, lbo, sbo, base
        self.swizzle, self.lbo_mode, self.raw = swizzle, lbo_mode, raw
        self.fields = (start, lbo, sbo, base, swizzle, lbo_mode)      # what a matrix's addresses depend on

    def layout_key(self):
        return self.fields[1:]          # all but the start

    def __repr__(self):
        return (f"Desc(start={self.start:#x}, lbo={self.lbo}, sbo={self.sbo}, base={self.base}, "
                f"swizzle={self.swizzle})")


_WGMMA_DESCS: dict = {}


def decode_wgmma(v: int) -> Desc:
    """The wgmma descriptor's fields (``isa.descriptors.WGMMA_SMEM``); a ``Desc`` is never
    changed, so each value is decoded once."""
    v = int(v)
    d = _WGMMA_DESCS.get(v)
    if d is None:
        if len(_WGMMA_DESCS) > 4096:
            _WGMMA_DESCS.clear()
        f = decode(WGMMA_SMEM, v)
        d = _WGMMA_DESCS[v] = Desc(f["start"], f["lbo"], f["sbo"], f["base_offset"],
                                   WGMMA_SWIZZLE_CODES[f["swizzle"]], 0, v)
    return d


_TCGEN05_DESCS: dict = {}


def decode_tcgen05(v: int, what: str = "shared memory descriptor") -> Desc:
    """The tcgen05 shared memory descriptor's fields (``isa.descriptors.TCGEN05_SMEM``); the
    version must be the fixed 0b001 and the swizzle code one of the ISA's. A valid value is
    decoded once (as ``decode_wgmma``)."""
    v = int(v)
    d = _TCGEN05_DESCS.get(v)
    if d is None:
        if len(_TCGEN05_DESCS) > 4096:
            _TCGEN05_DESCS.clear()
        d = _TCGEN05_DESCS[v] = _decode_tcgen05(v, what)
    return d


def _decode_tcgen05(v: int, what: str) -> Desc:
    f = decode(TCGEN05_SMEM, v)
    if f["version"] != 1:
        raise InterpreterError(
            f"{what} {v:#018x}: bits 46-48 must hold the fixed value 0b001 (the sm_100 descriptor "
            f"version), got {f['version']:#05b}")
    code = f["swizzle"]
    if code not in TCGEN05_SWIZZLE_CODES:
        raise InterpreterError(f"{what} {v:#018x}: swizzle mode {code} (bits 61-63) is invalid; "
                               f"allowed: 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B")
    return Desc(f["start"], f["lbo"], f["sbo"], f["base_offset"], TCGEN05_SWIZZLE_CODES[code],
                f["lbo_mode"], v)


_OFFS: dict = {}


def offsets(major, swizzle, mn, k, elem_bits, lbo, sbo):
    """NumPy int64 bit offsets of the (mn, k) elements (row-major) before swizzling."""
    key = (major, swizzle, mn, k, elem_bits, lbo, sbo)
    o = _OFFS.get(key)
    if o is None:
        if len(_OFFS) > 512:
            _OFFS.clear()
        o = _OFFS[key] = np.asarray(smem_matrix_offsets(*key), np.int64)
    return o


def swizzle(addr, mode: str, base: int):
    """Apply swizzle ``mode`` to absolute shared-memory byte addresses (int64 array)
    (``isa.swizzle``)."""
    return addr if mode == "none" else _swizzle(addr, mode, base)


#: the swizzle patterns repeat every 1024 bytes (isa.swizzle: it reads address bits 4-9 only)
_PERIOD = 1024
_REL: dict = {}


def _relative(major, swz, mn, k, elem_bits, lbo, sbo, base, s_lo):
    """Byte addresses (mn * k,) of a matrix starting at ``s_lo`` (its start modulo the swizzle
    period, so a start ``S + s_lo`` with ``S`` a multiple of the period reads ``S + rel``), with
    their least and greatest, whether every one is aligned to the element size, and their runs
    of contiguous bytes (``_chunks``)."""
    key = (major, swz, mn, k, elem_bits, lbo, sbo, base, s_lo)
    r = _REL.get(key)
    if r is None:
        if len(_REL) > 512:
            _REL.clear()
        rel = swizzle(s_lo + (offsets(major, swz, mn, k, elem_bits, lbo, sbo) >> 3), swz, base)
        esz = max(elem_bits // 8, 1)
        r = _REL[key] = (rel, rel // esz, int(rel.min()), int(rel.max()), not (rel % esz).any(),
                         _chunks(rel.reshape(mn, k), esz))
    return r


def _chunks(rel, esz):
    """``(nb, index, across)`` when the elements at byte offsets ``rel`` (mn, k) come in runs of
    ``nb`` bytes (16, 8 or 4) that are contiguous and aligned to ``nb``: along k (a K-major
    operand, ``across`` False) or along mn (MN-major, ``across`` True). ``index``: the
    ``nb``-byte chunk of each run, in the order of ``rel`` (of its transpose when ``across``),
    which reads the operand as one gather per run instead of one per element. None when there
    are no such runs."""
    for across, order in ((False, rel), (True, rel.T)):
        flat = order.reshape(-1)
        for nb in (16, 8, 4):
            c = nb // esz
            if c < 2 or order.shape[1] % c:
                continue
            runs = flat.reshape(-1, c)
            if not (runs[:, 0] % nb).any() and (runs == runs[:, :1] + np.arange(0, nb, esz)).all():
                return nb, runs[:, 0] // nb, across
    return None


def gather(ctx, banks, descs, major, mn, k, elem_bits, what, check_init=True, g=None, lane=0, used=None,
           t=None, plans=None, trans=False):
    """Raw element bits (len(descs), mn, k) of the operand each descriptor describes, read from
    the shared memory of CTA ``banks[i]`` through the async proxy (the sanitizer reports bytes
    the generic proxy wrote without a ``fence.proxy.async`` since, and bytes an asynchronous copy
    is still writing). ``what`` names the operand in messages. ``used``: a bool (k,) mask of the
    elements whose definedness is checked (padding the hardware ignores is not). Matrices of
    one layout that start at the same offset within the swizzle period share their address
    pattern (``_relative``): one add and one gather. ``t``: the element type, to get the
    elements' ``values`` instead of their bits (a bf16 operand is then gathered and widened in
    one native pass where ``state.arith`` is built). ``plans``: a dict the caller keeps, where
    the addresses of matrices read before are remembered by their descriptors' fields and
    CTAs (``_Plan``). ``trans``: each matrix transposed, (len(descs), k, mn), gathered so where
    the bf16 pass makes it (a contiguous operand for a matrix product), else a view."""
    nm = len(descs)
    sh = ctx.shared
    pkey = None
    if plans is not None:
        pkey = (tuple([d.fields for d in descs]), np.asarray(banks, np.int64).tobytes(), major, mn, k,
                elem_bits, sh.size, sh.stride)
        p = plans.get(pkey)
        if p is not None:                                   # seen before: its addresses are known
            return _read_same(ctx, p, what, check_init, g, lane, used, t, trans)
    key0 = descs[0].layout_key()
    if all(d.layout_key() == key0 for d in descs):          # one layout (the usual case)
        if pkey is not None and elem_bits >= 8 and not descs[0].lbo_mode:
            p = _plan_same(sh, banks, descs, major, mn, k, elem_bits, what)
            if p is not None:
                if len(plans) >= 256:
                    plans.clear()
                plans[pkey] = p
                return _read_same(ctx, p, what, check_init, g, lane, used, t, trans)
        return _transposed(_gather_layout(ctx, banks, descs, major, mn, k, elem_bits, what, check_init, g,
                                          lane, used, t).reshape(nm, mn, k), trans)
    out = None
    groups = {}
    for i, d in enumerate(descs):
        groups.setdefault(d.layout_key(), []).append(i)
    for sel in groups.values():
        raw = _gather_layout(ctx, [banks[i] for i in sel], [descs[i] for i in sel], major, mn, k, elem_bits,
                             what, check_init, g, lane, used, t)
        if out is None:
            out = np.empty((nm, mn, k), raw.dtype)
        out[sel] = raw.reshape(len(sel), mn, k)
    return _transposed(out, trans)


def _transposed(m, trans):
    """Matrices (n, mn, k) as ``gather`` returns them: transposed (a view) with ``trans``."""
    return np.swapaxes(m, 1, 2) if trans else m


def _gather_layout(ctx, banks, descs, major, mn, k, elem_bits, what, check_init, g, lane, used, t):
    """``gather`` of matrices whose descriptors share one layout (all but the start)."""
    d0 = descs[0]
    if d0.lbo_mode:
        raise InterpreterError(f"{what}: the absolute leading-dimension address mode (bit 52, "
                               f"sm_103a) is not supported by the interpreter")
    if elem_bits >= 8:
        p = _plan_same(ctx.shared, banks, descs, major, mn, k, elem_bits, what)
        if p is not None:
            return _read_same(ctx, p, what, check_init, g, lane, used, t)
    starts = np.array([d.start for d in descs], np.int64)
    bk = np.asarray(banks, np.int64).reshape(-1, 1)
    raw = _gather_any(ctx, bk, starts, d0, major, mn, k, elem_bits, what, check_init, g, lane, used)
    return raw if t is None else values(raw, t)


class _Plan:
    """Where the matrices of one ``gather`` lie (``_plan_same``): remembered per descriptors,
    CTAs and shape (``gather``'s ``plans``), since a kernel reads the same operands launch
    after launch."""

    __slots__ = ("bk", "S", "spans", "rel", "relq", "rmin", "rmax", "esz", "aligned", "chunks",
                 "first", "mn", "k", "wkey", "rkey", "lohi", "_relq_t")

    def relq_t(self):
        """``relq`` in the transposed order (k, mn): a transposed operand's gather."""
        r = getattr(self, "_relq_t", None)
        if r is None:
            r = self._relq_t = np.ascontiguousarray(self.relq.reshape(self.mn, self.k).T).reshape(-1)
        return r


def _plan_same(sh, banks, descs, major, mn, k, elem_bits, what):
    """The ``_Plan`` of byte-sized elements of one layout's matrices at the same offset within
    the period; None when their starts lie at different offsets. Raises for a matrix past the
    end of shared memory."""
    d0 = descs[0]
    starts = np.array([d.start for d in descs], np.int64)
    s_lo = starts % _PERIOD
    if not (s_lo == s_lo[0]).all():
        return None
    s_lo = int(s_lo[0])
    p = _Plan()
    p.bk = np.asarray(banks, np.int64).reshape(-1, 1)
    p.rel, p.relq, p.rmin, p.rmax, p.aligned, p.chunks = _relative(major, d0.swizzle, mn, k, elem_bits,
                                                                   d0.lbo, d0.sbo, d0.base, s_lo)
    p.S = S = starts - s_lo
    p.esz = esz = elem_bits // 8
    p.spans = (S + p.rmin, S + p.rmax + esz)
    if int(p.spans[1].max()) > sh.size:
        _past_end(sh, S[:, None] + p.rel[None, :], d0, mn, k, elem_bits, major, what)
    p.first = p.bk[:, 0] * sh.stride + S      # flat byte of each matrix's period: a multiple of 1024
    p.mn, p.k = mn, k
    # matrices of this layout in the same periods read again (the k-steps of a k-loop, a ring's
    # stages): one set look-up of what ``_spans_written`` would round them to
    p.wkey = (p.bk.tobytes(), S.tobytes(), p.rmin // _PERIOD, -(-(p.rmax + esz) // _PERIOD))
    p.rkey = _rounded(p.bk[:, 0], *p.spans, sh.stride)
    p.lohi = (int(p.spans[0].min()), int(p.spans[1].max()))
    return p


def _read_same(ctx, p, what, check_init, g, lane, used, t, trans=False):
    """``gather`` of a ``_Plan``'s matrices, (n, mn, k) (``trans``: (n, k, mn)): the sanitizer's
    checks of shared memory (the async proxy; definedness) and the read."""
    sh = ctx.shared
    bk, S, esz, mn, k = p.bk, p.S, p.esz, p.mn, p.k
    if ctx.sanitize and not spans_clear(ctx, bk[:, 0], *p.spans, p.lohi):
        addr = S[:, None] + p.rel[None, :]
        check_async_read(ctx, np.broadcast_to(bk, addr.shape).reshape(-1), addr.reshape(-1),
                         esz, what, g, lane)
    if not p.aligned:
        raise InterpreterError(f"{what}: element addresses are not aligned to {esz} bytes")
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[esz]
    first, chunks = p.first, p.chunks
    done = False
    if t == "bf16" and ARITH is not None:       # gathered (transposed or not) and widened in one pass
        raw = np.empty((len(first), mn * k), np.float64)
        ARITH.take_bf16(sh.view(np.uint16), first // 2, p.relq_t() if trans else p.relq, raw, mn if trans else 1)
        t, done = None, trans
    elif chunks is not None and sh.stride % chunks[0] == 0:
        nb, idx, across = chunks
        raw = sh.view(np.dtype((np.void, nb)))[(first // nb)[:, None] + idx[None, :]].view(dt)
        if across:                              # gathered (k, mn): the transposed view
            raw = raw.reshape(-1, k, mn).swapaxes(1, 2)
    else:
        raw = sh.view(dt)[(first // esz)[:, None] + p.relq[None, :]]
    if check_init and not _all_written(sh, bk[:, 0], *p.spans, p.wkey, p.rkey):
        addr = S[:, None] + p.rel[None, :]
        _check_init(ctx, sh, bk * sh.stride + addr, addr, mn, used, what)
    if done:
        return raw.reshape(-1, k, mn)
    return _transposed((raw if t is None else values(raw, t)).reshape(-1, mn, k), trans)


class ChainPlan:
    """Where the bf16 matrices of several ``gather`` calls (a run's k-steps, ``chain_plan``) lie:
    one index, relative to each CTA's first matrix, and their spans for the sanitizer's checks.
    ``first``: the distinct first matrices' offsets; ``rows``: the row of ``first`` each CTA bank
    reads (the warpgroups of one CTA naming the same matrices), or None: one row a bank.
    ``stride``: where ``rel``'s runs of consecutive offsets lie (``take_bf16``: mn for
    transposed matrices, whose runs go down their columns, else 1)."""

    __slots__ = ("first", "rel", "ctas", "lo", "hi", "lohi", "wkey", "rkey", "rows", "stride")


def chain_plan(sh, banks, steps, major, mn, k, trans=False):
    """The ``ChainPlan`` of the bf16 operands ``steps`` (each a list of descriptors, one per
    CTA bank of ``banks``), each step read as ``gather`` (``trans``: (k, mn) each), or None
    where they are not all ``_Plan`` matrices at one offset from the first step's in every CTA
    (or a step reads past the end of shared memory, or unaligned: ``gather`` says so), or
    the native core is not built."""
    if ARITH is None:
        return None
    ps = []
    for descs in steps:
        key0 = descs[0].layout_key()
        if descs[0].lbo_mode or any(d.layout_key() != key0 for d in descs):
            return None
        try:
            p = _plan_same(sh, banks, descs, major, mn, k, 16, "")
        except InterpreterError:
            return None
        if p is None or not p.aligned:
            return None
        ps.append(p)
    first = ps[0].first
    shift = [p.first - first for p in ps]
    if any((s != s[0]).any() or s[0] % 2 for s in shift):
        return None
    cp = ChainPlan()
    cp.first, cp.rows = first // 2, None
    u, inv = np.unique(cp.first, return_inverse=True)
    if len(u) < len(cp.first):          # read once, whichever warpgroups share them
        cp.first, cp.rows = u, inv.reshape(-1).astype(np.int64)
    cp.rel = np.concatenate([int(s[0]) // 2 + (p.relq_t() if trans else p.relq) for s, p in zip(shift, ps)])
    cp.stride = mn if trans else 1
    cp.ctas = np.concatenate([p.bk[:, 0] for p in ps])
    cp.lo = np.concatenate([p.spans[0] for p in ps])
    cp.hi = np.concatenate([p.spans[1] for p in ps])
    cp.lohi = (int(cp.lo.min()), int(cp.hi.max()))
    cp.rkey = _rounded(cp.ctas, cp.lo, cp.hi, sh.stride)
    cp.wkey = ("chain", cp.rkey)
    return cp


def read_chain(ctx, cp, check_init=True):
    """The matrices of ``cp`` widened to float64, (``len(cp.first)``: the distinct ones, each
    CTA bank's at row ``cp.rows``; steps * mn * k), where the
    sanitizer has nothing to report of any of them (``_read_same``'s checks: async proxy and
    definedness); else None (read them one by one: ``gather``)."""
    if ARITH is None:
        return None
    sh = ctx.shared
    if ctx.sanitize and not spans_clear(ctx, cp.ctas, cp.lo, cp.hi, cp.lohi):
        return None
    if check_init and not _all_written(sh, cp.ctas, cp.lo, cp.hi, cp.wkey, cp.rkey):
        return None
    raw = np.empty((len(cp.first), len(cp.rel)), np.float64)
    ARITH.take_bf16(sh.view(np.uint16), cp.first, cp.rel, raw, cp.stride)
    return raw


def _gather_any(ctx, bk, starts, d0, major, mn, k, elem_bits, what, check_init, g, lane, used):
    """``gather`` of one layout's matrices, any starts and element sizes (sub-byte too)."""
    sh = ctx.shared
    off = offsets(major, d0.swizzle, mn, k, elem_bits, d0.lbo, d0.sbo)       # bits
    bitaddr = (starts[:, None] << 3) + off[None, :]
    addr = swizzle(bitaddr >> 3, d0.swizzle, d0.base)
    nbytes = max(elem_bits // 8, 1)
    spans = (addr.min(axis=1), addr.max(axis=1) + nbytes)         # of each matrix
    if int(spans[1].max()) > sh.size:
        _past_end(sh, addr, d0, mn, k, elem_bits, major, what)
    flat = bk * sh.stride + addr
    if ctx.sanitize and not spans_clear(ctx, bk[:, 0], *spans):
        check_async_read(ctx, np.broadcast_to(bk, addr.shape).reshape(-1), addr.reshape(-1),
                         nbytes, what, g, lane)
    if elem_bits >= 8:
        esz = elem_bits // 8
        if (addr % esz).any():
            raise InterpreterError(f"{what}: element addresses are not aligned to {esz} bytes")
        view = sh.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[esz])
        raw = view[flat // esz]
    else:
        byte = sh.data[flat]
        raw = (byte >> (bitaddr & 7).astype(np.uint8)) & np.uint8((1 << elem_bits) - 1)
    if check_init and sh.init is not None and not _spans_written(sh, bk[:, 0], *spans):
        _check_init(ctx, sh, flat, addr, mn, used, what)
    return raw


def _past_end(sh, addr, d0, mn, k, elem_bits, major, what):
    bad = int(addr.reshape(-1)[int(np.argmax(addr.reshape(-1)))])
    raise InterpreterError(
        f"{what}: the matrix ({d0!r}, {mn}x{k} elements of {elem_bits} bits, "
        f"{major}-major) reaches shared address {bad:#x}, past the {sh.size} bytes of "
        f"shared memory of this CTA")


def _check_init(ctx, sh, flat, addr, mn, used, what):
    """Every element read (``used``: of each row) was written by a thread or a copy."""
    ok = sh.init[flat]
    if used is not None:
        ok = ok | np.tile(~np.asarray(used, bool), mn)[None, :]
    if not ok.all():
        j = np.argwhere(ok == 0)[0]
        a = int(addr[j[0], j[1]])
        where = sh.describe_offset(a)
        raise ctx.error(UninitializedReadError,
                        f"{what} reads shared address {a:#x}{' ' + where if where else ''} "
                        f"that no thread or copy of this CTA wrote")


def _rounded(ctas, lo, hi, stride):
    """``_spans_written``'s spans rounded out to the swizzle period: ``(cta, lo, hi)`` each."""
    P = _PERIOD
    return tuple((c_, a - a % P, min(b + -b % P, stride))
                 for c_, a, b in zip(np.asarray(ctas, np.int64).tolist(), lo.tolist(), hi.tolist()))


def _all_written(sh, ctas, lo, hi, wkey, rkey) -> bool:
    """Whether a plan's spans (``_Plan``, ``ChainPlan``: their cheap key ``wkey`` and rounded
    spans ``rkey``) hold no unwritten byte: definedness not tracked or all written, a key known
    written, or ``_spans_written``."""
    return (sh.init is None or sh.init_full or wkey in sh.written
            or _spans_written(sh, ctas, lo, hi, alias=wkey, key=rkey))


def _spans_written(sh, ctas, lo, hi, alias=None, key=None) -> bool:
    """Whether every byte of shared offsets ``[lo[i], hi[i])`` of CTA ``ctas[i]`` was written
    (then every element inside them is defined; else the caller checks element by element).
    The spans are rounded out to the swizzle period (the operands of a k-loop, steps inside one
    buffer, share them) and those of one rounded-out range looked at in one pass over their
    CTAs; bytes never become unwritten, so a call whose rounded-out spans are all written is
    remembered as one key (``sh.written``: the next step of the k-loop in the same buffers is
    one look-up), and so is a span written inside periods that are not. ``alias``: a cheaper
    key the caller made for the same rounded-out spans, remembered with it; ``key``: the
    rounded-out spans (``_rounded``) where the caller has them."""
    known, init, stride = sh.written, sh.init, sh.stride
    P = _PERIOD
    if key is None:
        key = _rounded(ctas, lo, hi, stride)
    if key in known:
        return True
    # a copy ring's stages: the spans merged into ranges per CTA (a k-loop's steps in one
    # buffer: one range), or else one by one
    if all(sh.copied_over(c_, wa, wb) for c_, wa, wb in _merged(key)) or \
            all(sh.copied_over(c_, wa, wb) for c_, wa, wb in set(key)):
        if len(known) < 4096:
            known.add(key)
            if alias is not None:
                known.add(alias)
        return True
    spans = list(zip(np.asarray(ctas, np.int64).tolist(), lo.tolist(), hi.tolist()))   # a few: Python ints
    rows = init.reshape(-1, stride)                # (banks, bytes of a bank)
    wide = {}
    for c_, wa, wb in key:
        wide.setdefault((wa, wb), []).append(c_)
    wide_all = True
    for (wa, wb), cs in wide.items():
        c0, c1 = min(cs), max(cs)
        if (rows[c0:c1 + 1, wa:wb] if c1 - c0 < 2 * len(cs) else rows[cs, wa:wb]).min():   # (0 / 1 flags)
            continue
        wide_all = False                           # the spans themselves, one by one
        for c_, a, b in spans:
            if (a - a % P, min(b + -b % P, stride)) != (wa, wb) or (c_, a, b) in known:
                continue
            if not init[c_ * stride + a:c_ * stride + b].min():
                return False
            if len(known) < 4096:
                known.add((c_, a, b))
    if wide_all and len(known) < 4096:
        known.add(key)
        if alias is not None:
            known.add(alias)
    return True


_MERGED: dict = {}


def _merged(key):
    """The spans ``(cta, lo, hi)`` of ``key`` merged into the ranges of each CTA they cover
    (overlapping or adjacent spans joined), remembered per key: every byte of a range lies in
    a span and every span in a range, so copies that wrote every byte of each range
    (``copied_over``) wrote every byte of each span."""
    got = _MERGED.get(key)
    if got is None:
        if len(_MERGED) >= 1024:
            _MERGED.clear()
        out = []
        for c_, a, b in sorted(set(key)):
            if out and out[-1][0] == c_ and a <= out[-1][2]:
                out[-1][2] = max(out[-1][2], b)
            else:
                out.append([c_, a, b])
        got = _MERGED[key] = tuple(tuple(r) for r in out)
    return got


# ----------------------------------------------------------------------------- element values
_TABLES: dict = {}


def _table(name):
    t = _TABLES.get(name)
    if t is None:
        codes = np.arange(256, dtype=np.uint8)
        if name in ("s8",):
            t = codes.view(np.int8).astype(np.float64)
        elif name in ("u8",):
            t = codes.astype(np.float64)
        elif name == "ue4m3":
            t = fp.decode(codes & np.uint8(0x7F), fp.E4M3)
        else:
            fmt = fp.FORMATS[name]
            t = fp.decode(codes, fmt)
        _TABLES[name] = t
    return t


ELEM_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
             "b1": 1, "e2m1": 4, "e2m3": 6, "e3m2": 6, "ue8m0": 8, "ue4m3": 8}


def values(raw, t: str):
    """float64 values of raw element bits of PTX type ``t`` (int64 for s8/u8/b1)."""
    if t == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(np.float64)
    if t == "bf16":
        if ARITH is not None and raw.dtype == np.uint16 and raw.ndim == 3:
            out = np.empty(raw.shape, np.float64)          # one native pass (state.arith)
            ARITH.bf16_to_f64(raw, out)
            return out
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if t == "tf32":          # the tensor core ignores the low 13 bits of a .tf32 input
        return (raw.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if t == "f32":
        return raw.astype(np.uint32).view(np.float32).astype(np.float64)
    if t in ("s8", "u8"):
        return _table(t)[raw.astype(np.uint8)].astype(np.int64)
    if t == "b1":
        return raw.astype(np.int64)
    if t in ("e4m3", "e5m2", "e2m1", "e2m3", "e3m2", "ue8m0", "ue4m3"):
        return _table(t)[raw.astype(np.uint8)]
    raise InterpreterError(f"element type .{t} is not supported for matrix operands")
