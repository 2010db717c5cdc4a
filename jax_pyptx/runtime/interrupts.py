"""Ctrl-C while the interpreter runs inside a JAX host callback, raised as
``KeyboardInterrupt`` at the caller's line.

Under ``jax.jit`` (and in an eager call, which JAX runs as a jitted primitive) the interpreter
runs inside a host callback, and XLA turns whatever a callback raises into its own
``JaxRuntimeError``. So an interrupt that lands in a launch is deferred instead of raised
through XLA:

1. Ctrl-C raises ``KeyboardInterrupt`` inside the interpreter, which stops the launch where
   it is; :func:`call` catches it, records the kernel's name and returns the launch's zero
   outputs, so XLA finishes the call without an error (a later launch of the same program
   returns its zeros at once);
2. meanwhile a profile hook (``sys.setprofile``, on this thread) watches the Python calls and
   returns: the first one outside the host callbacks (JAX's callback wrapper, this package's
   launch) removes the hook and raises ``KeyboardInterrupt("interrupted (Ctrl-C) while the
   interpreter ran kernel 'name'")`` there. That is in the caller's frame, or in JAX's code
   between XLA and it, before the caller's next statement runs: the zero outputs are never
   used.

Deferral needs the launch on the main thread (the one Python delivers signals to) and no
profiler or other profile hook installed; otherwise (one device's callback of a sharded call
on another thread, a run under cProfile) the interrupt goes through XLA as before.
"""
from __future__ import annotations

import os
import sys
import threading

__all__ = ["call", "deferred"]

_state: dict = {"pending": None}          # the name of the kernel whose interrupt is deferred


def _callback_files() -> frozenset:
    """Source files whose frames mean Python runs inside a host callback: JAX's callback
    wrapper and this package's launch modules."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, name) for name in
             ("interrupts.py", "lowering_host.py", "sharding.py", "host_call.py")]
    try:
        from jax._src import callback

        files.append(callback.__file__)
    except ImportError:      # pragma: no cover - an older/newer JAX layout
        pass
    return frozenset(files) | {os.path.abspath(f) for f in files} | {__file__}


_CALLBACK_FILES = _callback_files()


def deferred() -> str | None:
    """The name of the kernel whose interrupt is deferred (on its way to the caller), or
    None."""
    return _state["pending"]


def call(label: str, launch, zeros):
    """``launch()``, or, when Ctrl-C interrupts it and it can be deferred, ``zeros()`` with
    the interrupt to be raised at the caller's line (module docstring). An interrupt already
    deferred skips the launch: ``zeros()``."""
    if _state["pending"] is not None:
        return zeros()
    try:
        return launch()
    except KeyboardInterrupt:
        if threading.current_thread() is not threading.main_thread() or sys.getprofile():
            raise
        _state["pending"] = label
        sys.setprofile(_deliver)
        return zeros()


def _deliver(frame, event, arg):
    """The profile hook of a deferred interrupt: raises it at the first call or return
    outside the host callbacks."""
    if _inside_callback(frame):
        return
    label, _state["pending"] = _state["pending"], None
    sys.setprofile(None)
    raise KeyboardInterrupt(f"interrupted (Ctrl-C) while the interpreter ran kernel {label!r}")


def _inside_callback(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename in _CALLBACK_FILES:
            return True
        frame = frame.f_back
    return False
