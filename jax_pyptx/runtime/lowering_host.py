"""The interpreter lowering of ``pyptx_call``: a host callback into the CPU interpreter
(``host.host_launch``), on the CPU or on any platform with ``interpret=True``.

Errors. An error the interpreter raises inside the callback (an out-of-bounds access, a race,
a deadlock) reaches the user through XLA as ``JaxRuntimeError: INTERNAL: CpuCallback error
calling callback: ...`` followed by the Python stack, and JAX logs the traceback once more on
stderr. :func:`guarded_launch` keeps that short: the callback raises an exception of the same
class name and message whose traceback is one frame at the user's line, so the message reads

    INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):
      File "model.py", line 12, in my_kernel
    OutOfBoundsError: model.py:12: out-of-bounds global load ld.global.f32 %f0, [%rd2+4096];
    by thread (0,0,0) of CTA (0,0,0): ...

and JAX's log record of it is dropped (other callbacks' errors are logged as before). An eager
call re-raises the original exception, type and traceback (:func:`original_error`, read by the
primitive's impl).
"""
from __future__ import annotations

import _thread
import keyword
import logging
import threading
from collections import OrderedDict
from functools import partial

import numpy as np

import jax
from jax.interpreters import mlir

from .callspec import CallSpec
from .host import host_launch

__all__ = ["interpreter_lowering", "guarded_launch", "guarded_call", "original_error",
           "CallbackError"]


def interpreter_lowering(ctx, args, spec: CallSpec):
    """Lower to a host callback into the interpreter."""
    if spec.host_callback is not None:
        return _prebound_callback(ctx, args, spec.host_callback)
    out_types = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ctx.avals_out]

    def run(*xs):
        return list(jax.pure_callback(partial(guarded_launch, spec), out_types, *xs))

    return mlir.lower_fun(run, multiple_results=True)(ctx, *args)


# ----------------------------------------------------------------------------- errors
class CallbackError(Exception):
    """An interpreter error as a JAX host callback raises it: the original's class name and
    message (each original class gets a subclass of this one with its name)."""


_SHORT_TYPES: dict = {}
_RECENT: "OrderedDict[str, BaseException]" = OrderedDict()    # message -> original error
_RECENT_MAX = 64
_lock = threading.Lock()


def guarded_launch(spec: CallSpec, *arrays):
    """``host_launch`` for a JAX callback: an error comes out short (see the module
    docstring) and is remembered for an eager call to re-raise."""
    try:
        return host_launch(spec, *arrays)
    except Exception as e:
        raise _for_jax(e, spec.label) from None


def guarded_call(label: str, fn, *args):
    """``fn(*args)`` inside a JAX host callback, its error made short as
    :func:`guarded_launch` makes an interpreter error (the paths that run the interpreter
    without a ``CallSpec``: ``pyptx.jax_support.call_kernel_via_ffi``)."""
    try:
        return fn(*args)
    except Exception as e:
        raise _for_jax(e, label) from None


def original_error(err: BaseException):
    """The interpreter error a JAX error (``JaxRuntimeError`` of a host callback) carries, or
    None. Removes it from the ones remembered."""
    text = str(err)
    with _lock:
        for msg in reversed(_RECENT):
            if msg in text:
                return _RECENT.pop(msg)
    return None


def _for_jax(e: Exception, label: str) -> Exception:
    msg = str(e)
    with _lock:
        _RECENT[msg] = e
        _RECENT.move_to_end(msg)
        while len(_RECENT) > _RECENT_MAX:
            _RECENT.popitem(last=False)
    cls = type(e)
    short_cls = _SHORT_TYPES.get(cls)
    if short_cls is None:
        short_cls = _SHORT_TYPES[cls] = type(cls.__name__, (CallbackError,), {
            "__module__": cls.__module__,
            "__doc__": f"{cls.__name__} raised inside a JAX host callback."})
    short = short_cls(msg)
    # the frame shown is the user's line (a traced kernel) or the PTX text's (a kernel run
    # from PTX: a ``TextLoc``); anything else gets a frame at line 4 of ``<ptx>``, so that no
    # Python stack of the callback follows the message
    loc = getattr(e, "loc", None)
    file, line = getattr(loc, "file", None), getattr(loc, "line", None)
    if not (isinstance(file, str) and isinstance(line, int) and line >= 4):
        file, line = "<ptx>", 4
    name = label if label.isidentifier() and not keyword.iskeyword(label) else "kernel"
    tb = _traceback_at(short, file, line, name)
    if tb is not None:
        short = short.with_traceback(tb)
    return short


def _traceback_at(exc: BaseException, file: str, line: int, name: str):
    """A traceback of one frame, ``file:line`` in ``name``, with no caller: XLA prints the
    Python stack of a callback's error from its innermost frame up (``f_back``), so an error
    raised in a thread's first frame shows that one frame alone."""
    # XLA prints the frame's current line: the last statement executed sits on ``line``
    src = "\n" * (line - 4) + (f"def {name}(exc, box, done):\n"
                               f" try: raise exc\n"
                               f" except BaseException as e: box.append(e.__traceback__)\n"
                               f" done.release()\n")
    try:
        scope: dict = {}
        exec(compile(src, file, "exec"), scope)
        box: list = []
        done = _thread.allocate_lock()
        done.acquire()
        _thread.start_new_thread(scope[name], (exc, box, done))
        done.acquire()
        return box[0] if box else None
    except Exception:       # the short form is a nicety: never fail the report over it
        return None


class _DropOurLogRecords(logging.Filter):
    """JAX logs a callback's error with its traceback before raising it; ours is reported
    in the raised error itself."""

    def filter(self, record):
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, CallbackError)


logging.getLogger("jax._src.callback").addFilter(_DropOurLogRecords())


def _prebound_callback(ctx, args, index: int):
    """The host-callback custom call for a callback the *enclosing* module registered.

    Per-shard modules built by custom_partitioning's partition step are compiled into the
    outer executable, which only carries the outer module's host callbacks; a callback
    registered while lowering the per-shard module would be lost. ``sharding`` registers the
    callback on the outer module and the per-shard call refers to it by index.
    """
    from jax import ffi

    platform = ctx.module_context.platforms[0]
    device = "gpu" if platform in ("cuda", "rocm") else "cpu"
    rule = ffi.ffi_lowering(f"xla_ffi_python_{device}_callback", has_side_effect=False)
    return rule(ctx, *args, index=np.uint64(index))
