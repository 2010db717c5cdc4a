"""``pyptx.jax_support``: the documented low-level JAX runtime names, on our launcher.

Kernels need none of this: ``k(x, w)`` on JAX arrays binds the ``pyptx_call`` primitive
(``docs/runtime.md``). These names serve code written against pyptx's own plumbing, which
compiles PTX to a handle, attaches a launch configuration, scalars and tensor maps to it and
calls it through XLA's FFI:

    from pyptx.jax_support import (add_tma_spec_to_shim, call_kernel_via_ffi,
                                   compile_ptx_to_cubin, register_launch_config,
                                   synthesize_tma_descriptor)

    h = compile_ptx_to_cubin(ptx_text, "sm_90a", kernel_name="copy")
    register_launch_config(h, None, grid=(4, 1, 1), block=(128, 1, 1))
    y = call_kernel_via_ffi(x, cubin_handle=h, out_specs=(Tile("N", f32),),
                            out_shape_env={"N": 512}, grid=(4, 1, 1), block=(128, 1, 1))

Here a handle is a :class:`CubinRecord` of ``cubin_registry`` (PTX, cubin, launch
configuration). A call binds the ``pyptx_call`` primitive like every kernel call, with a
``CallSpec`` whose kernel is the record's launch description (``record_kernel``): the
launcher's XLA custom call ``jax_pyptx_launch`` with the record's ``LaunchPlan`` on CUDA (the
module loaded per context, tensor maps encoded from the live buffers, ``jax.export`` works),
the interpreter on the CPU, and the primitive's vmap (one launch per item: hand-written PTX
reads its own buffer parameters) and sharding rules. ``set_mock_ffi_callback`` has no meaning
here (see its error); tests read the recording driver table instead.

Examples:
    >>> from pyptx import Tile
    >>> from pyptx.types import f32
    >>> from jax_pyptx.example_kernels import twice
    >>> import jax.numpy as jnp
    >>> from pyptx.jax_support import (call_kernel_via_ffi, compile_ptx_to_cubin,
    ...                                 register_launch_config)
    >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a", kernel_name="twice")
    >>> register_launch_config(h, None, grid=(1, 1, 1), block=(32, 1, 1))
    >>> y = call_kernel_via_ffi(jnp.ones(32, jnp.float32), cubin_handle=h, out_specs=(Tile(32, f32),),
    ...                         out_shape_env={}, grid=(1, 1, 1), block=(32, 1, 1))
    >>> y[:3]
    Array([2., 2., 2.], dtype=float32)
"""
from __future__ import annotations

import os
from types import SimpleNamespace

from ..errors import NotSupportedError, SpecializationError
from ..runtime.ffi_plan import ptx_sha256
from .cubin_registry import (CubinRecord, CubinRegistry, as_ptx_type,
                             get_cubin_registry, resolve_outputs, synthesize_tensor_map,
                             synthesize_tensor_map_3d, tensor_map_at)
from .record_kernel import parsed, record_kernel

__all__ = ["CubinRecord", "CubinRegistry", "get_cubin_registry", "shim_is_available",
           "shim_load_error", "compile_ptx_to_cubin", "register_launch_config",
           "add_scalar_param_to_shim", "add_tma_spec_to_shim", "set_mock_ffi_callback",
           "ensure_ffi_registered", "call_kernel_via_ffi", "synthesize_tma_descriptor",
           "synthesize_tma_descriptor_3d"]


def shim_is_available() -> bool:
    """Whether the C++ launcher (``jax_pyptx._ffi``) can be imported.

    >>> isinstance(shim_is_available(), bool)
    True
    """
    from ..runtime.ffi_bridge import available

    return available()


def shim_load_error() -> str | None:
    """Why the C++ launcher cannot be imported (None when it can)."""
    from ..runtime.ffi_bridge import extension

    try:
        extension()
    except ImportError as e:
        return str(e)
    return None


def ensure_ffi_registered() -> None:
    """Register the launcher's XLA FFI target ``jax_pyptx_launch`` (CUDA and the recording
    CPU handler); idempotent. Kernel calls do this themselves."""
    from ..runtime.ffi_bridge import ensure_registered

    ensure_registered()


