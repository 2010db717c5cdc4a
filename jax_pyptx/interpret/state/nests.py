"""The addresses of one access as an affine nest (``nest``: first address, shape, strides), the
facts its checks share (``Span``), and strided views of a nest's elements: how loads, stores and
the race trackers turn a warp's or a batch's addresses into slices instead of gathers
(``memory``'s fast paths)."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["nest", "Span", "span_of", "disjoint", "FAST_MIN"]

FAST_MIN = 32                  # accesses by fewer threads always take the general path
_U64 = 1 << 64
_NEST_DEPTH = 6


def nest(addrs):
    """The addresses of an access as an affine nest, or None when they are scattered.

    Returns ``(first, shape, strides, last)``: ``addrs[i] == first + sum(k[j] * strides[j])``
    where ``k`` is ``i``'s C-order index over ``shape`` (outermost first), every stride is >= 0
    (0 repeats an address) and ``last`` is the largest address (the nest never wraps past
    2**64). Found from the runs of equal differences, innermost first, at most six deep: a warp
    reading 16 consecutive bytes per lane, rows of a tile, the CTAs of a batch.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.interpret.state.nests import nest
        >>> rows = np.arange(3, dtype=np.uint64)[:, None] * np.uint64(4096)
        >>> nest((np.uint64(256) + rows + np.arange(4, dtype=np.uint64) * np.uint64(16)).ravel())
        (256, [3, 4], [4096, 16], 8496)
        >>> nest(np.array([0, 16, 48], np.uint64)) is None
        True
    """
    n = len(addrs)
    if n < 2:
        return None
    cur = addrs.view(np.int64)
    shape, strides = [], []
    for _ in range(_NEST_DEPTH):
        d = np.diff(cur)                    # wraps modulo 2**64, as the addresses do
        s = int(d[0])
        if s < 0:
            return None
        brk = np.flatnonzero(d != s)
        if not len(brk):
            shape.append(len(cur))
            strides.append(s)
            break
        p = int(brk[0]) + 1                 # the first run: p addresses s apart
        if len(cur) % p or ((brk + 1) % p).any():
            return None
        shape.append(p)
        strides.append(s)
        cur = cur[::p]
    else:
        return None
    first = int(addrs[0])
    last = first + sum((c - 1) * s for c, s in zip(shape, strides))
    if last >= _U64:
        return None
    return first, shape[::-1], strides[::-1], last


class Span:
    """The addresses of one access and what its checks learn about them, computed once and
    shared by them (provenance, bounds, the fast paths, the race trackers): the affine nest
    (``nest``) and the smallest and largest address. ``nest_first``: the nest will be wanted
    (a global access), so the bounds come from it when it exists. ``known``: the addresses'
    nest when the caller knows it (a TMA box: its dimensions and strides), in ``nest``'s form
    (shape and strides outermost first, ``last`` its largest address)."""
    __slots__ = ("addrs", "_nest", "_bounds", "nest_first")

    def __init__(self, addrs, nest_first=True, known=False):
        self.addrs, self._nest, self._bounds, self.nest_first = addrs, known, None, nest_first

    def nest(self):
        """``nest(addrs)``, or None (scattered, or fewer than ``FAST_MIN`` addresses)."""
        ns = self._nest
        if ns is False:
            ns = self._nest = nest(self.addrs) if len(self.addrs) >= FAST_MIN else None
        return ns

    def bounds(self):
        """(smallest, largest) address as ints; the addresses are not empty."""
        b = self._bounds
        if b is None:
            ns = self.nest() if self.nest_first or self._nest is not False else None
            if ns is not None:
                b = (ns[0], ns[3])
            else:
                b = (int(self.addrs.min()), int(self.addrs.max()))
            self._bounds = b
        return b


def span_of(addrs, span):
    """``span`` when it describes ``addrs``, else a new ``Span`` of them."""
    return span if span is not None and span.addrs is addrs else Span(addrs)


def disjoint(shape, strides, nbytes) -> bool:
    """Whether the ``nbytes``-byte elements of a nest (``nest``) never overlap: each stride,
    smallest first, at least the span of the dimensions inside it."""
    span = nbytes
    for c, s in sorted(zip(shape, strides), key=lambda cs: cs[1]):
        if c == 1:
            continue
        if s < span:
            return False
        span = s * (c - 1) + span
    return True


def coalesce(shape, strides, nbytes):
    """The same bytes as a nest of ``nbytes``-byte elements (``nest``'s shape and strides)
    with its innermost dimensions folded into the elements while they are dense (stride
    ``nbytes``): the rows of a tile become elements of a row's bytes."""
    shape, strides = list(shape), list(strides)
    while shape and strides[-1] == nbytes:
        nbytes *= shape.pop()
        strides.pop()
    return shape, strides, nbytes


def _nest_view(view, esz, off, shape, strides, count):
    """The elements of a nest (byte offset ``off`` of its first address into ``view``'s
    memory) as a strided view of shape ``(*shape, count)``: made by the ``ndarray``
    constructor over ``view``'s buffer (a tenth of ``as_strided``'s cost; it also checks that
    the view lies inside the buffer), by ``as_strided`` where ``view`` has none (not
    contiguous)."""
    try:
        return np.ndarray((*shape, count), view.dtype, view, off // esz * view.itemsize, (*strides, esz))
    except (TypeError, ValueError, BufferError):
        return as_strided(view[off // esz:], shape=(*shape, count), strides=(*strides, esz))
