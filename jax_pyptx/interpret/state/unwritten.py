"""The bytes of an output buffer that no store has written yet, kept as intervals.

An output starts uninitialized (``Allocation.start_uninitialized``) and a row kernel writes it
in contiguous ranges: a batch of CTAs stores one slice after another. While every access is such
a range, the unwritten bytes stay a few intervals: a store removes its range, a load or the
end-of-launch check asks whether its range meets one. The first access that is not a range (a
scatter, a strided slice with gaps) turns them into flags (``Allocation._flags``), which answer
from then on: one per 16-byte chunk while every access is whole chunks (a row kernel's strided
vector stores), else one per byte (``Allocation.init``).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right


class Unwritten:
    """Disjoint, non-adjacent byte intervals ``[lo[i], hi[i])`` in increasing order."""

    __slots__ = ("lo", "hi")

    def __init__(self):
        self.lo, self.hi = [], []

    def add(self, a: int, b: int):
        """Bytes ``[a, b)`` are unwritten (merged with the intervals they meet or touch)."""
        if a >= b:
            return
        i = bisect_left(self.hi, a)           # the first interval ending at or after a
        j = bisect_right(self.lo, b)          # the first starting after b
        if i < j:
            a, b = min(a, self.lo[i]), max(b, self.hi[j - 1])
        self.lo[i:j], self.hi[i:j] = [a], [b]

    def remove(self, a: int, b: int):
        """Bytes ``[a, b)`` were written."""
        if a >= b:
            return
        i = bisect_right(self.hi, a)          # the first interval ending after a
        j = bisect_left(self.lo, b)           # the first starting at or after b
        if i >= j:
            return
        lo, hi = [], []
        if self.lo[i] < a:
            lo.append(self.lo[i])
            hi.append(a)
        if self.hi[j - 1] > b:
            lo.append(b)
            hi.append(self.hi[j - 1])
        self.lo[i:j], self.hi[i:j] = lo, hi

    def meets(self, a: int, b: int) -> bool:
        """Whether ``[a, b)`` holds an unwritten byte."""
        i = bisect_right(self.hi, a)
        return i < len(self.lo) and self.lo[i] < b and a < b

    def __iter__(self):
        return iter(zip(self.lo, self.hi))

    def __bool__(self):
        return bool(self.lo)