def _entry_names(ptx: str) -> list:
    return [f.name for f in parsed(ptx).functions if f.kind == ".entry"]


def compile_ptx_to_cubin(ptx: str, arch: str, kernel_name: str = "",
                         dynamic_smem_bytes: int = 0) -> int:
    """Compile ``ptx`` for ``arch`` and register it: returns the handle.

    ptxas runs through the toolchain's disk cache and the cubin is published where the
    launcher looks for it (without a ptxas the launcher JIT-compiles the PTX);
    ``kernel_name`` defaults to the module's only ``.entry``; ``dynamic_smem_bytes`` is the
    least dynamic shared memory every launch gets.

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> from pyptx.jax_support import compile_ptx_to_cubin
        >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a")
        >>> from pyptx.jax_support import get_cubin_registry
        >>> rec = get_cubin_registry().get(h)
        >>> rec.kernel_name, rec.arch
        ('twice', 'sm_90a')
    """
    from ..isa.model import parse_target
    from ..runtime.launch_plan import ensure_cubin

    parse_target(arch)
    entries = _entry_names(ptx)
    if not kernel_name:
        if len(entries) != 1:
            raise SpecializationError(f"compile_ptx_to_cubin: the PTX has entries "
                                      f"{entries or 'none'}; pass kernel_name=")
        kernel_name = entries[0]
    elif kernel_name not in entries:
        raise SpecializationError(f"compile_ptx_to_cubin: no .entry {kernel_name!r} in the "
                                  f"PTX (entries: {', '.join(entries) or 'none'})")
    sha = ptx_sha256(ptx)
    ensure_cubin(SimpleNamespace(ptx=ptx, sha256=sha, arch=arch, name=kernel_name, module=None))
    cubin, path = None, ""
    from ..toolchain import cache_dir

    candidate = os.path.join(cache_dir(), f"{sha}-{arch}.cubin")
    if os.path.exists(candidate):
        path = candidate
        with open(candidate, "rb") as f:
            cubin = f.read()
    rec = get_cubin_registry().register(ptx=ptx, arch=arch, kernel_name=kernel_name,
                                        cubin=cubin, cubin_path=path,
                                        dynamic_smem_bytes=int(dynamic_smem_bytes))
    return rec.handle


def register_launch_config(handle, cu_function, grid, block, cluster=(1, 1, 1),
                           smem_bytes: int = 0) -> None:
    """Set ``handle``'s launch geometry and dynamic shared memory. ``cu_function`` (a
    ``CUfunction`` upstream) is kept but not used: the launcher loads the module itself,
    once per CUDA context.

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> from pyptx.jax_support import compile_ptx_to_cubin, register_launch_config
        >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a")
        >>> register_launch_config(h, None, grid=(4, 1, 1), block=(32, 1, 1), smem_bytes=1024)
        >>> from pyptx.jax_support import get_cubin_registry
        >>> rec = get_cubin_registry().get(h)
        >>> rec.grid, rec.block, rec.smem_bytes
        ((4, 1, 1), (32, 1, 1), 1024)
    """
    rec = get_cubin_registry().get(handle)
    rec.cu_function = cu_function
    rec.grid, rec.block, rec.cluster = (tuple(grid), tuple(block), tuple(cluster))
    rec.smem_bytes = int(smem_bytes)


def add_scalar_param_to_shim(handle, *, value_bits: int, size_bytes: int) -> None:
    """Append a scalar kernel parameter (after the buffers): ``size_bytes`` (1, 2, 4 or 8)
    little-endian bytes of the integer ``value_bits`` (a float's IEEE bits).

    Examples:
        >>> import struct
        >>> from pyptx import kernel, ptx
        >>> from pyptx.types import f32, u64
        >>> from pyptx.jax_support import add_scalar_param_to_shim, compile_ptx_to_cubin
        >>> @kernel(raw_params=[("p", u64), ("alpha", f32)])
        ... def k():
        ...     ptx.ret()
        >>> h = compile_ptx_to_cubin(k.ptx(), "sm_90a")
        >>> bits = struct.unpack("<I", struct.pack("<f", 0.5))[0]     # a float's IEEE bits
        >>> add_scalar_param_to_shim(h, value_bits=bits, size_bytes=4)
        >>> from pyptx.jax_support import get_cubin_registry
        >>> get_cubin_registry().get(h).scalars == [struct.pack("<f", 0.5)]
        True
    """
    rec = get_cubin_registry().get(handle)
    if size_bytes not in (1, 2, 4, 8):
        raise SpecializationError(f"add_scalar_param_to_shim: size_bytes must be 1, 2, 4 or "
                                  f"8, got {size_bytes!r}")
    mask = (1 << (8 * size_bytes)) - 1
    rec.scalars.append((int(value_bits) & mask).to_bytes(size_bytes, "little"))


