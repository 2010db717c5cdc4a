"""Figures (matplotlib, the ``viz`` extra: ``pip install jax-pyptx[viz]``): each ``plot_*``
takes the table its module computes and returns a ``matplotlib.figure.Figure``.

Examples:
    >>> from jax_pyptx.viz import plot_swizzle, swizzle_map
    >>> fig = plot_swizzle(swizzle_map("128B"))
    >>> type(fig).__name__
    'Figure'
"""
from __future__ import annotations

import numpy as np

from ..errors import NotSupportedError

__all__ = ["plot_fragment", "plot_swizzle", "plot_tma_box"]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise NotSupportedError("jax_pyptx.viz draws with matplotlib, which is not installed; "
                                "pip install 'jax-pyptx[viz]' (or matplotlib)") from None
    return plt


def _grid(ax, rows, cols):
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(labelsize=6, length=0)
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)


def plot_fragment(fmap, *, ax=None):
    """A fragment map: each element coloured by the warp (or lane group) holding it, labelled
    ``T<thread>`` and ``r<register>[.<part>]``.

    Examples:
        >>> from jax_pyptx.viz import mma_map, plot_fragment
        >>> fig = plot_fragment(mma_map("m16n8k16", "c", "f32"))
        >>> fig.axes[0].get_title()
        'mma.sync m16n8k16 C (f32)'
    """
    plt = _plt()
    rows, cols = fmap.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4, cols * 0.45), max(3, rows * 0.45)))
    else:
        fig = ax.figure
    colour = np.where(fmap.thread >= 0, fmap.thread % 32 // 4 + 8 * (fmap.thread // 32), -1)
    ax.imshow(np.ma.masked_less(colour, 0), cmap="tab20", vmin=0, vmax=39, aspect="equal")
    _grid(ax, rows, cols)
    small = 5 if max(rows, cols) > 16 else 6
    for r in range(rows):
        for c in range(cols):
            t, g, p = fmap.holder(r, c)
            if t < 0:
                continue
            part = f".{p}" if fmap.part.max() > 0 else ""
            ax.text(c, r, f"T{t}\nr{g}{part}", ha="center", va="center", fontsize=small)
    ax.set_title(fmap.title, fontsize=9)
    ax.set_xlabel(fmap.col_label)
    ax.set_ylabel(fmap.row_label)
    return fig


def plot_swizzle(smap, *, ax=None):
    """A swizzle map: row r's logical chunks, each drawn where it lands and coloured by its
    bank group; a column of one colour is a conflict-free column read. ``smap``: a
    ``swizzle_map(...)``, or a swizzle mode (``"128B"``, ``"64B"``, ``"32B"``, None, ...) to
    draw ``swizzle_map(mode)`` of.

    Examples:
        >>> from jax_pyptx.viz import swizzle_map, plot_swizzle
        >>> fig = plot_swizzle(swizzle_map("128B"))
        >>> fig.axes[0].get_title()
        'swizzle 128B: logical chunk c at its physical place (banks)'
    """
    from .banks import SwizzleMap, swizzle_map

    if smap is None or isinstance(smap, (str, int)):
        smap = swizzle_map(smap)            # its error names the modes
    elif not isinstance(smap, SwizzleMap):
        raise TypeError(f"plot_swizzle takes a swizzle_map(...) or a swizzle mode ('128B', "
                        f"'64B', '32B', None), got {type(smap).__name__} {smap!r}")
    plt = _plt()
    rows, cols = smap.chunk.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4, cols * 0.7), max(3, rows * 0.5)))
    else:
        fig = ax.figure
    logical = np.zeros_like(smap.chunk)
    groups = np.zeros_like(smap.chunk)
    for r in range(rows):
        for c in range(cols):
            logical[r, smap.chunk[r, c]] = c
            groups[r, smap.chunk[r, c]] = smap.bank_group[r, c]
    ax.imshow(logical, cmap="tab10", vmin=0, vmax=9, aspect="auto")
    _grid(ax, rows, cols)
    for r in range(rows):
        for pc in range(cols):
            ax.text(pc, r, f"c{logical[r, pc]}\nb{4 * groups[r, pc]}-{4 * groups[r, pc] + 3}",
                    ha="center", va="center", fontsize=6)
    ax.set_title(f"swizzle {smap.mode or 'none'}: logical chunk c at its physical place "
                 f"(banks)", fontsize=9)
    ax.set_xlabel("physical 16-byte chunk in the row")
    ax.set_ylabel("row")
    return fig


def plot_tma_box(bmap, *, ax=None):
    """The boxes of a TMA load over their tensor: in-bounds box cells, cells written with the
    fill value, and the tensor's outline.

    Examples:
        >>> from jax_pyptx.viz import tma_box_map, plot_tma_box
        >>> fig = plot_tma_box(tma_box_map((10, 12), (4, 8), [(0, 0), (8, 8)]))
        >>> fig.axes[0].get_title()
        'TMA box (4, 8) over a (10, 12) tensor (orange: fill value)'
    """
    plt = _plt()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    rows, cols = bmap.cover.shape
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4, cols * 0.35), max(3, rows * 0.35)))
    else:
        fig = ax.figure
    ax.imshow(bmap.cover, cmap=ListedColormap(["#f4f4f4", "#4c9be8", "#f2a541"]), vmin=0,
              vmax=2, aspect="equal")
    oy, ox = bmap.origin
    ax.add_patch(Rectangle((ox - 0.5, oy - 0.5), bmap.dims[1], bmap.dims[0], fill=False,
                           linewidth=2, edgecolor="black"))
    for i, (y, x) in enumerate(bmap.coords):
        ax.add_patch(Rectangle((x + ox - 0.5, y + oy - 0.5), bmap.box[1], bmap.box[0],
                               fill=False, linewidth=1.5, edgecolor="#1f3b73", linestyle="--"))
        ax.text(x + ox, y + oy, f"box {i}", fontsize=7, va="top")
    ax.set_title(f"TMA box {bmap.box} over a {bmap.dims} tensor (orange: fill value)",
                 fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig
