"""Python side of the C++ launcher (``jax_pyptx._ffi``), loaded lazily.

Importing ``jax_pyptx`` never needs the extension; the first call here imports
it. :func:`ensure_registered` registers the XLA FFI target ``jax_pyptx_launch``
(with instantiate / prepare / initialize / execute stages and its state type):

* ``platform="CUDA"``: launches through libcuda on XLA's stream; marked
  command-buffer compatible (execute only enqueues kernels). On a CPU-only
  jaxlib the registration is queued, not an error.
* ``platform="cpu"``: the same C++ path with the *recording* driver table, so a
  jitted ``ffi_call`` on a CPU machine runs XLA -> handler -> launcher end to end
  and :func:`recorded_calls` shows what would have been launched.

Recorded calls are dicts with ``"fn"`` (the driver function) and ``"result"``
(its CUresult), plus per function:

* ``cuModuleLoadData`` (cubins) / ``cuModuleLoadDataEx`` (PTX JIT, with
  ``num_options``): ``image`` (bytes, also on failure) and, on success, ``module``;
* ``cuModuleGetFunction``: ``module``, ``name``, ``function``;
* ``cuFuncSetAttribute``: ``function``, ``name``, ``attribute``, ``value``;
* ``cuTensorMapEncodeTiled``: ``data_type``, ``rank``, ``global_address``,
  ``global_dims``, ``global_strides``, ``box_dims``, ``element_strides`` (tuples,
  innermost first), ``interleave``, ``swizzle``, ``l2_promotion``, ``oob_fill``;
* ``cuLaunchKernelEx``: ``function``, ``name``, ``grid``, ``block``, ``cluster``,
  ``smem``, ``stream``, ``num_attrs``, ``params`` (the parameter bytes in
  ``.entry`` order, concatenated without padding) and ``param_sizes``;
* ``cuModuleUnload``: ``module``;
* ``cuMemAlloc`` (``bytesize``, ``dptr``), ``cuMemcpyHtoD`` (``dst``, ``data``),
  ``cuMemFree`` (``dptr``): only stand-alone tensor maps use device memory
  (``extension().encode_tensor_map`` / ``mem_alloc`` / ``memcpy_htod`` / ``mem_free``,
  through ``pyptx.jax_support.synthesize_tma_descriptor``); the recording table
  allocates host memory.

Global-mode tensor maps are stored into the workspace by the built-in kernel
``STORE_KERNEL_NAME`` (recorded as a launch too; the recording table really
copies the descriptors, so the workspace output holds them). The recording
table fills each tensor map with a deterministic encoding of the encode
arguments: :func:`decode_recorded_tensor_map` reads it back.
"""
from __future__ import annotations

import importlib
import struct
import threading
from typing import Any, Sequence

from .ffi_plan import FFI_TARGET, LaunchPlan, plan_to_attrs

__all__ = [
    "FFI_TARGET", "STORE_KERNEL_NAME", "available", "ensure_registered", "set_recording",
    "recorded_calls", "recorded_launches", "clear_recording", "inject_driver_error",
    "torch_launch", "decode_recorded_tensor_map", "extension",
]

STORE_KERNEL_NAME = "jax_pyptx_store_tensormaps"

_lock = threading.Lock()
_ext: Any = None
_registered = False
_plans: dict[LaunchPlan, Any] = {}
_MAX_CACHED_PLANS = 1024


def extension():
    """The ``jax_pyptx._ffi`` module (ImportError with a build hint if missing)."""
    global _ext
    if _ext is None:
        try:
            _ext = importlib.import_module("jax_pyptx._ffi")
        except ImportError as e:
            raise ImportError(
                "jax_pyptx._ffi (the C++ launcher) is not built; build it with "
                "`pip install -e .` from the repository root") from e
    return _ext


def available() -> bool:
    """Whether the extension can be imported."""
    try:
        extension()
    except ImportError:
        return False
    return True


def _command_buffer_traits():
    try:
        from jax._src.lib import xla_client
        return {"traits": xla_client.CustomCallTargetTraits.COMMAND_BUFFER_COMPATIBLE}
    except (ImportError, AttributeError):  # older/newer jaxlib: rely on handler metadata
        return {}