def add_tma_spec_to_shim(handle, xla_arg_index: int, host_blob_ptr: int,
                         device_blob_ptr: int = 0) -> None:
    """Append a tensor-map parameter (after the scalars) over buffer ``xla_arg_index``
    (inputs then outputs), with the geometry of the map synthesized at ``host_blob_ptr``.
    It is re-encoded from the buffer's address at every launch and passed as the u64
    address of a descriptor in the launch's workspace; ``device_blob_ptr`` is not needed.

    Examples:
        >>> from pyptx import kernel, ptx
        >>> from pyptx.types import bf16, u64
        >>> from pyptx.jax_support import (add_tma_spec_to_shim, compile_ptx_to_cubin,
        ...                                 synthesize_tma_descriptor)
        >>> @kernel(raw_params=[("A", u64), ("A_map", u64)])
        ... def k():
        ...     ptx.ret()
        >>> h = compile_ptx_to_cubin(k.ptx(), "sm_90a")
        >>> from pyptx import Layout
        >>> from jax_pyptx.runtime import ffi_bridge
        >>> from pyptx.jax_support import get_cubin_registry
        >>> ffi_bridge.set_recording(True)          # encode with the recording driver table (no GPU)
        >>> tmap, host_ptr, _ = synthesize_tma_descriptor((256, 64), bf16, Layout.TMA_128B)
        >>> ffi_bridge.set_recording(False)
        >>> add_tma_spec_to_shim(h, 0, host_ptr)
        >>> len(get_cubin_registry().get(h).tma)
        1
    """
    rec = get_cubin_registry().get(handle)
    rec.tma.append((int(xla_arg_index), tensor_map_at(host_blob_ptr)))


def set_mock_ffi_callback(callback) -> None:
    """Not available: launches here go through the C++ launcher's driver table, never a
    Python callback. To see what would be launched without a GPU, use the recording table:
    ``jax_pyptx.runtime.ffi_bridge.set_recording(True)`` then ``recorded_launches()``.

    Examples:
        >>> from jax_pyptx.errors import NotSupportedError
        >>> from pyptx.jax_support import set_mock_ffi_callback
        >>> try:
        ...     set_mock_ffi_callback(print)
        ... except NotSupportedError as e:
        ...     print("set_recording" in str(e))
        True
    """
    raise NotSupportedError(
        "set_mock_ffi_callback: jax_pyptx launches through its C++ launcher, not a Python "
        "callback; to see launches without a GPU use the recording driver table "
        "(jax_pyptx.runtime.ffi_bridge.set_recording(True), then recorded_launches()), or "
        "run kernels on the CPU interpreter (kernel.interpret(...))")


def synthesize_tma_descriptor(shape, dtype, layout, box_shape=None, placeholder_ptr: int = 0):
    """``(host_tmap, host_blob_ptr, device_blob_ptr)``: the rank-2 tensor map of a
    row-major ``(rows, cols)`` tensor, encoded by the launcher's driver table over
    ``placeholder_ptr``: global dims ``(cols, rows)``, box ``box_shape=(rows, cols)`` or the
    default (128 rows by one swizzle span), clamped; swizzle from ``layout``.
    ``host_tmap`` is a ``HostTensorMap`` (``.data``: its 128 bytes); the device blob holds
    the same bytes.

    Examples:
        >>> from pyptx.types import bf16
        >>> from pyptx.jax_support import synthesize_tma_descriptor
        >>> from pyptx import Layout
        >>> from jax_pyptx.runtime import ffi_bridge
        >>> ffi_bridge.set_recording(True)          # encode with the recording driver table (no GPU)
        >>> tmap, host_ptr, device_ptr = synthesize_tma_descriptor((256, 64), bf16, Layout.TMA_128B)
        >>> ffi_bridge.set_recording(False)
        >>> len(tmap.data), host_ptr != 0
        (128, True)
    """
    m = synthesize_tensor_map(shape, dtype, layout, box_shape, placeholder_ptr)
    return m, m.host_ptr, m.device_ptr


