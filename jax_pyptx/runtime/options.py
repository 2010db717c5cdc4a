"""Runtime options attached to a kernel once (:func:`configure`). No JAX here (the PyTorch
runtime reads them too). The options themselves, their checks and how a call's options merge
over these are ``jax_pyptx.specialize.options`` (``CallOptions``).

The options live in a registry keyed by the kernel (weakly), not on the kernel object.
"""
from __future__ import annotations

import threading
import weakref

from ..errors import SpecializationError
from ..specialize.binding import did_you_mean
from ..specialize.options import check_options, check_schedule, option_names

__all__ = ["configure", "runtime_options", "OPTIONS"]

OPTIONS = option_names("configure")
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
    seed, ``jax_pyptx.interpret.launch``). Each is checked here (``CallOptions``); a call's
    own options override them.

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> k = twice()                                  # Y = 2 * X over 32 floats
        >>> import jax_pyptx
        >>> jax_pyptx.configure(k, interpret=True) is k
        True
    """
    unknown = [k for k in options if k not in OPTIONS]
    if unknown:
        raise SpecializationError(f"configure(): unknown option {unknown[0]!r}"
                                  f"{did_you_mean(unknown[0], OPTIONS)}; options: "
                                  f"{', '.join(OPTIONS)}")
    checked = check_options(kernel, options)
    with _lock:
        opts = dict(_options.get(kernel, {}))
        opts.update(checked)
        check_schedule(opts)        # with what was attached before
        _options[kernel] = {n: v for n, v in opts.items() if v is not None}
    return kernel


def runtime_options(kernel) -> dict:
    """The options :func:`configure` attached to ``kernel``, checked (a copy)."""
    return dict(_options.get(kernel, {}))
