// The recording driver table (see recording.h for its documented behaviour).
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "launch.h"
#include "ptx_params.h"
#include "recording.h"

namespace jax_pyptx {
namespace {

constexpr size_t kMaxRecords = 100000;
constexpr int kMaxOptinSmem = 232448;  // 227 KB: the sm_90/sm_100 opt-in limit

using ParamInfo = PtxParam;
struct FakeModule {
  std::string image;
  bool is_text = false;
  std::map<std::string, PtxEntry> entries;
};
struct FakeFunction {
  uintptr_t module;
  std::string name;
  bool params_known = false;
  std::vector<ParamInfo> params;
  int max_dynamic_smem = 0;
  bool non_portable_cluster = false;
};

struct State {
  std::mutex mu;
  std::vector<Record> records;
  std::map<std::string, std::deque<CUresult>> injected;
  std::map<uintptr_t, FakeModule> modules;
  std::map<uintptr_t, FakeFunction> functions;
  std::map<CUdeviceptr, size_t> allocations;  // cuMemAlloc'd (host) blocks
  uintptr_t next_handle = 0x10000;
};

State& S() {
  static auto* s = new State();  // leaked: used by static destructors of others
  return *s;
}

// Caller holds the mutex.
CUresult TakeInjected(State& s, const char* fn) {
  auto it = s.injected.find(fn);
  if (it == s.injected.end() || it->second.empty()) return CUDA_SUCCESS;
  CUresult rc = it->second.front();
  it->second.pop_front();
  return rc;
}

void Push(State& s, Record rec, CUresult rc) {
  rec.emplace_back("result", int64_t{rc});
  if (s.records.size() >= kMaxRecords) s.records.erase(s.records.begin());
  s.records.push_back(std::move(rec));
}

// Images: PTX text is NUL-terminated; an ELF cubin's size comes from its header.
std::string ImageBytes(const void* image) {
  const auto* b = static_cast<const unsigned char*>(image);
  if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[4] == 2) {
    uint64_t shoff, phoff;
    uint16_t shentsize, shnum, phentsize, phnum;
    std::memcpy(&phoff, b + 0x20, 8);
    std::memcpy(&shoff, b + 0x28, 8);
    std::memcpy(&phentsize, b + 0x36, 2);
    std::memcpy(&phnum, b + 0x38, 2);
    std::memcpy(&shentsize, b + 0x3a, 2);
    std::memcpy(&shnum, b + 0x3c, 2);
    const uint64_t end = std::max<uint64_t>(shoff + uint64_t{shentsize} * shnum,
                                            phoff + uint64_t{phentsize} * phnum);
    return std::string(reinterpret_cast<const char*>(b), end);
  }
  return std::string(reinterpret_cast<const char*>(b));
}

CUresult LoadImage(const char* fn, CUmodule* module, const void* image, int64_t num_options) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  Record rec{{"fn", std::string(fn)}};
  CUresult rc = TakeInjected(s, fn);
  if (rc == CUDA_SUCCESS && (image == nullptr || module == nullptr)) rc = CUDA_ERROR_INVALID_VALUE;
  if (image != nullptr) rec.emplace_back("image", RecordedBytes{ImageBytes(image)});
  if (rc == CUDA_SUCCESS) {
    FakeModule m;
    m.image = std::get<RecordedBytes>(rec.back().second).data;
    m.is_text = m.image.find(".entry") != std::string::npos;
    if (m.is_text) m.entries = ParsePtxEntries(m.image);
    const uintptr_t h = s.next_handle;
    s.next_handle += 0x100;
    rec.emplace_back("module", uint64_t{h});
    s.modules.emplace(h, std::move(m));
    *module = reinterpret_cast<CUmodule>(h);
  }
  if (num_options >= 0) rec.emplace_back("num_options", num_options);
  Push(s, std::move(rec), rc);
  return rc;
}

// ---- the table's entry points
CUresult RInit(unsigned int) { return CUDA_SUCCESS; }

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

