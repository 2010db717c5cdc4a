"""The current CUDA device's arch, through cuda-python (optional; imported lazily)."""
from __future__ import annotations


def current_arch() -> str | None:
    """``sm_XY`` (with ``a`` for 9.0 / 10.0 parts) of device 0, or None without a GPU."""
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
    except Exception:  # noqa: BLE001 - any driver failure means "no device"
        return None
    sm = major * 10 + minor
    return f"sm_{sm}a" if sm in (90, 100, 101, 103, 110, 120, 121) else f"sm_{sm}"


def sm_count() -> int | None:
    """Number of SMs of device 0 (for persistent grids), or None."""
    try:
        from cuda.bindings import driver  # type: ignore

        driver.cuInit(0)
        _, dev = driver.cuDeviceGet(0)
        err, n = driver.cuDeviceGetAttribute(
            driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
        return None if int(err) else n
    except Exception:  # noqa: BLE001
        return None
