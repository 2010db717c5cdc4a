// The launcher shared by the XLA handler and the PyTorch entry point.
#pragma once

#include <string>

#include "cuda_driver.h"
#include "plan.h"

namespace jax_pyptx {

// Global-mode tensor maps are written into the workspace buffer by this small
// built-in kernel (descriptors passed to it by value), never by a host-to-
// device copy: a kernel launch is stream-ordered and graph-capturable with its
// arguments baked in, so concurrent streams and CUDA graphs stay safe.
constexpr char kStoreKernelName[] = "jax_pyptx_store_tensormaps";
constexpr int kStoreKernelMaxDescriptors = 30;  // 30 * 128 B by-value bytes per launch
constexpr int kStoreKernelParamBytes = kStoreKernelMaxDescriptors * kTensorMapBytes;
// The built-in kernel's PTX (.version 8.3 with a tensormap proxy release fence,
// or 7.8 without it for drivers older than CUDA 12.3).
std::string StoreKernelPtx(bool with_proxy_fence);
// Cache key of the built-in module (instead of a PTX sha256).
constexpr char kStoreKernelKey[] = "builtin:jax_pyptx_store_tensormaps:v1";

// Loads the plan's module and function for the stream's context (once per
// (ptx_sha256, CUcontext, driver table)), sets the dynamic shared memory limit,
// and loads the built-in store kernel when the plan needs it. Launch() calls
// it too; calling it ahead of time (XLA's initialize stage) keeps module
// loading out of stream capture.
std::string PrepareModules(const DriverTable& d, const Plan& plan, CUstream stream);

// Encodes every tensor map from the live buffer addresses, writes global-mode
// ones into the workspace (the last buffer), packs the parameters and launches
// with cuLaunchKernelEx. Returns "" on success, else a message naming the
// kernel, the driver function and the error.
std::string Launch(const DriverTable& d, const Plan& plan, const BufferRef* buffers, size_t count,
                   CUstream stream);

// Unloads and forgets every module loaded through `d` (tests: the recording
// table's "GPU" is reset). Returns the number of modules dropped.
int ResetModuleCache(const DriverTable* d);

// "<prefix><fn> failed: CUDA_ERROR_X (code): description<detail>".
std::string DriverError(const DriverTable& d, const Plan& plan, const char* fn, CUresult rc,
                        const std::string& detail = "");

}  // namespace jax_pyptx