CUresult RGetErrorName(CUresult rc, const char** str) {
  for (const ErrorText& e : kErrors) {
    if (e.code == rc) {
      *str = e.name;
      return CUDA_SUCCESS;
    }
  }
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult RGetErrorString(CUresult rc, const char** str) {
  for (const ErrorText& e : kErrors) {
    if (e.code == rc) {
      *str = e.text;
      return CUDA_SUCCESS;
    }
  }
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult RCtxGetCurrent(CUcontext* ctx) {
  *ctx = RecordingContext();
  return CUDA_SUCCESS;
}
CUresult RCtxPushCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult RCtxPopCurrent(CUcontext* ctx) {
  if (ctx) *ctx = RecordingContext();
  return CUDA_SUCCESS;
}
CUresult RStreamGetCtx(CUstream, CUcontext* ctx) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  CUresult rc = TakeInjected(s, "cuStreamGetCtx");
  *ctx = rc == CUDA_SUCCESS ? RecordingContext() : nullptr;
  return rc;
}

CUresult RModuleLoadData(CUmodule* module, const void* image) {
  return LoadImage("cuModuleLoadData", module, image, -1);
}
CUresult RModuleLoadDataEx(CUmodule* module, const void* image, unsigned int n, CUjit_option*,
                           void**) {
  return LoadImage("cuModuleLoadDataEx", module, image, n);
}

CUresult RModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uintptr_t mh = reinterpret_cast<uintptr_t>(module);
  Record rec{{"fn", std::string("cuModuleGetFunction")},
             {"module", uint64_t{mh}},
             {"name", std::string(name ? name : "")}};
  CUresult rc = TakeInjected(s, "cuModuleGetFunction");
  auto it = s.modules.find(mh);
  if (rc == CUDA_SUCCESS && (it == s.modules.end() || name == nullptr)) rc = CUDA_ERROR_INVALID_HANDLE;
  if (rc == CUDA_SUCCESS) {
    FakeFunction f{mh, name, false, {}, 0, false};
    if (it->second.is_text) {
      auto e = it->second.entries.find(name);
      if (e == it->second.entries.end()) {
        rc = CUDA_ERROR_NOT_FOUND;
      } else {
        f.params_known = e->second.params_known;
        f.params = e->second.params;
      }
    }
    if (rc == CUDA_SUCCESS) {
      const uintptr_t h = s.next_handle;
      s.next_handle += 0x100;
      s.functions.emplace(h, std::move(f));
      *fn = reinterpret_cast<CUfunction>(h);
      rec.emplace_back("function", uint64_t{h});
    }
  }
  Push(s, std::move(rec), rc);
  return rc;
}

CUresult RModuleUnload(CUmodule module) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uintptr_t mh = reinterpret_cast<uintptr_t>(module);
  CUresult rc = s.modules.erase(mh) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  for (auto it = s.functions.begin(); it != s.functions.end();) {
    it = it->second.module == mh ? s.functions.erase(it) : std::next(it);
  }
  Push(s, {{"fn", std::string("cuModuleUnload")}, {"module", uint64_t{mh}}}, rc);
  return rc;
}

CUresult RFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int value) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uintptr_t fh = reinterpret_cast<uintptr_t>(fn);
  auto it = s.functions.find(fh);
  Record rec{{"fn", std::string("cuFuncSetAttribute")},
             {"function", uint64_t{fh}},
             {"name", it != s.functions.end() ? it->second.name : std::string()},
             {"attribute", int64_t{attr}},
             {"value", int64_t{value}}};
  CUresult rc = TakeInjected(s, "cuFuncSetAttribute");
  if (rc == CUDA_SUCCESS && it == s.functions.end()) rc = CUDA_ERROR_INVALID_HANDLE;
  if (rc == CUDA_SUCCESS && attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > kMaxOptinSmem) {
      rc = CUDA_ERROR_INVALID_VALUE;
    } else {
      it->second.max_dynamic_smem = value;
    }
  } else if (rc == CUDA_SUCCESS && attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
    it->second.non_portable_cluster = value != 0;
  }
  Push(s, std::move(rec), rc);
  return rc;
}