def ensure_registered() -> None:
    """Register the FFI target and its state type for CUDA and cpu (idempotent)."""
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        ext = extension()
        import jax
        import jax.ffi

        # Initialize the backends first: registrations queued before a backend
        # exists are replayed handlers-before-types, which XLA rejects for a
        # stateful handler ("types ... must be registered before the handler").
        jax.devices()
        for platform in ("CUDA", "cpu"):
            jax.ffi.register_ffi_type(
                f"jax_pyptx_launch_state_{platform.lower()}", ext.state_type(platform),
                platform=platform)
            kw = _command_buffer_traits() if platform == "CUDA" else {}
            jax.ffi.register_ffi_target(FFI_TARGET, ext.handlers(platform), platform=platform,
                                        api_version=1, **kw)
        _registered = True


def set_recording(enabled: bool) -> None:
    """Route the CUDA handler and :func:`torch_launch` through the recording table.

    The cpu handler always records. Where libcuda is present, buffer addresses
    are device memory: the recording table then records the tensor-map store
    launch without emulating it (the workspace is left untouched).
    """
    extension().set_recording(bool(enabled))


def recorded_calls() -> list[dict]:
    """Every recorded driver call since the last :func:`clear_recording`, in order."""
    return list(extension().recorded_calls())


def recorded_launches(kernel_name: str | None = None) -> list[dict]:
    """The recorded ``cuLaunchKernelEx`` calls of user kernels (the built-in
    store kernel left out), optionally only those of ``kernel_name``."""
    return [c for c in recorded_calls()
            if c["fn"] == "cuLaunchKernelEx" and c.get("name") != STORE_KERNEL_NAME
            and (kernel_name is None or c.get("name") == kernel_name)]


def clear_recording(reset_device: bool = True) -> None:
    """Forget recorded calls. With ``reset_device`` (default) the recording
    table's loaded modules are dropped too (the next launch loads again) and
    pending injected errors are discarded."""
    extension().clear_recording(bool(reset_device))


def inject_driver_error(fn_name: str, code: int) -> None:
    """Make the recording table's next call of ``fn_name`` return ``code``."""
    extension().inject_driver_error(str(fn_name), int(code))


def _native_plan(plan: LaunchPlan):
    native = _plans.get(plan)
    if native is None:
        native = extension().Plan(plan_to_attrs(plan))
        with _lock:
            if len(_plans) >= _MAX_CACHED_PLANS:
                _plans.clear()
            _plans[plan] = native
    return native


def torch_launch(plan: LaunchPlan, pointers: Sequence[int], stream: int,
                 sizes: Sequence[int] | None = None) -> None:
    """Launch ``plan`` on raw device pointers (PyTorch path).

    ``pointers``: one address per operand, inputs then outputs, then -- when
    ``plan.workspace_bytes > 0`` -- a device buffer of at least that many bytes,
    64-byte aligned, that the launch may overwrite. ``stream``: a CUstream as an
    int (0: the legacy default stream). ``sizes`` (bytes per pointer), when
    given, lets the launcher check every tensor map against its buffer.
    """
    extension().launch(_native_plan(plan), [int(p) for p in pointers], int(stream),
                       None if sizes is None else [int(s) for s in sizes])


_TMAP = struct.Struct("<Q5Q4Q5I5I6B2s")


def decode_recorded_tensor_map(data: bytes) -> dict:
    """Decode a 128-byte tensor map written by the recording table."""
    if len(data) != 128:
        raise ValueError(f"a tensor map is 128 bytes, got {len(data)}")
    v = _TMAP.unpack(data)
    if v[-1] != b"PX":
        raise ValueError("not a tensor map encoded by the recording driver table")
    rank = v[21]
    return {
        "global_address": v[0],
        "global_dims": tuple(v[1:1 + rank]),
        "global_strides": tuple(v[6:6 + rank - 1]),
        "box_dims": tuple(v[10:10 + rank]),
        "element_strides": tuple(v[15:15 + rank]),
        "data_type": v[20],
        "rank": rank,
        "interleave": v[22],
        "swizzle": v[23],
        "l2_promotion": v[24],
        "oob_fill": v[25],
    }
