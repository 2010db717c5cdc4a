// The real driver table: libcuda.so.1 opened at run time.
//
// Entry points are resolved with cuGetProcAddress_v2 for the CUDA 12.0 ABI
// (so that e.g. "cuMemcpyHtoDAsync" or "cuCtxPushCurrent" get their _v2
// flavour without spelling it), falling back to dlsym of the versioned names
// on drivers without it. Nothing here is used unless a CUDA launch happens.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "cuda_driver.h"

namespace jax_pyptx {
namespace {

using GetProcAddressFn = CUresult (*)(const char* symbol, void** pfn, int cuda_version,
                                      cuuint64_t flags, int* symbol_status);

struct RealState {
  DriverTable table{};
  std::string error;
  bool ok = false;
};

void* Resolve(void* lib, GetProcAddressFn get_proc, const char* base, const char* versioned) {
  if (get_proc != nullptr) {
    void* fn = nullptr;
    int status = 0;
    if (get_proc(base, &fn, kDriverApiVersion, /*CU_GET_PROC_ADDRESS_DEFAULT=*/0, &status) ==
            CUDA_SUCCESS &&
        fn != nullptr) {
      return fn;
    }
  }
  return dlsym(lib, versioned);
}

void LoadReal(RealState* st) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    st->error = std::string("could not open libcuda.so.1 (is an NVIDIA driver installed?): ") +
                (why ? why : "unknown dlopen error");
    return;
  }
  auto get_proc = reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
  DriverTable& t = st->table;
  t.name = "libcuda";
  t.is_recording = false;
  std::string missing;
#define JAX_PYPTX_RESOLVE(field, base, versioned, required)                             \
  t.field = reinterpret_cast<decltype(t.field)>(Resolve(lib, get_proc, base, versioned)); \
  if (t.field == nullptr && (required)) missing += std::string(missing.empty() ? "" : ", ") + base;
  JAX_PYPTX_RESOLVE(cuInit, "cuInit", "cuInit", true);
  JAX_PYPTX_RESOLVE(cuGetErrorName, "cuGetErrorName", "cuGetErrorName", true);
  JAX_PYPTX_RESOLVE(cuGetErrorString, "cuGetErrorString", "cuGetErrorString", true);
  JAX_PYPTX_RESOLVE(cuCtxGetCurrent, "cuCtxGetCurrent", "cuCtxGetCurrent", true);
  JAX_PYPTX_RESOLVE(cuCtxPushCurrent, "cuCtxPushCurrent", "cuCtxPushCurrent_v2", true);
  JAX_PYPTX_RESOLVE(cuCtxPopCurrent, "cuCtxPopCurrent", "cuCtxPopCurrent_v2", true);
  JAX_PYPTX_RESOLVE(cuStreamGetCtx, "cuStreamGetCtx", "cuStreamGetCtx", true);
  JAX_PYPTX_RESOLVE(cuModuleLoadData, "cuModuleLoadData", "cuModuleLoadData", true);
  JAX_PYPTX_RESOLVE(cuModuleLoadDataEx, "cuModuleLoadDataEx", "cuModuleLoadDataEx", true);
  JAX_PYPTX_RESOLVE(cuModuleGetFunction, "cuModuleGetFunction", "cuModuleGetFunction", true);
  JAX_PYPTX_RESOLVE(cuModuleUnload, "cuModuleUnload", "cuModuleUnload", true);
  JAX_PYPTX_RESOLVE(cuFuncSetAttribute, "cuFuncSetAttribute", "cuFuncSetAttribute", true);
  JAX_PYPTX_RESOLVE(cuFuncGetParamInfo, "cuFuncGetParamInfo", "cuFuncGetParamInfo", false);
  JAX_PYPTX_RESOLVE(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", "cuTensorMapEncodeTiled",
                    true);
  JAX_PYPTX_RESOLVE(cuLaunchKernelEx, "cuLaunchKernelEx", "cuLaunchKernelEx", true);
  JAX_PYPTX_RESOLVE(cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2", false);
  JAX_PYPTX_RESOLVE(cuMemFree, "cuMemFree", "cuMemFree_v2", false);
  JAX_PYPTX_RESOLVE(cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2", false);
#undef JAX_PYPTX_RESOLVE
  if (!missing.empty()) {
    st->error = "libcuda.so.1 lacks " + missing + " (a CUDA 12.0+ driver is required)";
    return;
  }
  CUresult rc = t.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (t.cuGetErrorName(rc, &name) != CUDA_SUCCESS) name = nullptr;
    st->error = std::string("cuInit failed: ") + (name ? name : "unknown error") + " (" +
                std::to_string(rc) + ")";
    return;
  }
  st->ok = true;
}

}  // namespace

const DriverTable* RealDriver(const char** error) {
  static RealState* state = [] {
    auto* st = new RealState();  // intentionally leaked: used until exit
    LoadReal(st);
    return st;
  }();
  if (!state->ok) {
    if (error != nullptr) *error = state->error.c_str();
    return nullptr;
  }
  return &state->table;
}

}  // namespace jax_pyptx
