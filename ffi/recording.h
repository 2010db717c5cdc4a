// The recording driver table: stands in for libcuda on a machine without a
// GPU. Each "action" call (module loads, function lookups, attribute sets,
// tensor-map encodes, launches, unloads) is appended to a log that Python
// reads back through jax_pyptx.runtime.ffi_bridge.recorded_calls(); queries
// (error names, contexts, parameter info) are answered but not logged.
//
// Behaviour, close to the real driver's where it matters to the launcher:
//  * one fake context (kRecordingContext) for every stream;
//  * modules: the image is kept (recorded as bytes) and parsed as PTX text for
//    its .entry names and parameter lists, so cuModuleGetFunction fails with
//    CUDA_ERROR_NOT_FOUND for a missing entry and cuFuncGetParamInfo reports
//    real offsets and sizes (images that are not PTX text -- real cubins --
//    have unknown parameters: CUDA_ERROR_NOT_SUPPORTED);
//  * cuTensorMapEncodeTiled checks the documented constraints (rank, 16-byte
//    alignment, strides, box <= 256, element strides <= 8, swizzle span) and
//    fills the 128-byte map with a deterministic encoding of its arguments:
//        bytes   0..8    u64  global address
//        bytes   8..48   u64  global dims[5]      (0 past rank)
//        bytes  48..80   u64  global strides[4]   (0 past rank-1)
//        bytes  80..100  u32  box dims[5]
//        bytes 100..120  u32  element strides[5]
//        bytes 120..126  u8   data type, rank, interleave, swizzle, l2 promotion, oob fill
//        bytes 126..128       "PX"
//  * cuLaunchKernelEx records grid, block, cluster (from the launch attribute,
//    1x1x1 without one), dynamic smem, stream and the parameter bytes in
//    .entry order, concatenated without padding; it checks the dynamic smem
//    opt-in, block size and cluster divisibility like the hardware would;
//  * the launcher's built-in tensor-map store kernel is executed: its
//    descriptors are really copied to the destination (host) address (not in
//    the device-memory variant, RecordingDriver(false), used when recording
//    on a machine with a GPU);
//  * cuMemAlloc / cuMemFree / cuMemcpyHtoD (stand-alone tensor maps only) work on
//    host memory: an allocation is a zeroed, 256-byte aligned host block whose
//    address is the "device pointer"; a copy must stay inside one allocation;
//  * inject_error(fn, code) makes the next call of `fn` return `code`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cuda_driver.h"

namespace jax_pyptx {

struct RecordedBytes {
  std::string data;
};
using RecordValue =
    std::variant<int64_t, uint64_t, std::string, RecordedBytes, std::vector<int64_t>>;
using Record = std::vector<std::pair<std::string, RecordValue>>;

// The fake context every stream belongs to under the recording table.
inline CUcontext RecordingContext() { return reinterpret_cast<CUcontext>(uintptr_t{0xC0C0C0C0}); }

std::vector<Record> RecordedCalls();
void ClearRecordedCalls();
void InjectDriverError(const std::string& fn_name, CUresult code);
// Forget fake modules/functions and pending injected errors (the launcher's
// module cache must be reset alongside: see ResetModuleCache).
void ResetRecordingDevice();

}  // namespace jax_pyptx
