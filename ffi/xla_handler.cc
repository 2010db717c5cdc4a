// The XLA typed-FFI handler "jax_pyptx_launch".
//
// Stages (the same bundle on both platforms; only the driver table and the
// stream differ):
//   instantiate  decode + validate the attributes into a Plan, once per
//                executable; kept as the handler's state;
//   prepare      check the call's buffers against the plan (operand count,
//                workspace size, every tensor map inside its buffer);
//   initialize   load the module for the stream's context (cubin cache or
//                PTX JIT), set the dynamic smem limit, load the tensor-map
//                store kernel -- so that execute, which XLA may capture into
//                a CUDA graph, never loads modules;
//   execute      encode tensor maps from the live buffer pointers, store the
//                global-mode ones into the workspace, launch.
// CUDA uses libcuda (or the recording table after set_recording(True)) and
// XLA's stream; it is marked command-buffer compatible: execute only enqueues
// kernel launches on that stream, allocates no device memory and never
// synchronizes. Host ("cpu") always uses the recording table, with a null
// stream, so a jitted call on a CPU-only machine runs this whole path.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "launch.h"
#include "plan.h"
#include "xla/ffi/api/ffi.h"
#include "xla_handler.h"

namespace ffi = xla::ffi;

namespace jax_pyptx {
namespace {

std::atomic<bool> g_cuda_uses_recording{false};

class DictSource final : public AttrSource {
 public:
  explicit DictSource(const ffi::Dictionary& d) : d_(d) {}
  bool Has(const char* name) const override { return d_.contains(name); }
  bool GetString(const char* name, std::string* out, std::string* err) const override {
    auto v = d_.get<std::string_view>(name);
    if (!v.has_value()) return Fail(name, "a string", v.error(), err);
    out->assign(v->data(), v->size());
    return true;
  }
  bool GetInt(const char* name, int64_t* out, std::string* err) const override {
    auto v = d_.get<int64_t>(name);
    if (!v.has_value()) return Fail(name, "an int64 scalar", v.error(), err);
    *out = *v;
    return true;
  }
  bool GetInts(const char* name, std::vector<int64_t>* out, std::string* err) const override {
    auto v = d_.get<ffi::Span<const int64_t>>(name);
    if (!v.has_value()) return Fail(name, "an int64 array", v.error(), err);
    out->assign(v->begin(), v->end());
    return true;
  }
  bool GetBytes(const char* name, std::vector<uint8_t>* out, std::string* err) const override {
    auto v = d_.get<ffi::Span<const uint8_t>>(name);
    if (!v.has_value()) return Fail(name, "a uint8 array", v.error(), err);
    out->assign(v->begin(), v->end());
    return true;
  }

 private:
  static bool Fail(const char* name, const char* what, const ffi::Error& e, std::string* err) {
    *err = std::string("attribute '") + name + "' must be " + what + " (" + e.message() + ")";
    return false;
  }
  const ffi::Dictionary& d_;
};

// Handler state: the decoded plan. One type per platform (distinct XLA type
// registrations).
template <int kPlatform>
struct LaunchState {
  static ffi::TypeId id;
  Plan plan;
};
template <int kPlatform>
ffi::TypeId LaunchState<kPlatform>::id = XLA_FFI_UNKNOWN_TYPE_ID;
template <int kPlatform>
const XLA_FFI_TypeInfo kStateTypeInfo = ffi::MakeTypeInfo<LaunchState<kPlatform>>();

constexpr int kCuda = 0;
constexpr int kHost = 1;

ffi::Error Fail(const std::string& msg) { return ffi::Error(ffi::ErrorCode::kInternal, msg); }

template <int P>
ffi::ErrorOr<std::unique_ptr<LaunchState<P>>> Instantiate(ffi::Dictionary attrs) {
  auto state = std::make_unique<LaunchState<P>>();
  std::string err = DecodePlan(DictSource(attrs), &state->plan);
  if (!err.empty()) return ffi::Unexpected(ffi::Error::InvalidArgument(err));
  return state;
}

// Collects inputs then outputs as BufferRefs. Returns "" or an error.
std::string CollectBuffers(const Plan& plan, ffi::RemainingArgs args, ffi::RemainingRets rets,
                           std::vector<BufferRef>* out) {
  out->clear();
  out->reserve(args.size() + rets.size());
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (!b.has_value()) return ErrorPrefix(plan) + "input " + std::to_string(i) + ": " + b.error().message();
    out->push_back({reinterpret_cast<uintptr_t>(b->untyped_data()), b->size_bytes()});
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i);
    if (!b.has_value()) return ErrorPrefix(plan) + "output " + std::to_string(i) + ": " + b.error().message();
    out->push_back({reinterpret_cast<uintptr_t>((*b)->untyped_data()), (*b)->size_bytes()});
  }
  return "";
}

const DriverTable* TableFor(int platform, std::string* err) {
  if (platform == kHost) return RecordingDriver(/*host_memory=*/true);
  if (g_cuda_uses_recording.load(std::memory_order_relaxed)) {
    return RecordingDriver(/*host_memory=*/false);  // XLA:CUDA buffers are device memory
  }
  const char* why = nullptr;
  const DriverTable* d = RealDriver(&why);
  if (d == nullptr) *err = std::string("jax_pyptx: cannot use the CUDA driver: ") + (why ? why : "?");
  return d;
}