def synthesize_tma_descriptor_3d(height, width, dtype, box_major, box_minor, *,
                                 swizzle_128b=True, padding=False, placeholder_ptr: int = 0):
    """``(host_tmap, host_blob_ptr, device_blob_ptr)`` of the rank-3 "64-column stripe" map
    of a ``(height, width)`` tensor: dims ``(64, height, width/64)``, box ``(64 or 72,
    box_major, box_minor/64)``, 128-byte swizzle when ``swizzle_128b``.

    Examples:
        >>> from pyptx.types import bf16
        >>> from pyptx.jax_support import synthesize_tma_descriptor_3d
        >>> from jax_pyptx.runtime import ffi_bridge
        >>> ffi_bridge.set_recording(True)          # encode with the recording driver table (no GPU)
        >>> tmap, host_ptr, device_ptr = synthesize_tma_descriptor_3d(128, 256, bf16, 64, 128)
        >>> ffi_bridge.set_recording(False)
        >>> len(tmap.data)
        128
    """
    m = synthesize_tensor_map_3d(height, width, dtype, box_major, box_minor,
                                 swizzle_128b=swizzle_128b, padding=padding,
                                 placeholder_ptr=placeholder_ptr)
    return m, m.host_ptr, m.device_ptr


def call_kernel_via_ffi(*inputs, cubin_handle, out_specs, out_shape_env, grid, block,
                        cluster=(1, 1, 1), smem_bytes: int = 0, interpret=None):
    """Launch the kernel of ``cubin_handle`` on JAX arrays ``inputs`` (eager or under
    ``jit``): one output for a single out spec, else a tuple. Outputs get their shapes from
    ``out_specs`` (Tiles) under ``out_shape_env``.

    It binds the ``pyptx_call`` primitive (see the module docstring): on CUDA the launcher's
    custom call, on the CPU the interpreter (``interpret=False``: the launcher with its
    recording driver table, which computes nothing; ``interpret=True``: the interpreter on
    any platform); ``jax.vmap`` runs one launch per item.

    Examples:
        >>> from pyptx import Tile
        >>> from pyptx.types import f32
        >>> from jax_pyptx.example_kernels import twice
        >>> import jax, jax.numpy as jnp
        >>> from pyptx.jax_support import call_kernel_via_ffi, compile_ptx_to_cubin
        >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a")
        >>> f = jax.jit(lambda x: call_kernel_via_ffi(x, cubin_handle=h, out_specs=(Tile(32, f32),),
        ...                                           out_shape_env={}, grid=(1, 1, 1), block=(32, 1, 1)))
        >>> f(jnp.arange(32, dtype=jnp.float32))[:3]
        Array([0., 2., 4.], dtype=float32)
    """
    import jax.numpy as jnp

    from ..runtime.callspec import CallSpec
    from ..runtime.primitive import bind
    from ..specialize.options import merge_options

    rec = get_cubin_registry().get(cubin_handle)
    outs = resolve_outputs(out_specs, out_shape_env)
    if not outs:
        raise SpecializationError("call_kernel_via_ffi: out_specs is empty; a call returns "
                                  "the outputs the kernel writes")
    arrays = [jnp.asarray(a) for a in inputs]
    k = record_kernel(rec, [(a.shape, as_ptx_type(a.dtype)) for a in arrays], outs, grid,
                      block, cluster, smem_bytes)
    spec = CallSpec(kernel=k, template=(), env=(), raw=tuple(k.raw_values().items()),
                    options=merge_options({}, {"interpret": interpret}))
    got = bind(spec, *(a.reshape(t.shape) for a, t in zip(arrays, k.in_specs)))
    got = [g.reshape(shape) for g, (shape, _) in zip(got, outs)]
    return got[0] if len(got) == 1 else tuple(got)
