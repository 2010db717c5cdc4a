"""mkdocs hook: draw the figures the guides show (jax_pyptx.viz) at build time and add them to
the site's files, so pages reference them as ``figures/<name>.png`` (relative to the docs
root) and strict link checking sees them. Nothing is written into ``docs/``."""
from __future__ import annotations

import os
import tempfile

_TMP = None


def _figures():
    from jax_pyptx.viz import (ldmatrix_map, mma_map, plot_fragment, plot_swizzle, plot_tma_box,
                               swizzle_map, tcgen05_ld_map, tma_box_map, wgmma_map)

    yield "mma_m16n8k16_a_bf16", lambda: plot_fragment(mma_map("m16n8k16", "a", "bf16"))
    yield "mma_m16n8k16_b_bf16", lambda: plot_fragment(mma_map("m16n8k16", "b", "bf16"))
    yield "mma_m16n8k16_c_f32", lambda: plot_fragment(mma_map("m16n8k16", "c", "f32"))
    yield "mma_m16n8k32_a_s8", lambda: plot_fragment(mma_map("m16n8k32", "a", "s8"))
    yield "ldmatrix_x4", lambda: plot_fragment(ldmatrix_map(4))
    yield "ldmatrix_x2_trans", lambda: plot_fragment(ldmatrix_map(2, trans=True))
    yield "wgmma_m64n16_d_f32", lambda: plot_fragment(wgmma_map(16))
    yield "wgmma_a_bf16", lambda: plot_fragment(wgmma_map(64, "a", "bf16"))
    for shape, num in (("32x32b", 2), ("16x64b", 2), ("16x128b", 1), ("16x256b", 1),
                       ("16x32bx2", 1)):
        yield f"tcgen05_ld_{shape}_x{num}", lambda s=shape, n=num: plot_fragment(
            tcgen05_ld_map(s, n))
    for mode in (None, "32B", "64B", "128B", "128B_base32B"):
        yield f"swizzle_{mode or 'none'}", lambda m=mode: plot_swizzle(swizzle_map(m))
    yield "tma_box_edges", lambda: plot_tma_box(tma_box_map((10, 12), (4, 8), [(0, 0), (8, 8)]))
    yield "tma_box_grid", lambda: plot_tma_box(
        tma_box_map((10, 40), (8, 32), [(0, 0), (0, 32), (8, 0), (8, 32)]))


def on_files(files, config, **kwargs):
    global _TMP
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mkdocs.structure.files import File

    _TMP = tempfile.TemporaryDirectory(prefix="jax-pyptx-figures-")
    os.makedirs(os.path.join(_TMP.name, "figures"))
    for name, draw in _figures():
        fig = draw()
        fig.savefig(os.path.join(_TMP.name, "figures", f"{name}.png"), dpi=110,
                    bbox_inches="tight")
        plt.close(fig)
        files.append(File(f"figures/{name}.png", _TMP.name, config["site_dir"],
                          config["use_directory_urls"]))
    return files


def on_post_build(config, **kwargs):
    global _TMP
    if _TMP is not None:
        _TMP.cleanup()
        _TMP = None