// Recorded like every call: an index past the last parameter is CUDA_ERROR_INVALID_VALUE,
// an API error that compute-sanitizer reports, so the launcher must never ask for one.
CUresult RFuncGetParamInfo(CUfunction fn, size_t index, size_t* offset, size_t* size) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uintptr_t fh = reinterpret_cast<uintptr_t>(fn);
  auto it = s.functions.find(fh);
  Record rec{{"fn", std::string("cuFuncGetParamInfo")},
             {"function", uint64_t{fh}},
             {"index", int64_t(index)}};
  CUresult rc = CUDA_SUCCESS;
  if (it == s.functions.end()) {
    rc = CUDA_ERROR_INVALID_HANDLE;
  } else if (!it->second.params_known) {
    rc = CUDA_ERROR_NOT_SUPPORTED;
  } else if (index >= it->second.params.size()) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    *offset = it->second.params[index].offset;
    *size = it->second.params[index].size;
  }
  Push(s, std::move(rec), rc);
  return rc;
}

std::vector<int64_t> List(const void* p, int n, bool wide) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(wide ? static_cast<int64_t>(static_cast<const cuuint64_t*>(p)[i])
                     : static_cast<int64_t>(static_cast<const cuuint32_t*>(p)[i]));
  }
  return v;
}

CUresult CheckTensorMap(CUtensorMapDataType dt, cuuint32_t rank, uint64_t addr,
                        const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                        const cuuint32_t* es, int interleave, int swizzle, int l2, int oob) {
  const int eb = TensorMapElementBytes(dt);
  if (eb == 0 || rank < 1 || rank > kMaxTensorRank) return CUDA_ERROR_INVALID_VALUE;
  if (interleave < 0 || interleave > 2 || swizzle < 0 || swizzle > 6 || l2 < 0 || l2 > 3 ||
      oob < 0 || oob > 1) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (addr % align != 0) return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (uint64_t{1} << 32)) return CUDA_ERROR_INVALID_VALUE;
    if (box[i] == 0 || box[i] > 256) return CUDA_ERROR_INVALID_VALUE;
    if (es[i] == 0 || es[i] > 8) return CUDA_ERROR_INVALID_VALUE;
    if (i + 1 < rank && (strides[i] % align != 0 || strides[i] >= (uint64_t{1} << 40))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
    const uint64_t inner = uint64_t{box[0]} * eb;
    if (inner % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t span[] = {0, 32, 64, 128, 128, 128, 128};
    if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner > span[swizzle]) return CUDA_ERROR_INVALID_VALUE;
  } else if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
      (dt <= CU_TENSOR_MAP_DATA_TYPE_INT64)) {
    return CUDA_ERROR_INVALID_VALUE;  // NaN fill needs a floating-point type
  }
  return CUDA_SUCCESS;
}

CUresult RTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dt, cuuint32_t rank,
                               void* global_address, const cuuint64_t* dims,
                               const cuuint64_t* strides, const cuuint32_t* box,
                               const cuuint32_t* es, CUtensorMapInterleave interleave,
                               CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                               CUtensorMapFloatOOBfill oob) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t addr = reinterpret_cast<uintptr_t>(global_address);
  const int r = rank <= kMaxTensorRank ? static_cast<int>(rank) : 0;
  Record rec{{"fn", std::string("cuTensorMapEncodeTiled")},
             {"data_type", int64_t{dt}},
             {"rank", int64_t{rank}},
             {"global_address", addr},
             {"global_dims", List(dims, r, true)},
             {"global_strides", List(strides, r > 0 ? r - 1 : 0, true)},
             {"box_dims", List(box, r, false)},
             {"element_strides", List(es, r, false)},
             {"interleave", int64_t{interleave}},
             {"swizzle", int64_t{swizzle}},
             {"l2_promotion", int64_t{l2}},
             {"oob_fill", int64_t{oob}}};
  CUresult rc = TakeInjected(s, "cuTensorMapEncodeTiled");
  if (rc == CUDA_SUCCESS) {
    rc = CheckTensorMap(dt, rank, addr, dims, strides, box, es, interleave, swizzle, l2, oob);
  }
  if (rc == CUDA_SUCCESS) {
    unsigned char b[kTensorMapBytes] = {};
    std::memcpy(b, &addr, 8);
    for (int i = 0; i < r; ++i) {
      std::memcpy(b + 8 + 8 * i, &dims[i], 8);
      if (i + 1 < r) std::memcpy(b + 48 + 8 * i, &strides[i], 8);
      std::memcpy(b + 80 + 4 * i, &box[i], 4);
      std::memcpy(b + 100 + 4 * i, &es[i], 4);
    }
    const int small[6] = {dt, r, interleave, swizzle, l2, oob};
    for (int i = 0; i < 6; ++i) b[120 + i] = static_cast<unsigned char>(small[i]);
    b[126] = 'P';
    b[127] = 'X';
    std::memcpy(map, b, kTensorMapBytes);
  }
  Push(s, std::move(rec), rc);
  return rc;
}

