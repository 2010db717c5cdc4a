"""The CUDA device this process would launch on: its compute capability and PTX target.

One probe serves both ``jax_pyptx.detect_arch()`` (``pyptx.detect_arch``) and
``@kernel(arch="auto")``, which resolves when the kernel is first traced (never at decoration
or import). The probe asks, in order:

1. PyTorch, when the process has already imported it (``torch.cuda``; torch is never imported
   here: it is slow to import and lives in the runtime layer);
2. cuda-python (``cuda.bindings.driver``, the optional ``cuda`` extra), imported on first use;
3. the driver itself, ``libcuda.so.1`` through ctypes.

The result (a capability, or none) is cached for the process; ``detect_arch.cache_clear()``
forgets it.

    >>> from jax_pyptx.toolchain.device import arch_of_capability
    >>> arch_of_capability(9, 0), arch_of_capability(8, 6), arch_of_capability(12, 0)
    ('sm_90a', 'sm_86', 'sm_120')
"""
from __future__ import annotations

import os
import sys
import threading

from ..errors import NotSupportedError

__all__ = ["arch_of_capability", "device_capability", "detect_arch", "resolve_arch",
           "current_arch", "sm_count", "DEFAULT_AUTO_ARCH"]

# ``arch="auto"`` on a machine with no GPU (and no $JAX_PYPTX_ARCH)
DEFAULT_AUTO_ARCH = "sm_90a"

# CUdevice_attribute values (cuda.h)
_ATTR_CC_MAJOR = 75
_ATTR_CC_MINOR = 76
_ATTR_SM_COUNT = 16

_lock = threading.Lock()
_probe: dict = {}           # "capability" -> ((major, minor) | None, source)


def arch_of_capability(major: int, minor: int) -> str:
    """The PTX target of compute capability ``major.minor``: the arch-specific target for
    the parts whose tensor-core instructions need it (9.0 -> ``sm_90a``, 10.0 -> ``sm_100a``,
    10.1 -> ``sm_101a``), else ``sm_<major><minor>`` (``sm_80``, ``sm_89``, ``sm_120``)."""
    special = {(9, 0): "sm_90a", (10, 0): "sm_100a", (10, 1): "sm_101a"}
    return special.get((int(major), int(minor)), f"sm_{int(major)}{int(minor)}")


def _from_torch():
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability(0)
        return int(major), int(minor)
    except Exception:
        return None


def _from_cuda_python():
    try:
        from cuda.bindings import driver  # type: ignore
    except ImportError:
        return None
    try:
        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return None
        err, dev = driver.cuDeviceGet(0)
        if int(err) != 0:
            return None
        attr = driver.CUdevice_attribute
        err, major = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        err2, minor = driver.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        if int(err) or int(err2):
            return None
        return int(major), int(minor)
    except Exception:
        return None


def _libcuda():
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None, None
    dev = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(dev), 0) != 0:
        return None, None
    return lib, dev


def _attribute(lib, dev, attr: int):
    import ctypes

    v = ctypes.c_int(0)
    if lib.cuDeviceGetAttribute(ctypes.byref(v), attr, dev) != 0:
        return None
    return v.value


def _from_libcuda():
    try:
        lib, dev = _libcuda()
        if lib is None:
            return None
        major, minor = _attribute(lib, dev, _ATTR_CC_MAJOR), _attribute(lib, dev, _ATTR_CC_MINOR)
        return None if major is None or minor is None else (major, minor)
    except Exception:
        return None


_PROBES = (("torch", _from_torch), ("cuda-python", _from_cuda_python),
           ("libcuda.so.1", _from_libcuda))


def device_capability():
    """``(major, minor)`` of CUDA device 0, or None when no probe finds a device (cached)."""
    got = _probe.get("capability")
    if got is None:
        with _lock:
            got = _probe.get("capability")
            if got is None:
                got = (None, None)
                for source, probe in _PROBES:
                    cap = probe()
                    if cap is not None:
                        got = (cap, source)
                        break
                _probe["capability"] = got
    return got[0]


def detect_arch() -> str:
    """The PTX target of CUDA device 0 (``sm_90a`` on an H100), cached after the first call.

    Asks torch (when imported), else cuda-python, else libcuda. With no GPU visible it raises
    ``NotSupportedError`` (a ``RuntimeError``) suggesting an explicit arch.

    Examples:
        >>> import jax_pyptx
        >>> try:
        ...     arch = jax_pyptx.detect_arch()
        ... except RuntimeError as e:
        ...     arch = None          # no GPU here: write @kernel(arch="sm_90a")
        >>> arch is None or arch.startswith("sm_")
        True
    """
    cap = device_capability()
    if cap is None:
        raise NotSupportedError(
            "detect_arch(): no CUDA device is visible (asked torch, cuda-python and "
            "libcuda.so.1); pass an explicit arch, e.g. @kernel(arch=\"sm_90a\"), or set "
            "JAX_PYPTX_ARCH for arch=\"auto\"")
    return arch_of_capability(*cap)


def _cache_clear() -> None:
    with _lock:
        _probe.clear()


detect_arch.cache_clear = _cache_clear


def current_arch():
    """The PTX target of CUDA device 0, or None without a GPU (cached)."""
    cap = device_capability()
    return None if cap is None else arch_of_capability(*cap)


def resolve_arch(arch: str) -> str:
    """``arch`` itself, or for ``"auto"``: ``$JAX_PYPTX_ARCH``, else the device's target
    (:func:`detect_arch`'s answer), else ``sm_90a`` (a machine with no GPU can still trace
    and assemble). Kernels call this when first traced.

    >>> resolve_arch("sm_80")
    'sm_80'
    """
    if arch != "auto":
        return arch
    env = os.environ.get("JAX_PYPTX_ARCH")
    if env:
        return env
    return current_arch() or DEFAULT_AUTO_ARCH


def sm_count():
    """Number of SMs of device 0 (for persistent grids), or None without a GPU."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return int(torch.cuda.get_device_properties(0).multi_processor_count)
    except Exception:
        pass
    try:
        from cuda.bindings import driver  # type: ignore

        driver.cuInit(0)
        _, dev = driver.cuDeviceGet(0)
        err, n = driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
        if not int(err):
            return int(n)
    except Exception:
        pass
    try:
        lib, dev = _libcuda()
        return None if lib is None else _attribute(lib, dev, _ATTR_SM_COUNT)
    except Exception:
        return None
