"""Runtime options attached to a kernel once (:func:`configure`), and their normalization.
No JAX here (the PyTorch runtime reads them too).

The options live in a registry keyed by the kernel (weakly), not on the kernel object.
"""
from __future__ import annotations

import threading
import weakref

from ..errors import SpecializationError
from ..specialize.dims import dim3
from .callspec import AXES

__all__ = ["configure", "runtime_options", "check_independent", "norm_covers", "norm_grid",
           "norm_aliases", "OPTIONS"]

OPTIONS = ("independent", "covers", "backward", "save_outputs", "interpret", "grid", "max_steps",
           "timeout", "timeline", "schedule", "seed")
_options: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def configure(kernel, **options):
    """Attach runtime options to ``kernel`` (returns it): ``independent=("M",)``,
    ``covers={"M": (axis, elements_per_block)}``, ``backward=<Kernel or function>``,
    ``save_outputs=bool`` (the backward also receives the forward's outputs), ``interpret``,
    ``grid``, ``max_steps`` / ``timeout`` (the CPU interpreter's instruction and time limits;
    None: its defaults), ``timeline`` (a path: each interpreted call writes its Chrome /
    Perfetto trace there, ``jax_pyptx.interpret.launch``), ``schedule`` / ``seed`` (when the
    CPU interpreter completes asynchronous work: ``"eager"``, ``"late"`` or ``"random"`` with a
    seed, ``jax_pyptx.interpret.launch``).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def twice(X, Y):
        ...     off = reg.cvt(ptx.special.tid.x(), u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> import jax_pyptx
        >>> jax_pyptx.configure(twice, interpret=True) is twice
        True
    """
    unknown = [k for k in options if k not in OPTIONS]
    if unknown:
        from ..specialize.binding import did_you_mean

        raise SpecializationError(f"configure(): unknown option {unknown[0]!r}"
                                  f"{did_you_mean(unknown[0], OPTIONS)}; options: "
                                  f"{', '.join(OPTIONS)}")
    if "independent" in options:
        check_independent(kernel, options["independent"])
    if "timeline" in options:
        from ..interpret.timeline import check_path
        options = dict(options, timeline=check_path(options["timeline"]))
    with _lock:
        opts = dict(_options.get(kernel, {}))
        opts.update(options)
        if "schedule" in options or "seed" in options:
            from ..interpret.schedule import make_schedule
            make_schedule(opts.get("schedule", "eager"), opts.get("seed"))
        _options[kernel] = opts
    return kernel


def runtime_options(kernel) -> dict:
    """The options :func:`configure` attached to ``kernel`` (a copy)."""
    return dict(_options.get(kernel, {}))


def check_independent(kernel, independent) -> None:
    for s in independent or ():
        if s not in kernel.shape_vars:
            raise SpecializationError(
                f"kernel {kernel.name!r}: independent dim {s!r} is not a shape variable; "
                f"shape variables: {', '.join(kernel.shape_vars) or 'none'}")


def norm_covers(kernel, covers) -> tuple:
    if not covers:
        return ()
    out = []
    for sym, v in dict(covers).items():
        if sym not in kernel.shape_vars:
            raise SpecializationError(f"kernel {kernel.name!r}: covers names {sym!r}, not a "
                                      f"shape variable ({', '.join(kernel.shape_vars)})")
        axis, per = v
        axis = AXES.index(axis) if isinstance(axis, str) else int(axis)
        out.append((sym, axis, int(per)))
    return tuple(out)


def norm_grid(grid):
    if grid is None or callable(grid):
        return grid
    return dim3(grid, "ptx_call grid")


def norm_aliases(aliases) -> tuple:
    if not aliases:
        return ()
    return tuple(sorted((int(i), int(o)) for i, o in dict(aliases).items()))