template <bool kHostMemory>
CUresult RLaunchKernelEx(const CUlaunchConfig* cfg, CUfunction fn, void** params, void** extra) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uintptr_t fh = reinterpret_cast<uintptr_t>(fn);
  auto it = s.functions.find(fh);
  std::vector<int64_t> cluster = {1, 1, 1};
  for (unsigned int i = 0; i < cfg->numAttrs; ++i) {
    if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& c = cfg->attrs[i].value.clusterDim;
      cluster = {c.x, c.y, c.z};
    }
  }
  Record rec{{"fn", std::string("cuLaunchKernelEx")},
             {"function", uint64_t{fh}},
             {"name", it != s.functions.end() ? it->second.name : std::string()},
             {"grid", std::vector<int64_t>{cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ}},
             {"block", std::vector<int64_t>{cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ}},
             {"cluster", cluster},
             {"smem", int64_t{cfg->sharedMemBytes}},
             {"stream", uint64_t{reinterpret_cast<uintptr_t>(cfg->hStream)}},
             {"num_attrs", int64_t{cfg->numAttrs}}};
  CUresult rc = TakeInjected(s, "cuLaunchKernelEx");
  if (rc == CUDA_SUCCESS && (it == s.functions.end() || extra != nullptr)) {
    rc = it == s.functions.end() ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  }
  const FakeFunction* f = it != s.functions.end() ? &it->second : nullptr;
  if (f != nullptr && f->params_known) {
    std::string bytes;
    std::vector<int64_t> sizes;
    if (!f->params.empty() && params == nullptr) rc = rc ? rc : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; params != nullptr && i < f->params.size(); ++i) {
      bytes.append(static_cast<const char*>(params[i]), f->params[i].size);
      sizes.push_back(static_cast<int64_t>(f->params[i].size));
    }
    rec.emplace_back("params", RecordedBytes{bytes});
    rec.emplace_back("param_sizes", sizes);
  }
  const uint64_t threads = uint64_t{cfg->blockDimX} * cfg->blockDimY * cfg->blockDimZ;
  if (rc == CUDA_SUCCESS && (threads == 0 || threads > 1024 || cfg->gridDimX == 0 ||
                             cfg->gridDimY == 0 || cfg->gridDimZ == 0)) {
    rc = CUDA_ERROR_INVALID_VALUE;
  }
  const int64_t cluster_size = cluster[0] * cluster[1] * cluster[2];
  if (rc == CUDA_SUCCESS && (cfg->gridDimX % cluster[0] || cfg->gridDimY % cluster[1] ||
                             cfg->gridDimZ % cluster[2] || cluster_size > 16 ||
                             (cluster_size > kMaxPortableClusterSize && !f->non_portable_cluster))) {
    rc = CUDA_ERROR_INVALID_CLUSTER_SIZE;  // > 8 CTAs needs the non-portable opt-in (H100: 16)
  }
  if (rc == CUDA_SUCCESS && cfg->sharedMemBytes > 48 * 1024 &&
      static_cast<int>(cfg->sharedMemBytes) > f->max_dynamic_smem) {
    rc = CUDA_ERROR_INVALID_VALUE;  // the function was not opted in to this much smem
  }
  if (rc == CUDA_SUCCESS && f->name == kStoreKernelName) {
    // Execute the built-in store kernel: copy `count` descriptors to `dst`.
    uint64_t dst;
    unsigned int count;
    std::memcpy(&dst, params[0], 8);
    std::memcpy(&count, params[1], 4);
    if (count > static_cast<unsigned int>(kStoreKernelMaxDescriptors) || threads < 8u * count) {
      rc = CUDA_ERROR_INVALID_VALUE;
    } else if (kHostMemory) {
      std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), params[2],
                  size_t{count} * kTensorMapBytes);
    }
  }
  Push(s, std::move(rec), rc);
  return rc;
}

