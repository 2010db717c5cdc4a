"""What a TMA tile-mode box covers of its tensor.

A tensor map describes a tensor of ``dims`` (here in row-major order, outermost first, as
``Tile`` and NumPy write shapes; the driver API lists them innermost first) and a ``box``; a
``cp.async.bulk.tensor`` load at coordinates ``coord`` (also outermost first here) copies the
box whose corner is ``coord``. Box elements outside the tensor are not read: the shared-memory
destination gets the fill value (zero, or NaN with the NaN fill mode) instead.

Examples:
    >>> from jax_pyptx.viz.tma_box import tma_box_map
    >>> m = tma_box_map((16, 16), (8, 8), [(0, 0), (8, 8)])
    >>> m.count(1), m.count(2)
    (128, 0)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BoxMap", "tma_box_map"]

OUTSIDE, INSIDE, FILLED = 0, 1, 2


@dataclass(frozen=True)
class BoxMap:
    """``cover`` over the tensor plus a margin: ``OUTSIDE`` (0) not in any box, ``INSIDE`` (1)
    in a box and in bounds, ``FILLED`` (2) in a box but out of bounds (written with the fill
    value). ``origin`` is the tensor's (0, 0) within ``cover``; ``box_of[r, c]`` is the index
    of the box covering that cell (-1 none).

    Examples:
        >>> from jax_pyptx.viz.tma_box import BoxMap, tma_box_map
        >>> m = tma_box_map((4, 4), (2, 2), [(3, 3)])
        >>> isinstance(m, BoxMap), m.count(1), m.count(2), m.origin
        (True, 1, 3, (0, 0))
    """

    dims: tuple
    box: tuple
    coords: tuple
    origin: tuple
    cover: np.ndarray
    box_of: np.ndarray

    def count(self, what: int) -> int:
        """How many cells of cover are what (OUTSIDE 0, INSIDE 1, FILLED 2).

        Examples:
            >>> from jax_pyptx.viz.tma_box import tma_box_map
            >>> m = tma_box_map((10, 10), (4, 8), [(8, 4)])
            >>> m.count(1), m.count(2)
            (12, 20)
        """
        return int((self.cover == what).sum())


def tma_box_map(dims, box, coords) -> BoxMap:
    """The cells of a 2-D tensor of shape ``dims`` (rows, cols) that boxes of shape ``box``
    (rows, cols) at each corner in ``coords`` (a list of (row, col), may be negative or past
    the end) cover.

    Examples:
        >>> m = tma_box_map((10, 10), (4, 8), [(8, 4)])      # the box hangs over two edges
        >>> m.count(1), m.count(2)
        (12, 20)
    """
    dims, box = tuple(int(d) for d in dims), tuple(int(b) for b in box)
    if len(dims) != 2 or len(box) != 2:
        raise ValueError("tma_box_map draws rank-2 tensors: dims and box are (rows, cols)")
    if any(b < 1 or b > 256 for b in box):
        raise ValueError(f"box {box}: each box dim is 1..256 (cuTensorMapEncodeTiled)")
    coords = [tuple(int(x) for x in c) for c in coords]
    lo = [min([0] + [c[k] for c in coords]) for k in range(2)]
    hi = [max([dims[k]] + [c[k] + box[k] for c in coords]) for k in range(2)]
    shape = (hi[0] - lo[0], hi[1] - lo[1])
    cover = np.zeros(shape, np.int8)
    box_of = np.full(shape, -1, np.int64)
    r = np.arange(shape[0])[:, None] + lo[0]
    c = np.arange(shape[1])[None, :] + lo[1]
    inb = (r >= 0) & (r < dims[0]) & (c >= 0) & (c < dims[1])
    for i, (y, x) in enumerate(coords):
        inbox = (r >= y) & (r < y + box[0]) & (c >= x) & (c < x + box[1])
        cover[inbox & inb] = INSIDE
        cover[inbox & ~inb] = FILLED
        box_of[inbox] = i
    return BoxMap(dims, box, tuple(coords), (-lo[0], -lo[1]), cover, box_of)
