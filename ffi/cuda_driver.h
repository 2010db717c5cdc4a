// The few CUDA driver API types, enums and entry points the launcher uses,
// declared here so that the extension builds without a CUDA toolkit.
//
// Every value below is part of the driver's stable ABI (cuda.h, CUDA 12.0+);
// tests/test_ffi_abi.py compiles this header next to the toolkit's cuda.h,
// when one is installed, and checks that sizes, offsets and enum values agree.
//
// All driver access goes through a DriverTable of function pointers: the real
// one (driver_real.cc) resolves libcuda.so.1 at run time; the recording one
// (driver_recording.cc) records each call and touches no GPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jax_pyptx {

// ---------------------------------------------------------------- handles --
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the driver's own spelling
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;

struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

// ------------------------------------------------------------ result codes --
enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_SOURCE = 300,
  CUDA_ERROR_FILE_NOT_FOUND = 301,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
  CUDA_ERROR_UNKNOWN = 999,
};

// ------------------------------------------------------------- tensor map --
// CUtensorMap: 128 opaque bytes. cuda.h aligns it to 64 (CUDA 12) or 128
// (CUDA 13) bytes; the size, which is all the ABI depends on, is 128 either
// way. We keep 128 so a by-value descriptor is always suitably aligned.
constexpr int kTensorMapBytes = 128;
struct alignas(128) CUtensorMap {
  cuuint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == kTensorMapBytes, "CUtensorMap is 128 bytes");

enum CUtensorMapDataType : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12,
  CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13,
  CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14,
  CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15,
};
constexpr int kNumTensorMapDataTypes = 16;

// Bytes per element of each CUtensorMapDataType (the packed sub-byte types
// count as 1: their global dims/strides are given in bytes-sized units).
inline int TensorMapElementBytes(int data_type) {
  static constexpr int kBytes[kNumTensorMapDataTypes] = {1, 2, 4, 4, 8, 8, 2, 4,
                                                         8, 2, 4, 4, 4, 1, 1, 1};
  return (data_type >= 0 && data_type < kNumTensorMapDataTypes) ? kBytes[data_type] : 0;
}

enum CUtensorMapInterleave : int {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_INTERLEAVE_16B = 1,
  CU_TENSOR_MAP_INTERLEAVE_32B = 2,
};
enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
  CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4,
  CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
  CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6,
};
enum CUtensorMapL2promotion : int {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};
enum CUtensorMapFloatOOBfill : int {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
};
constexpr int kMaxTensorRank = 5;

// --------------------------------------------------------------- launches --
enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};
constexpr unsigned int kMaxPortableClusterSize = 8;
enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};
enum CUlaunchAttributeID : int {
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};
union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
};
struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};
struct CUlaunchConfig {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute ABI");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig ABI");

// The driver ABI version the entry points are requested for (CUDA 12.0:
// the first with cuLaunchKernelEx and cuTensorMapEncodeTiled).
constexpr int kDriverApiVersion = 12000;

// ------------------------------------------------------------ driver table --
// Function pointers, one per driver entry point used. `cuFuncGetParamInfo`
// (CUDA 12.4+) may be null: the launcher then skips checking the plan's
// parameter sizes against the kernel.
struct DriverTable {
  const char* name;  // "libcuda" or "recording"
  bool is_recording;

  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuGetErrorName)(CUresult error, const char** str);
  CUresult (*cuGetErrorString)(CUresult error, const char** str);
  CUresult (*cuCtxGetCurrent)(CUcontext* ctx);
  CUresult (*cuCtxPushCurrent)(CUcontext ctx);
  CUresult (*cuCtxPopCurrent)(CUcontext* ctx);
  CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext* ctx);
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options,
                                 CUjit_option* options, void** option_values);
  CUresult (*cuModuleGetFunction)(CUfunction* fn, CUmodule module, const char* name);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuFuncSetAttribute)(CUfunction fn, CUfunction_attribute attrib, int value);
  CUresult (*cuFuncGetParamInfo)(CUfunction fn, size_t index, size_t* offset, size_t* size);
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap* tensor_map, CUtensorMapDataType data_type,
                                     cuuint32_t rank, void* global_address,
                                     const cuuint64_t* global_dim,
                                     const cuuint64_t* global_strides,
                                     const cuuint32_t* box_dim,
                                     const cuuint32_t* element_strides,
                                     CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2_promotion,
                                     CUtensorMapFloatOOBfill oob_fill);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig* config, CUfunction fn, void** kernel_params,
                               void** extra);
  // Device memory for stand-alone tensor maps (pyptx.jax_support.synthesize_tma_descriptor):
  // never used by launches. May be null on a driver without them.
  CUresult (*cuMemAlloc)(CUdeviceptr* dptr, size_t bytesize);
  CUresult (*cuMemFree)(CUdeviceptr dptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
};

// The libcuda table, resolved once (dlopen + cuGetProcAddress). Returns null
// and sets *error when the driver cannot be loaded or initialized.
const DriverTable* RealDriver(const char** error);

// The recording table (see recording.h for what it records). host_memory:
// buffer addresses are host memory (the CPU platform, or any machine without
// libcuda), so the built-in tensor-map store kernel is emulated with a memcpy;
// false when recording on a GPU machine, where they are device addresses and
// the store is only recorded.
const DriverTable* RecordingDriver(bool host_memory = true);

}  // namespace jax_pyptx