// Device memory is host memory here (aligned like the driver's allocations); the
// device-memory variant allocates host memory too: nothing on a real GPU is touched.
CUresult RMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  Record rec{{"fn", std::string("cuMemAlloc")}, {"bytesize", int64_t(bytesize)}};
  CUresult rc = TakeInjected(s, "cuMemAlloc");
  if (rc == CUDA_SUCCESS && (dptr == nullptr || bytesize == 0)) rc = CUDA_ERROR_INVALID_VALUE;
  if (rc == CUDA_SUCCESS) {
    void* p = std::aligned_alloc(256, (bytesize + 255) / 256 * 256);
    if (p == nullptr) {
      rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      std::memset(p, 0, bytesize);
      *dptr = reinterpret_cast<uintptr_t>(p);
      s.allocations.emplace(*dptr, bytesize);
      rec.emplace_back("dptr", uint64_t{*dptr});
    }
  }
  Push(s, std::move(rec), rc);
  return rc;
}

CUresult RMemFree(CUdeviceptr dptr) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  CUresult rc = TakeInjected(s, "cuMemFree");
  auto it = s.allocations.find(dptr);
  if (rc == CUDA_SUCCESS && it == s.allocations.end()) rc = CUDA_ERROR_INVALID_VALUE;
  if (rc == CUDA_SUCCESS) {
    std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(dptr)));
    s.allocations.erase(it);
  }
  Push(s, {{"fn", std::string("cuMemFree")}, {"dptr", uint64_t{dptr}}}, rc);
  return rc;
}

CUresult RMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  Record rec{{"fn", std::string("cuMemcpyHtoD")}, {"dst", uint64_t{dst}}};
  CUresult rc = TakeInjected(s, "cuMemcpyHtoD");
  // the destination must lie inside one allocation made through this table
  auto it = s.allocations.upper_bound(dst);
  if (rc == CUDA_SUCCESS &&
      (src == nullptr || it == s.allocations.begin() ||
       dst + bytes > std::prev(it)->first + std::prev(it)->second)) {
    rc = CUDA_ERROR_INVALID_VALUE;
  }
  if (src != nullptr) {
    rec.emplace_back("data", RecordedBytes{std::string(static_cast<const char*>(src), bytes)});
  }
  if (rc == CUDA_SUCCESS) std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, bytes);
  Push(s, std::move(rec), rc);
  return rc;
}

DriverTable MakeTable(bool host_memory) {
  DriverTable t{};
  t.name = host_memory ? "recording" : "recording (device memory)";
  t.is_recording = true;
  t.cuInit = RInit;
  t.cuGetErrorName = RGetErrorName;
  t.cuGetErrorString = RGetErrorString;
  t.cuCtxGetCurrent = RCtxGetCurrent;
  t.cuCtxPushCurrent = RCtxPushCurrent;
  t.cuCtxPopCurrent = RCtxPopCurrent;
  t.cuStreamGetCtx = RStreamGetCtx;
  t.cuModuleLoadData = RModuleLoadData;
  t.cuModuleLoadDataEx = RModuleLoadDataEx;
  t.cuModuleGetFunction = RModuleGetFunction;
  t.cuModuleUnload = RModuleUnload;
  t.cuFuncSetAttribute = RFuncSetAttribute;
  t.cuFuncGetParamInfo = RFuncGetParamInfo;
  t.cuTensorMapEncodeTiled = RTensorMapEncodeTiled;
  t.cuLaunchKernelEx = host_memory ? RLaunchKernelEx<true> : RLaunchKernelEx<false>;
  t.cuMemAlloc = RMemAlloc;
  t.cuMemFree = RMemFree;
  t.cuMemcpyHtoD = RMemcpyHtoD;
  return t;
}

}  // namespace

const DriverTable* RecordingDriver(bool host_memory) {
  static const DriverTable host = MakeTable(true);
  static const DriverTable device = MakeTable(false);
  return host_memory ? &host : &device;
}

std::vector<Record> RecordedCalls() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.records;
}

void ClearRecordedCalls() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.records.clear();
}

void InjectDriverError(const std::string& fn_name, CUresult code) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.injected[fn_name].push_back(code);
}

void ResetRecordingDevice() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.modules.clear();
  s.functions.clear();
  s.injected.clear();
}

}  // namespace jax_pyptx
