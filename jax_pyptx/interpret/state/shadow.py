"""The interpreter's large per-launch arrays (an output's written-byte flags, the global race
tags; a batch's shared and local memory, their written and fence flags, the shared race
tracker's and the async proxy's per-byte state), recycled from one launch (or batch) to the next.

A multi-megabyte ``np.zeros`` is fresh memory: the operating system maps it page by page as the
launch first writes it, and on a row kernel that costs more than the sanitizer's own work (a
page fault per page, huge-page compaction). ``launch`` hands its arrays back when it ends
(``recycle``) and the next launch that asks for the same size gets one back, refilled with one
``memset`` (``filled``), or as it is when every entry is written before it is read
(``scratch``). Arrays under ``MIN_BYTES`` come from NumPy as usual; at most ``KEEP_BYTES`` wait.
Launches of several threads (a sharded JAX call runs one host callback per device at once)
share the pool under a lock.
"""
from __future__ import annotations

import threading

import numpy as np

MIN_BYTES = 1 << 20
KEEP_BYTES = 256 << 20

_spare: dict = {}            # nbytes -> [uint8 arrays of that size]
_kept = 0
_lock = threading.Lock()


_settled = False


def settle_allocator() -> None:
    """Once per process: allocate and free one 16 MB array, so that the C library's allocator
    (glibc) raises its mmap threshold to 16 MB as it does after any large array is freed. Below
    that threshold a freed array's memory is reused by the next one; above it every array is a
    fresh mapping whose pages fault as they are first written (a 256 KB register of a 16K-thread
    kernel: 64 faults). The NumPy temporaries of the interpreter's batches used to do this as a
    side effect; its native arithmetic makes none (RMSNorm sanitized: 4800 -> 0 faults a
    launch). Any process that frees a large NumPy array does the same."""
    global _settled
    if not _settled:
        _settled = True
        np.empty(30 << 20, np.uint8)


def filled(n: int, dtype, value: int = 0) -> np.ndarray:
    """A new C-order array of ``n`` elements of ``dtype``, every element ``value`` (``np.full``),
    recycled when one of its size waits (``recycle``)."""
    a = _take(n, dtype)
    if a is not None:
        a.fill(value)
        return a
    if value == 0:
        return np.zeros(n, dtype)              # zeroed pages: nothing written until touched
    return np.full(n, value, dtype)


def scratch(n: int, dtype) -> np.ndarray:
    """A C-order array of ``n`` elements of ``dtype`` whose contents do not matter (every
    entry is written before it is read): recycled without a refill when one of its size waits."""
    a = _take(n, dtype)
    return np.zeros(n, dtype) if a is None else a


def _take(n: int, dtype):
    """A waiting array of ``n`` elements of ``dtype`` (its old contents), or None."""
    global _kept
    dt = np.dtype(dtype)
    nbytes = n * dt.itemsize
    if nbytes < MIN_BYTES:
        return None
    with _lock:
        spare = _spare.get(nbytes)
        if not spare:
            return None
        _kept -= nbytes
        return spare.pop().view(dt)


def recycle(*arrays) -> None:
    """Keep ``arrays`` (from ``filled``; no one may use them afterwards) for the next launch."""
    global _kept
    for a in arrays:
        if a is None or a.nbytes < MIN_BYTES:
            continue
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root.base is not None or root.nbytes != a.nbytes or not root.flags.c_contiguous:
            continue                           # a view of something else: not ours to keep
        with _lock:
            if _kept + a.nbytes > KEEP_BYTES:
                return
            _spare.setdefault(a.nbytes, []).append(root)
            _kept += a.nbytes
