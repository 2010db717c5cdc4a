// Module cache, tensor-map encoding, parameter packing and the launch itself.
#include "launch.h"

#include "cubin_file.h"
#include "ptx_params.h"

#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>
#include <vector>

namespace jax_pyptx {
namespace {

constexpr int64_t kDefaultSmemLimit = 48 * 1024;

struct FuncEntry {
  CUfunction fn = nullptr;
  int smem_optin = 0;           // value last given to MAX_DYNAMIC_SHARED_SIZE_BYTES
  bool non_portable_cluster = false;  // NON_PORTABLE_CLUSTER_SIZE_ALLOWED set
  bool param_info = false;      // param_sizes known (cuFuncGetParamInfo available)
  std::vector<size_t> param_sizes;
};

struct ModuleEntry {
  CUmodule module = nullptr;
  std::string source;  // "cubin:<path>" or "ptx"
  std::map<std::string, FuncEntry> funcs;
};

struct Key {
  const DriverTable* d;
  CUcontext ctx;
  std::string sha;
  bool operator<(const Key& o) const {
    return std::tie(d, ctx, sha) < std::tie(o.d, o.ctx, o.sha);
  }
};

std::mutex& CacheMutex() {
  static auto* mu = new std::mutex();  // leaked: outlives static destructors
  return *mu;
}
std::map<Key, ModuleEntry>& Modules() {
  static auto* m = new std::map<Key, ModuleEntry>();
  return *m;
}

std::string ErrorName(const DriverTable& d, CUresult rc, std::string* desc) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_UNRECOGNIZED";
  if (d.cuGetErrorString(rc, &text) == CUDA_SUCCESS && text != nullptr) *desc = text;
  return name;
}

// Makes the stream's context current for the scope when it is not already.
class ScopedContext {
 public:
  ScopedContext(const DriverTable& d, CUcontext ctx) : d_(d) {
    CUcontext cur = nullptr;
    if (d_.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != ctx && ctx != nullptr) {
      pushed_ = d_.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    }
  }
  ~ScopedContext() {
    if (pushed_) {
      CUcontext ignored = nullptr;
      d_.cuCtxPopCurrent(&ignored);
    }
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const DriverTable& d_;
  bool pushed_ = false;
};

std::string ContextOf(const DriverTable& d, const Plan& plan, CUstream stream, CUcontext* ctx) {
  *ctx = nullptr;
  if (d.cuStreamGetCtx(stream, ctx) == CUDA_SUCCESS && *ctx != nullptr) return "";
  CUresult rc = d.cuCtxGetCurrent(ctx);
  if (rc != CUDA_SUCCESS) return DriverError(d, plan, "cuCtxGetCurrent", rc);
  if (*ctx == nullptr) return ErrorPrefix(plan) + "no CUDA context is current and the stream has none";
  return "";
}

std::string CacheDir() {
  if (const char* env = std::getenv("JAX_PYPTX_CACHE_DIR"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/jax_pyptx";
}

// <cache_dir>/<sha>-<arch>{.,-}*.cubin; the lexicographically greatest wins
// (the toolchain appends the ptxas version, so that is the newest build).
bool FindCubin(const std::string& sha, const std::string& arch, std::string* path) {
  if (sha.empty() || arch.empty()) return false;
  const std::string dir = CacheDir();
  DIR* dp = opendir(dir.c_str());
  if (dp == nullptr) return false;
  const std::string prefix = sha + "-" + arch;
  std::string best;
  while (dirent* e = readdir(dp)) {
    const std::string name = e->d_name;
    if (name.size() < prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
    const char next = name[prefix.size()];
    if (next != '.' && next != '-') continue;  // sm_90 must not match sm_90a files
    if (name.compare(name.size() - 6, 6, ".cubin") != 0) continue;
    if (name > best) best = name;
  }
  closedir(dp);
  if (best.empty()) return false;
  *path = dir + "/" + best;
  return true;
}

// JIT-compiles PTX text, keeping the JIT error log for the message.
CUresult LoadPtx(const DriverTable& d, const std::string& ptx, CUmodule* module, std::string* log) {
  std::vector<char> buf(16384, '\0');
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[2] = {buf.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(buf.size()))};
  CUresult rc = d.cuModuleLoadDataEx(module, ptx.c_str(), 2, opts, vals);
  if (rc != CUDA_SUCCESS) log->assign(buf.data());
  return rc;
}

// Loads the module for (sha, ctx) if it is not cached: the first cubin the
// driver accepts (the plan's cubin_path, then the disk cache), else the PTX
// JIT. Caller holds the mutex.
std::string LoadModuleLocked(const DriverTable& d, const Plan& plan, const Key& key,
                             const std::string& ptx, const std::string& fallback_ptx,
                             ModuleEntry** out) {
  auto it = Modules().find(key);
  if (it != Modules().end()) {
    *out = &it->second;
    return "";
  }
  ModuleEntry entry;
  std::vector<std::string> cubins;
  if (fallback_ptx.empty() && key.sha.rfind("builtin:", 0) != 0) {  // built-ins: PTX only
    if (!plan.cubin_path.empty()) cubins.push_back(plan.cubin_path);
    std::string cached;
    if (FindCubin(key.sha, plan.arch, &cached)) cubins.push_back(cached);
  }
  std::string cubin_note;
  for (const std::string& path : cubins) {
    std::string image, why;
    if (!ReadModuleImage(path, &image, &why)) {  // size, stamp and ELF bounds checked
      if (!why.empty()) cubin_note += "; the cubin " + path + " was skipped (" + why + ")";
      continue;
    }
    CUresult rc = d.cuModuleLoadData(&entry.module, image.data());
    if (rc == CUDA_SUCCESS) {
      entry.source = "cubin:" + path;
      break;
    }
    std::string desc;
    cubin_note += "; the cubin " + path + " was rejected too (" + ErrorName(d, rc, &desc) + ")";
    entry.module = nullptr;
  }
  if (entry.module == nullptr) {
    std::string log;
    CUresult rc = LoadPtx(d, ptx, &entry.module, &log);
    if (rc != CUDA_SUCCESS && !fallback_ptx.empty()) {
      rc = LoadPtx(d, fallback_ptx, &entry.module, &log);
    }
    if (rc != CUDA_SUCCESS) {
      return DriverError(d, plan, "cuModuleLoadDataEx", rc,
                         (log.empty() ? "" : "\nJIT log:\n" + log) + cubin_note);
    }
    entry.source = "ptx";
  }
  *out = &Modules().emplace(key, std::move(entry)).first->second;
  return "";
}

std::string GetFunctionLocked(const DriverTable& d, const Plan& plan, ModuleEntry* module,
                              const std::string& name, FuncEntry** out) {
  auto it = module->funcs.find(name);
  if (it != module->funcs.end()) {
    *out = &it->second;
    return "";
  }
  FuncEntry fe;
  CUresult rc = d.cuModuleGetFunction(&fe.fn, module->module, name.c_str());
  if (rc != CUDA_SUCCESS) {
    return DriverError(d, plan, "cuModuleGetFunction", rc,
                       " (no .entry named '" + name + "' in the module)");
  }
  if (d.cuFuncGetParamInfo != nullptr) {
    // Ask only for the parameters the .entry declares: an index past the last one is an API
    // error (CUDA_ERROR_INVALID_VALUE) that compute-sanitizer reports. The PTX text says how
    // many there are; where this reader cannot size one, the plan's count is asked for.
    size_t declared = plan.params.size();
    const std::map<std::string, PtxEntry> entries = ParsePtxEntries(plan.ptx);
    auto e = entries.find(name);
    if (e != entries.end() && e->second.params_known) declared = e->second.params.size();
    fe.param_info = true;
    for (size_t i = 0; i < declared; ++i) {
      size_t offset = 0, size = 0;
      CUresult prc = d.cuFuncGetParamInfo(fe.fn, i, &offset, &size);
      if (prc == CUDA_ERROR_INVALID_VALUE) break;  // fewer than asked for: CheckParams says so
      if (prc != CUDA_SUCCESS) {                   // the driver cannot tell (older cubins)
        fe.param_info = false;
        break;
      }
      fe.param_sizes.push_back(size);
    }
  }
  *out = &module->funcs.emplace(name, std::move(fe)).first->second;
  return "";
}

std::string PrepareLocked(const DriverTable& d, const Plan& plan, CUcontext ctx, FuncEntry* user,
                          FuncEntry* store) {
  ScopedContext scoped(d, ctx);
  ModuleEntry* module = nullptr;
  std::string err =
      LoadModuleLocked(d, plan, Key{&d, ctx, plan.ptx_sha256}, plan.ptx, "", &module);
  if (!err.empty()) return err;
  FuncEntry* fe = nullptr;
  err = GetFunctionLocked(d, plan, module, plan.kernel_name, &fe);
  if (!err.empty()) return err;
  if (plan.smem_bytes > kDefaultSmemLimit && fe->smem_optin < plan.smem_bytes) {
    CUresult rc = d.cuFuncSetAttribute(fe->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(plan.smem_bytes));
    if (rc != CUDA_SUCCESS) {
      return DriverError(d, plan, "cuFuncSetAttribute", rc,
                         " (MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(plan.smem_bytes) + ")");
    }
    fe->smem_optin = static_cast<int>(plan.smem_bytes);
  }
  const unsigned int cluster_size = plan.cluster[0] * plan.cluster[1] * plan.cluster[2];
  if (cluster_size > kMaxPortableClusterSize && !fe->non_portable_cluster) {
    CUresult rc = d.cuFuncSetAttribute(fe->fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (rc != CUDA_SUCCESS) {
      return DriverError(d, plan, "cuFuncSetAttribute", rc,
                         " (NON_PORTABLE_CLUSTER_SIZE_ALLOWED, for a cluster of " +
                             std::to_string(cluster_size) + " CTAs)");
    }
    fe->non_portable_cluster = true;
  }
  *user = *fe;
  if (plan.num_global_descriptors > 0) {
    ModuleEntry* sm = nullptr;
    static const std::string* const kWithFence = new std::string(StoreKernelPtx(true));
    static const std::string* const kWithoutFence = new std::string(StoreKernelPtx(false));
    err = LoadModuleLocked(d, plan, Key{&d, ctx, kStoreKernelKey}, *kWithFence, *kWithoutFence, &sm);
    if (!err.empty()) return err;
    FuncEntry* sf = nullptr;
    err = GetFunctionLocked(d, plan, sm, kStoreKernelName, &sf);
    if (!err.empty()) return err;
    *store = *sf;
  }
  return "";
}

std::string Prepare(const DriverTable& d, const Plan& plan, CUcontext ctx, FuncEntry* user,
                    FuncEntry* store) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  return PrepareLocked(d, plan, ctx, user, store);
}

const char* KindName(ParamKind k) {
  switch (k) {
    case ParamKind::kBuffer: return "buffer";
    case ParamKind::kScalar: return "scalar";
    default: return "tensor map";
  }
}

std::string CheckParams(const Plan& plan, const FuncEntry& fe) {
  if (!fe.param_info) return "";
  if (fe.param_sizes.size() != plan.params.size()) {
    return ErrorPrefix(plan) + "the kernel declares " + std::to_string(fe.param_sizes.size()) +
           " parameters but the plan passes " + std::to_string(plan.params.size());
  }
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (fe.param_sizes[i] != static_cast<size_t>(plan.params[i].size)) {
      return ErrorPrefix(plan) + "parameter " + std::to_string(i) + " is " +
             std::to_string(fe.param_sizes[i]) + " bytes in the kernel but the plan passes a " +
             std::to_string(plan.params[i].size) + "-byte " + KindName(plan.params[i].kind);
    }
  }
  return "";
}

std::string Encode(const DriverTable& d, const Plan& plan, size_t i, uint64_t base,
                   CUtensorMap* out) {
  const TmaDesc& t = plan.tma[i];
  CUresult rc = d.cuTensorMapEncodeTiled(
      out, static_cast<CUtensorMapDataType>(t.data_type), static_cast<cuuint32_t>(t.rank),
      reinterpret_cast<void*>(static_cast<uintptr_t>(base)), t.dims, t.strides, t.box,
      t.element_strides, static_cast<CUtensorMapInterleave>(t.interleave),
      static_cast<CUtensorMapSwizzle>(t.swizzle), static_cast<CUtensorMapL2promotion>(t.l2_promotion),
      static_cast<CUtensorMapFloatOOBfill>(t.oob_fill));
  if (rc != CUDA_SUCCESS) {
    return DriverError(d, plan, "cuTensorMapEncodeTiled", rc,
                       " (tma[" + std::to_string(i) + "] over operand " + std::to_string(t.operand) +
                           ", rank " + std::to_string(t.rank) + ")");
  }
  return "";
}

}  // namespace

std::string StoreKernelPtx(bool with_proxy_fence) {
  std::string ptx = std::string(".version ") + (with_proxy_fence ? "8.3" : "7.8") +
                    "\n.target sm_90\n.address_size 64\n\n.visible .entry " + kStoreKernelName +
                    "(\n  .param .u64 dst,\n  .param .u32 count,\n  .param .align 128 .b8 src[" +
                    std::to_string(kStoreKernelParamBytes) + "]\n)\n";
  ptx +=
      "{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<6>;\n"
      "  mov.u32 %r1, %tid.x;\n"
      "  ld.param.u32 %r2, [count];\n"
      "  shl.b32 %r3, %r2, 3;\n"
      "  setp.ge.u32 %p1, %r1, %r3;\n"
      "  @%p1 bra DONE;\n"
      "  ld.param.u64 %rd1, [dst];\n"
      "  cvta.to.global.u64 %rd1, %rd1;\n"
      "  mul.wide.u32 %rd2, %r1, 16;\n"
      "  mov.u64 %rd3, src;\n"
      "  add.u64 %rd3, %rd3, %rd2;\n"
      "  ld.param.v4.u32 {%r4, %r5, %r6, %r7}, [%rd3];\n"
      "  add.u64 %rd4, %rd1, %rd2;\n"
      "  st.global.v4.u32 [%rd4], {%r4, %r5, %r6, %r7};\n";
  if (with_proxy_fence) ptx += "  fence.proxy.tensormap::generic.release.gpu;\n";
  ptx += "DONE:\n  ret;\n}\n";
  return ptx;
}

std::string DriverError(const DriverTable& d, const Plan& plan, const char* fn, CUresult rc,
                        const std::string& detail) {
  std::string desc;
  const std::string name = ErrorName(d, rc, &desc);
  return ErrorPrefix(plan) + fn + " failed: " + name + " (" + std::to_string(rc) + ")" +
         (desc.empty() ? "" : ": " + desc) + detail;
}

std::string PrepareModules(const DriverTable& d, const Plan& plan, CUstream stream) {
  CUcontext ctx = nullptr;
  std::string err = ContextOf(d, plan, stream, &ctx);
  if (!err.empty()) return err;
  FuncEntry user, store;
  return Prepare(d, plan, ctx, &user, &store);
}

std::string Launch(const DriverTable& d, const Plan& plan, const BufferRef* buffers, size_t count,
                   CUstream stream) {
  const int64_t need = plan.min_operands + (plan.workspace_bytes > 0 ? 1 : 0);
  if (static_cast<int64_t>(count) < need) return ValidateBuffers(plan, buffers, count);
  CUcontext ctx = nullptr;
  std::string err = ContextOf(d, plan, stream, &ctx);
  if (!err.empty()) return err;
  FuncEntry user, store;
  err = Prepare(d, plan, ctx, &user, &store);
  if (!err.empty()) return err;
  err = CheckParams(plan, user);
  if (!err.empty()) return err;
  ScopedContext scoped(d, ctx);

  // Tensor maps: by-value ones go straight into the parameter list; global
  // ones are staged and stored into the workspace by the built-in kernel.
  const size_t ntma = plan.tma.size();
  std::vector<CUtensorMap> by_value(ntma);
  std::vector<CUtensorMap> staged(static_cast<size_t>(plan.num_global_descriptors));
  size_t at = 0;
  for (size_t i = 0; i < ntma; ++i) {
    const TmaDesc& t = plan.tma[i];
    const uint64_t base = buffers[t.operand].ptr;
    if (t.mode == TmaMode::kByValue) {
      err = Encode(d, plan, i, base, &by_value[i]);
      if (!err.empty()) return err;
      continue;
    }
    for (int64_t b = 0; b < t.batch; ++b, ++at) {
      err = Encode(d, plan, i, base + static_cast<uint64_t>(b * t.batch_stride), &staged[at]);
      if (!err.empty()) return err;
    }
  }
  const uint64_t workspace = plan.workspace_bytes > 0 ? buffers[count - 1].ptr : 0;
  if (!staged.empty()) {
    if (workspace % 64 != 0) {
      return ErrorPrefix(plan) + "the descriptor workspace is not 64-byte aligned";
    }
    struct alignas(128) StoreArgs {
      unsigned char bytes[kStoreKernelParamBytes];
    };
    auto args = std::make_unique<StoreArgs>();
    for (size_t first = 0; first < staged.size(); first += kStoreKernelMaxDescriptors) {
      const size_t n = std::min<size_t>(kStoreKernelMaxDescriptors, staged.size() - first);
      std::memset(args->bytes, 0, sizeof(args->bytes));
      std::memcpy(args->bytes, &staged[first], n * kTensorMapBytes);
      uint64_t dst = workspace + first * kTensorMapBytes;
      unsigned int n32 = static_cast<unsigned int>(n);
      void* params[3] = {&dst, &n32, args->bytes};
      CUlaunchConfig cfg{};
      cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = static_cast<unsigned int>(8 * n);
      cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.hStream = stream;
      CUresult rc = d.cuLaunchKernelEx(&cfg, store.fn, params, nullptr);
      if (rc != CUDA_SUCCESS) {
        return DriverError(d, plan, "cuLaunchKernelEx", rc, " (storing tensor maps into the workspace)");
      }
    }
  }

  // Parameters in .entry order: pointers to each value, as the driver expects.
  const size_t np = plan.params.size();
  std::vector<uint64_t> words(np);
  std::vector<void*> params(np);
  for (size_t i = 0; i < np; ++i) {
    const ParamSlot& p = plan.params[i];
    switch (p.kind) {
      case ParamKind::kBuffer:
        words[i] = buffers[p.index].ptr;
        params[i] = &words[i];
        break;
      case ParamKind::kScalar:
        params[i] = const_cast<uint8_t*>(plan.param_data.data() + p.index);
        break;
      case ParamKind::kTma: {
        const TmaDesc& t = plan.tma[p.index];
        if (t.mode == TmaMode::kByValue) {
          params[i] = &by_value[p.index];
        } else {
          words[i] = workspace + static_cast<uint64_t>(t.workspace_offset);
          params[i] = &words[i];
        }
        break;
      }
    }
  }
  CUlaunchAttribute attr{};
  CUlaunchConfig cfg{};
  cfg.gridDimX = plan.grid[0];
  cfg.gridDimY = plan.grid[1];
  cfg.gridDimZ = plan.grid[2];
  cfg.blockDimX = plan.block[0];
  cfg.blockDimY = plan.block[1];
  cfg.blockDimZ = plan.block[2];
  cfg.sharedMemBytes = static_cast<unsigned int>(plan.smem_bytes);
  cfg.hStream = stream;
  if (plan.has_cluster()) {
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = plan.cluster[0];
    attr.value.clusterDim.y = plan.cluster[1];
    attr.value.clusterDim.z = plan.cluster[2];
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  CUresult rc = d.cuLaunchKernelEx(&cfg, user.fn, np ? params.data() : nullptr, nullptr);
  if (rc != CUDA_SUCCESS) {
    std::ostringstream os;
    os << " (grid " << plan.grid[0] << "x" << plan.grid[1] << "x" << plan.grid[2] << ", block "
       << plan.block[0] << "x" << plan.block[1] << "x" << plan.block[2] << ", cluster "
       << plan.cluster[0] << "x" << plan.cluster[1] << "x" << plan.cluster[2] << ", smem "
       << plan.smem_bytes << ")";
    return DriverError(d, plan, "cuLaunchKernelEx", rc, os.str());
  }
  return "";
}

int ResetModuleCache(const DriverTable* d) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  int dropped = 0;
  for (auto it = Modules().begin(); it != Modules().end();) {
    if (it->first.d == d) {
      d->cuModuleUnload(it->second.module);
      it = Modules().erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  return dropped;
}

}  // namespace jax_pyptx
