"""ffi/cuda_driver.h against the toolkit's cuda.h, and the built-in kernel against ptxas.

The extension declares the few driver types it needs itself (no CUDA toolkit at
build time). Where a toolkit is installed, compile a translation unit that
includes both headers and static_asserts that layouts and enum values agree.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cuda_include() -> Path | None:
    for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if base and (Path(base) / "include" / "cuda.h").exists():
            return Path(base) / "include"
    return None


def _ptxas() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    inc = _cuda_include()
    cand = inc.parent / "bin" / "ptxas" if inc else None
    return str(cand) if cand and cand.exists() else None


ENUMS = """
CU_TENSOR_MAP_DATA_TYPE_UINT8 CU_TENSOR_MAP_DATA_TYPE_UINT16 CU_TENSOR_MAP_DATA_TYPE_UINT32
CU_TENSOR_MAP_DATA_TYPE_INT32 CU_TENSOR_MAP_DATA_TYPE_UINT64 CU_TENSOR_MAP_DATA_TYPE_INT64
CU_TENSOR_MAP_DATA_TYPE_FLOAT16 CU_TENSOR_MAP_DATA_TYPE_FLOAT32 CU_TENSOR_MAP_DATA_TYPE_FLOAT64
CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ
CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ
CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B
CU_TENSOR_MAP_INTERLEAVE_NONE CU_TENSOR_MAP_INTERLEAVE_16B CU_TENSOR_MAP_INTERLEAVE_32B
CU_TENSOR_MAP_SWIZZLE_NONE CU_TENSOR_MAP_SWIZZLE_32B CU_TENSOR_MAP_SWIZZLE_64B
CU_TENSOR_MAP_SWIZZLE_128B CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B
CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B
CU_TENSOR_MAP_L2_PROMOTION_NONE CU_TENSOR_MAP_L2_PROMOTION_L2_64B
CU_TENSOR_MAP_L2_PROMOTION_L2_128B CU_TENSOR_MAP_L2_PROMOTION_L2_256B
CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
CU_JIT_INFO_LOG_BUFFER CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES CU_JIT_ERROR_LOG_BUFFER
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
CUDA_SUCCESS CUDA_ERROR_INVALID_VALUE CUDA_ERROR_OUT_OF_MEMORY CUDA_ERROR_NOT_INITIALIZED
CUDA_ERROR_NO_DEVICE CUDA_ERROR_INVALID_IMAGE CUDA_ERROR_INVALID_CONTEXT
CUDA_ERROR_NO_BINARY_FOR_GPU CUDA_ERROR_INVALID_PTX CUDA_ERROR_UNSUPPORTED_PTX_VERSION
CUDA_ERROR_INVALID_SOURCE CUDA_ERROR_FILE_NOT_FOUND CUDA_ERROR_INVALID_HANDLE
CUDA_ERROR_NOT_FOUND CUDA_ERROR_ILLEGAL_ADDRESS CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
CUDA_ERROR_LAUNCH_FAILED CUDA_ERROR_NOT_SUPPORTED CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
CUDA_ERROR_INVALID_CLUSTER_SIZE CUDA_ERROR_UNKNOWN
""".split()

STRUCT_FIELDS = {
    "CUlaunchConfig": ["gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
                       "sharedMemBytes", "hStream", "attrs", "numAttrs"],
    "CUlaunchAttribute": ["id", "value"],
}


def test_driver_header_matches_cuda_h(tmp_path):
    inc = _cuda_include()
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if inc is None or cxx is None:
        pytest.skip("no CUDA toolkit headers or C++ compiler here")
    lines = ['#include <cuda.h>', '#include <cstddef>', '#include "cuda_driver.h"',
             "namespace J = jax_pyptx;"]
    lines += [f"static_assert(int(J::{e}) == int(::{e}), \"{e}\");" for e in ENUMS]
    for name, fields in STRUCT_FIELDS.items():
        lines.append(f"static_assert(sizeof(J::{name}) == sizeof(::{name}), \"{name} size\");")
        lines += [f"static_assert(offsetof(J::{name}, {f}) == offsetof(::{name}, {f}), "
                  f"\"{name}.{f}\");" for f in fields]
    lines += [
        "static_assert(sizeof(J::CUtensorMap) == sizeof(::CUtensorMap), \"CUtensorMap\");",
        "static_assert(sizeof(J::CUlaunchAttributeValue) == sizeof(::CUlaunchAttributeValue), \"v\");",
        "static_assert(sizeof(J::CUdeviceptr) == sizeof(::CUdeviceptr), \"CUdeviceptr\");",
        "static_assert(J::kDriverApiVersion <= CUDA_VERSION, \"driver API version\");",
        # the table's function pointer types, with our types swapped for cuda.h's
        "static_assert(sizeof(decltype(&::cuLaunchKernelEx)) == sizeof(J::DriverTable::cuLaunchKernelEx), \"fp\");",
    ]
    src = tmp_path / "abi.cc"
    src.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", f"-I{inc}", f"-I{ROOT / 'ffi'}",
                           str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("fence", [True, False])
def test_store_kernel_ptx_assembles(tmp_path, arch, fence):
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found")
    from jax_pyptx.runtime import ffi_bridge as fb
    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    ptx = fb.extension().store_kernel_ptx(fence)
    assert (".version 8.3" in ptx) == fence
    assert ("fence.proxy.tensormap::generic.release.gpu;" in ptx) == fence
    assert f".visible .entry {fb.STORE_KERNEL_NAME}(" in ptx
    src = tmp_path / "store.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, f"-arch={arch}", "-v", str(src), "-o", str(tmp_path / "s.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout + proc.stderr
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report