template <int P>
ffi::Error Prepare(LaunchState<P>* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  std::vector<BufferRef> bufs;
  // Buffers a runtime does not describe at this stage are left to execute.
  if (!CollectBuffers(state->plan, args, rets, &bufs).empty()) return ffi::Error::Success();
  std::string err = ValidateBuffers(state->plan, bufs.data(), bufs.size());
  return err.empty() ? ffi::Error::Success() : ffi::Error::InvalidArgument(err);
}

ffi::Error InitializeOn(int platform, CUstream stream, const Plan& plan) {
  std::string err;
  const DriverTable* d = TableFor(platform, &err);
  if (d != nullptr) err = PrepareModules(*d, plan, stream);
  return err.empty() ? ffi::Error::Success() : Fail(err);
}

ffi::Error ExecuteOn(int platform, CUstream stream, const Plan& plan,
                     const std::vector<BufferRef>& bufs) {
  std::string err;
  const DriverTable* d = TableFor(platform, &err);
  if (d != nullptr) err = Launch(*d, plan, bufs.data(), bufs.size(), stream);
  return err.empty() ? ffi::Error::Success() : Fail(err);
}

}  // namespace

// ------------------------------------------------------------------ CUDA --
XLA_FFI_DEFINE_HANDLER(kCudaInstantiate, Instantiate<kCuda>,
                       ffi::Ffi::BindInstantiate().Attrs<ffi::Dictionary>());
XLA_FFI_DEFINE_HANDLER(kCudaPrepare, Prepare<kCuda>,
                       ffi::Ffi::BindPrepare()
                           .Ctx<ffi::State<LaunchState<kCuda>>>()
                           .RemainingArgs()
                           .RemainingRets(),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(
    kCudaInitialize,
    [](CUstream stream, LaunchState<kCuda>* state) { return InitializeOn(kCuda, stream, state->plan); },
    ffi::Ffi::BindInitialize()
        .Ctx<ffi::PlatformStream<CUstream>>()
        .Ctx<ffi::State<LaunchState<kCuda>>>(),
    {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(
    kCudaExecute,
    [](CUstream stream, LaunchState<kCuda>* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
      std::vector<BufferRef> bufs;
      std::string err = CollectBuffers(state->plan, args, rets, &bufs);
      if (!err.empty()) return Fail(err);
      return ExecuteOn(kCuda, stream, state->plan, bufs);
    },
    ffi::Ffi::Bind()
        .Ctx<ffi::PlatformStream<CUstream>>()
        .Ctx<ffi::State<LaunchState<kCuda>>>()
        .RemainingArgs()
        .RemainingRets(),
    {ffi::Traits::kCmdBufferCompatible});

// ------------------------------------------------------------------ Host --
XLA_FFI_DEFINE_HANDLER(kHostInstantiate, Instantiate<kHost>,
                       ffi::Ffi::BindInstantiate().Attrs<ffi::Dictionary>());
XLA_FFI_DEFINE_HANDLER(kHostPrepare, Prepare<kHost>,
                       ffi::Ffi::BindPrepare()
                           .Ctx<ffi::State<LaunchState<kHost>>>()
                           .RemainingArgs()
                           .RemainingRets());
XLA_FFI_DEFINE_HANDLER(
    kHostInitialize,
    [](LaunchState<kHost>* state) { return InitializeOn(kHost, nullptr, state->plan); },
    ffi::Ffi::BindInitialize().Ctx<ffi::State<LaunchState<kHost>>>());
XLA_FFI_DEFINE_HANDLER(
    kHostExecute,
    [](LaunchState<kHost>* state, ffi::RemainingArgs args, ffi::RemainingRets rets) {
      // Prepare/initialize may be skipped by the host runtime: validate here.
      std::vector<BufferRef> bufs;
      std::string err = CollectBuffers(state->plan, args, rets, &bufs);
      if (err.empty()) err = ValidateBuffers(state->plan, bufs.data(), bufs.size());
      if (!err.empty()) return ffi::Error::InvalidArgument(err);
      return ExecuteOn(kHost, nullptr, state->plan, bufs);
    },
    ffi::Ffi::Bind().Ctx<ffi::State<LaunchState<kHost>>>().RemainingArgs().RemainingRets());

HandlerBundle GetHandlerBundle(bool cuda) {
  if (cuda) {
    return {reinterpret_cast<void*>(kCudaInstantiate), reinterpret_cast<void*>(kCudaPrepare),
            reinterpret_cast<void*>(kCudaInitialize), reinterpret_cast<void*>(kCudaExecute),
            &LaunchState<kCuda>::id, &kStateTypeInfo<kCuda>};
  }
  return {reinterpret_cast<void*>(kHostInstantiate), reinterpret_cast<void*>(kHostPrepare),
          reinterpret_cast<void*>(kHostInitialize), reinterpret_cast<void*>(kHostExecute),
          &LaunchState<kHost>::id, &kStateTypeInfo<kHost>};
}

void SetCudaUsesRecording(bool enabled) { g_cuda_uses_recording.store(enabled); }
bool CudaUsesRecording() { return g_cuda_uses_recording.load(); }

}  // namespace jax_pyptx
