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

On several devices (sharded ``jit`` of a call that is not partitioned, ``shard_map``) the
error is raised on every device at once, whichever device's launch failed (see "several
devices" below): an error on one device alone leaves the others stuck in their next collective
until XLA aborts the process. A partitioned call (``independent=``) still raises on the
failing shards only.
"""
from __future__ import annotations

import _thread
import atexit
import keyword
import logging
import random
import threading
from collections import OrderedDict
from functools import partial

import numpy as np

import jax
from jax.interpreters import mlir

from . import interrupts
from .callspec import CallSpec
from .host_call import host_launch

__all__ = ["interpreter_lowering", "guarded_launch", "guarded_call", "original_error",
           "CallbackError"]


def interpreter_lowering(ctx, args, spec: CallSpec):
    """Lower to a host callback into the interpreter."""
    if spec.host_callback is not None:
        return _prebound_callback(ctx, args, spec.host_callback)
    out_types = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ctx.avals_out]
    n = _auto_devices(ctx)
    if n > 1:
        return mlir.lower_fun(partial(_run_on_one_device, spec, out_types, n),
                              multiple_results=True)(ctx, *args)
    axes = _manual_axes(ctx)
    if axes:
        return mlir.lower_fun(partial(_run_on_each_device, spec, out_types, axes),
                              multiple_results=True)(ctx, *args)

    def run(*xs):
        return list(jax.pure_callback(partial(guarded_launch, spec), out_types, *xs))

    return mlir.lower_fun(run, multiple_results=True)(ctx, *args)


# ----------------------------------------------------------------------- several devices
# An error raised in one device's callback stops that device's program where it is, while
# the other devices go on to their next collective and wait in it for the failed one until
# XLA gives up and aborts the process (about 40 s, "Termination timeout for all reduce").
# XLA cancels no collective when a participant fails, so on several devices the launch never
# raises: it returns a status (0, or the number of its recorded error) along with its
# outputs, every device learns the largest status of all, and a check callback on every
# device raises that error at the same point of every program. The outputs pass through the
# check (it returns them), so their users wait for it; no elementwise op ties them to it (XLA
# drops a pure callback's unused result, and under an explicit mesh a ``where`` in a shard's
# module brings a sharding annotation that the host backend cannot run).

_FAILED: "OrderedDict[int, tuple]" = OrderedDict()     # status -> (class, message, traceback)
# numbered from a random start: processes of a cluster share statuses through collectives
_next_status = [random.SystemRandom().randrange(1, 2 ** 30)]
_STATUS = jax.ShapeDtypeStruct((), np.int32)


def _auto_devices(ctx) -> int:
    """The device count of an automatically partitioned (sharded ``jit``) lowering; 1 for
    one device and inside ``shard_map``."""
    from jax._src import sharding_impls as si

    ac = ctx.module_context.axis_context
    return ac.num_devices if isinstance(ac, si.ShardingContext) else 1


def _manual_axes(ctx) -> tuple:
    """The mesh axes ``(name, size)`` of a per-device lowering over more than one device
    (``shard_map``, a partitioned call's shard); () otherwise."""
    from jax._src import sharding_impls as si

    ac = ctx.module_context.axis_context
    if (isinstance(ac, si.SPMDAxisContext) and ac.mesh.size > 1
            and set(ac.manual_axes) == set(ac.mesh.axis_names)):
        return tuple(ac.mesh.shape.items())
    return ()


def _run_on_one_device(spec: CallSpec, out_types, n: int, *xs):
    """A sharded ``jit`` whose call is not partitioned: JAX runs the callback on device 0
    alone and XLA sends its results to the other ``n - 1`` through a collective; the check
    runs on all ``n`` (under a ``shard_map``: a callback under ``jit`` runs on device 0), over
    the context mesh (``jax.set_mesh``) if there is one."""
    from jax._src.mesh import get_abstract_mesh
    from jax.sharding import AbstractMesh

    mesh = get_abstract_mesh()
    if mesh.empty or mesh.size != n:
        mesh = AbstractMesh((n,), ("_pyptx_devices",))
    return _launch_and_check(spec, out_types, (), xs, check_over=mesh)


def _run_on_each_device(spec: CallSpec, out_types, axes, *xs):
    """``shard_map`` over several devices: each runs the callback on its own shard."""
    return _launch_and_check(spec, out_types, axes, xs)


def _launch_and_check(spec: CallSpec, out_types, axes, xs, check_over=None):
    """The launch, then the check (:func:`_pass_if_ok`) of the largest status over the mesh
    ``axes``, its outputs passed through; ``check_over``: the mesh of a ``shard_map`` that runs
    the check on every device."""
    *outs, status = jax.pure_callback(partial(_launch_with_status, spec),
                                      [*out_types, _STATUS], *xs)
    if axes:
        from jax._src import core

        with core.extend_axis_env_nd(axes):
            status = jax.lax.pmax(status, tuple(name for name, _ in axes))

    def check(s, *o):
        return jax.pure_callback(_pass_if_ok, list(out_types), s, *o)

    if check_over is not None:
        from jax.sharding import PartitionSpec as P

        check = jax.shard_map(check, mesh=check_over, in_specs=P(), out_specs=P(),
                              check_vma=False)
    return list(check(status, *outs))


def _launch_with_status(spec: CallSpec, *arrays):
    """``host_launch``'s outputs and status 0, or zeros and the status of the error it
    raised (recorded for :func:`_pass_if_ok`). Never raises."""
    with interrupts.running():
        return _launch_or_record(spec, arrays)


def _launch_or_record(spec: CallSpec, arrays):
    try:
        return (*interruptible_launch(spec, *arrays), np.asarray(0, np.int32))
    except (Exception, KeyboardInterrupt) as e:
        short = _for_jax(_interrupted(e, spec.label), spec.label)
        with _lock:
            _next_status[0] = _next_status[0] % (2 ** 31 - 1) + 1
            status = _next_status[0]
            _FAILED[status] = (type(short), str(short), short.__traceback__)
            while len(_FAILED) > _RECENT_MAX:
                _FAILED.popitem(last=False)
        return (*_zeros(spec), np.asarray(status, np.int32))


def _zeros(spec: CallSpec) -> list:
    return [np.zeros(shape, dtype) for shape, dtype in spec.out_avals()]


def interruptible_launch(spec: CallSpec, *arrays):
    """``host_launch``, or its zero outputs when Ctrl-C stops it: the interrupt is then
    raised as ``KeyboardInterrupt`` at the caller's line once XLA returns (``interrupts``)."""
    return interrupts.call(spec.label, partial(host_launch, spec, *arrays),
                           partial(_zeros, spec))


def _pass_if_ok(status, *outs):
    """The check: ``outs`` when ``status`` is 0, else the error recorded as ``status`` raised
    (a fresh exception per device, of the short form)."""
    with interrupts.running():
        return _raise_if_failed(int(status), outs)


def _raise_if_failed(status: int, outs):
    if status:
        with _lock:
            failed = _FAILED.get(status)
            if failed is None:      # recorded for this process's other devices (and exit)
                failed = _FAILED[status] = (
                    CallbackError, f"the interpreter failed on a device of another process "
                                   f"(error #{status}): that process raised its error", None)
        cls, msg, tb = failed
        raise cls(msg).with_traceback(tb)
    return outs


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
    with interrupts.running():
        return guarded_call(spec.label, interruptible_launch, spec, *arrays)


def guarded_call(label: str, fn, *args):
    """``fn(*args)`` inside a JAX host callback, its error made short (see the module
    docstring) and remembered for an eager call to re-raise (:func:`original_error`)."""
    try:
        return fn(*args)
    except (Exception, KeyboardInterrupt) as e:
        raise _for_jax(_interrupted(e, label), label) from None


def _interrupted(e: BaseException, label: str) -> BaseException:
    """A ``KeyboardInterrupt`` (Ctrl-C while the interpreter runs inside the callback) with
    a message saying where; XLA turns what the callback raises into its own error, and an
    eager call re-raises the original (``primitive._impl``): a ``KeyboardInterrupt``."""
    if isinstance(e, KeyboardInterrupt):
        return KeyboardInterrupt(f"interrupted (Ctrl-C) while the interpreter ran kernel "
                                 f"{label!r}")
    return e


def original_error(err: BaseException):
    """The interpreter error a JAX error (``JaxRuntimeError`` of a host callback) carries, or
    None. Removes it from the ones remembered."""
    text = str(err)
    with _lock:
        for msg in reversed(_RECENT):
            if msg in text:
                return _RECENT.pop(msg)
    return None


def _for_jax(e: BaseException, label: str) -> Exception:
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


def _drop_reported_token_errors():
    """At exit JAX waits on each device's last runtime token and prints the error of a
    failed multi-device execution there once more ("Exception ignored in atexit callback",
    twice). An interpreter error raised on every device (``_pass_if_ok``) has already
    reached the user through the call's results: its tokens are dropped. Registered after
    JAX's own exit handlers, so it runs before them."""
    try:
        from jax._src import dispatch

        tokens = dispatch.runtime_tokens.output_runtime_tokens
        with _lock:
            ours = {m for _cls, m, _tb in _FAILED.values()}
        for device, token in list(tokens.items()):
            try:
                token.block_until_ready()
            except Exception as e:
                text = str(e)
                if "CpuCallback error" in text and any(m in text for m in ours):
                    tokens.pop(device, None)
    except Exception:       # a JAX without these internals: leave its report as it is
        pass


atexit.register(_drop_reported_token_errors)


def _prebound_callback(ctx, args, index: int):
    """The host-callback custom call for a callback the *enclosing* module registered.

    Per-shard modules built by custom_partitioning's partition step are compiled into the
    outer executable, which only carries the outer module's host callbacks; a callback
    registered while lowering the per-shard module would be lost. ``sharding`` registers the
    callback on the outer module and the per-shard call refers to it by index. (Each shard
    raises its own error: a shard failing alone, followed by a collective, can still leave
    the others waiting; see the module docstring.)
    """
    from jax import ffi

    platform = ctx.module_context.platforms[0]
    device = "gpu" if platform in ("cuda", "rocm") else "cpu"
    rule = ffi.ffi_lowering(f"xla_ffi_python_{device}_callback", has_side_effect=False)
    return rule(ctx, *args, index=np.uint64(index))
