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
profiler or other profile hook installed; otherwise (a run under cProfile) the interrupt goes
through XLA as before. On several devices the launches run on XLA's threads, which Python
never interrupts: Ctrl-C raises ``KeyboardInterrupt`` on the main thread, in its wait for the
results, while they go on. When Python then exits, :func:`_stop_at_exit` stops them (the
interpreter's ``progress.STOP``) and waits for them, so that the process does not finalize
under a running callback (a fatal error).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["call", "running"]

_state: dict = {"pending": None}          # the name of the kernel whose interrupt is deferred
_running = threading.Condition()          # guards _state["others"]: launches on other threads
_state["others"] = 0


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


def call(label: str, launch, zeros):
    """``launch()``, or, when Ctrl-C interrupts it and it can be deferred, ``zeros()`` with
    the interrupt to be raised at the caller's line (module docstring). An interrupt already
    deferred skips the launch: ``zeros()``."""
    if _state["pending"] is not None:
        return zeros()
    if threading.current_thread() is not threading.main_thread():
        with running():
            return launch()
    try:
        return launch()
    except KeyboardInterrupt:
        if sys.getprofile():
            raise
        _state["pending"] = label
        sys.setprofile(_deliver)
        return zeros()


@contextmanager
def running():
    """Marks a host callback of this package running on a thread other than the main one
    (the launch, the check of its status): Python's exit waits for it (:func:`_stop_at_exit`).
    """
    if threading.current_thread() is threading.main_thread():
        yield
        return
    with _running:
        _state["others"] += 1
        if not _state.get("exit_hook"):
            # registered now, after JAX's own exit hooks (some wait for running computations):
            # atexit runs the last registered first
            _state["exit_hook"] = True
            atexit.register(_stop_at_exit)
    try:
        yield
    finally:
        with _running:
            _state["others"] -= 1
            _running.notify_all()


def _stop_at_exit(wait: float = 30.0, grace: float = 0.2):
    """Stop the launches still running on other threads and wait for them, and for XLA to
    take its thread back from the last one (``grace`` seconds: the callback's return runs a
    few lines of JAX's code after ours) (module docstring)."""
    from ..interpret.scheduler import progress

    with _running:
        if not _state["others"]:
            return
    progress.STOP.set()
    with _running:
        _running.wait_for(lambda: _state["others"] == 0, timeout=wait)
    time.sleep(grace)


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
