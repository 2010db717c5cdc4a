// jax_pyptx._ffi: the nanobind module.
//
//   handlers(platform)        {"instantiate", "prepare", "initialize", "execute"} -> PyCapsule
//   state_type(platform)      {"type_id", "type_info"} -> PyCapsule (jax.ffi.register_ffi_type)
//   Plan(attrs)               a decoded plan (attrs: plan_to_attrs(...) dict)
//   launch(plan, pointers, stream, sizes=None)   the PyTorch path: raw device
//                             pointers (inputs, outputs, then the workspace when
//                             the plan has one) and a CUstream as an int
//   encode_tensor_map(...)    cuTensorMapEncodeTiled -> 128 bytes (stand-alone tensor maps)
//   mem_alloc / mem_free / memcpy_htod   device memory for stand-alone tensor maps
//   set_recording / recording_enabled / recorded_calls / clear_recording /
//   inject_driver_error / reset_module_cache / driver_status
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch.h"
#include "plan.h"
#include "recording.h"
#include "xla_handler.h"

namespace nb = nanobind;
using namespace nb::literals;  // NOLINT

namespace jax_pyptx {
namespace {

// Attribute source over the Python dict made by ffi_plan.plan_to_attrs:
// numpy arrays / scalars (or plain lists / ints), str for strings.
class PyDictSource final : public AttrSource {
 public:
  explicit PyDictSource(nb::dict d) : d_(std::move(d)) {}
  bool Has(const char* name) const override { return d_.contains(name); }
  bool GetString(const char* name, std::string* out, std::string* err) const override {
    nb::object v;
    if (!Get(name, &v, err)) return false;
    if (nb::isinstance<nb::str>(v)) {
      *out = nb::cast<std::string>(v);
      return true;
    }
    if (nb::isinstance<nb::bytes>(v)) {
      nb::bytes b = nb::borrow<nb::bytes>(v);
      out->assign(b.c_str(), b.size());
      return true;
    }
    return Bad(name, "a str", err);
  }
  bool GetInt(const char* name, int64_t* out, std::string* err) const override {
    nb::object v;
    if (!Get(name, &v, err)) return false;
    try {
      *out = nb::cast<int64_t>(nb::module_::import_("operator").attr("index")(v));
      return true;
    } catch (const std::exception&) {
      return Bad(name, "an integer", err);
    }
  }
  bool GetInts(const char* name, std::vector<int64_t>* out, std::string* err) const override {
    nb::object v;
    if (!Get(name, &v, err)) return false;
    try {
      nb::object np = nb::module_::import_("numpy");
      nb::object arr = np.attr("ascontiguousarray")(v, "dtype"_a = np.attr("int64")).attr("ravel")();
      *out = nb::cast<std::vector<int64_t>>(arr.attr("tolist")());
      return true;
    } catch (const std::exception&) {
      return Bad(name, "a sequence of integers", err);
    }
  }
  bool GetBytes(const char* name, std::vector<uint8_t>* out, std::string* err) const override {
    nb::object v;
    if (!Get(name, &v, err)) return false;
    try {
      nb::object np = nb::module_::import_("numpy");
      nb::bytes b = nb::cast<nb::bytes>(
          np.attr("ascontiguousarray")(v, "dtype"_a = np.attr("uint8")).attr("tobytes")());
      const auto* p = reinterpret_cast<const uint8_t*>(b.c_str());
      out->assign(p, p + b.size());
      return true;
    } catch (const std::exception&) {
      return Bad(name, "a uint8 array", err);
    }
  }

 private:
  bool Get(const char* name, nb::object* out, std::string* err) const {
    if (!d_.contains(name)) {
      *err = std::string("missing attribute '") + name + "'";
      return false;
    }
    *out = d_[name];
    return true;
  }
  static bool Bad(const char* name, const char* what, std::string* err) {
    *err = std::string("attribute '") + name + "' must be " + what;
    return false;
  }
  nb::dict d_;
};

struct PyPlan {
  Plan plan;
};

const DriverTable* TorchTable() {
  const char* why = nullptr;
  if (CudaUsesRecording()) {
    // With a GPU the pointers are device memory: record the store, do not emulate it.
    return RecordingDriver(/*host_memory=*/RealDriver(&why) == nullptr);
  }
  const DriverTable* d = RealDriver(&why);
  if (d == nullptr) throw std::runtime_error(std::string("jax_pyptx: cannot use the CUDA driver: ") + why);
  return d;
}

nb::object ToPython(const RecordValue& v) {
  switch (v.index()) {
    case 0: return nb::int_(std::get<int64_t>(v));
    case 1: return nb::int_(std::get<uint64_t>(v));
    case 2: return nb::str(std::get<std::string>(v).c_str(), std::get<std::string>(v).size());
    case 3: {
      const std::string& b = std::get<RecordedBytes>(v).data;
      return nb::bytes(b.data(), b.size());
    }
    default: {
      nb::list out;
      for (int64_t x : std::get<std::vector<int64_t>>(v)) out.append(nb::int_(x));
      return nb::tuple(out);
    }
  }
}

nb::capsule Capsule(const void* p) { return nb::capsule(p); }

// "<fn> failed: CUDA_ERROR_X (code): description"
std::string CallError(const DriverTable& d, const char* fn, CUresult rc) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_UNRECOGNIZED";
  std::string out = std::string("jax_pyptx: ") + fn + " failed: " + name + " (" + std::to_string(rc) + ")";
  if (d.cuGetErrorString(rc, &text) == CUDA_SUCCESS && text != nullptr) out += std::string(": ") + text;
  return out;
}

template <typename T>
std::string Join(const std::vector<T>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + ")";
}

const DriverTable& MemoryTable(const char* fn) {
  const DriverTable* d = TorchTable();
  if (d->cuMemAlloc == nullptr || d->cuMemFree == nullptr || d->cuMemcpyHtoD == nullptr) {
    throw std::runtime_error(std::string("jax_pyptx: ") + fn + ": the CUDA driver (" + d->name +
                             ") lacks cuMemAlloc/cuMemFree/cuMemcpyHtoD");
  }
  return *d;
}

}  // namespace
}  // namespace jax_pyptx

using namespace jax_pyptx;  // NOLINT

NB_MODULE(_ffi, m) {
  m.doc() = "jax_pyptx C++ launcher: XLA FFI handler and PyTorch entry point";
  m.attr("FFI_TARGET") = "jax_pyptx_launch";
  m.attr("STORE_KERNEL_NAME") = kStoreKernelName;
  m.attr("RECORDING_CONTEXT") = reinterpret_cast<uintptr_t>(RecordingContext());

  m.def(
      "handlers",
      [](const std::string& platform) {
        const bool cuda = platform == "CUDA" || platform == "cuda" || platform == "gpu";
        if (!cuda && platform != "cpu" && platform != "Host" && platform != "host") {
          throw nb::value_error("platform must be 'CUDA' or 'cpu'");
        }
        HandlerBundle b = GetHandlerBundle(cuda);
        nb::dict d;
        d["instantiate"] = Capsule(b.instantiate);
        d["prepare"] = Capsule(b.prepare);
        d["initialize"] = Capsule(b.initialize);
        d["execute"] = Capsule(b.execute);
        return d;
      },
      "platform"_a, "Stage name -> PyCapsule of the XLA FFI handler for 'CUDA' or 'cpu'.");

  m.def(
      "state_type",
      [](const std::string& platform) {
        HandlerBundle b = GetHandlerBundle(platform == "CUDA" || platform == "cuda" || platform == "gpu");
        nb::dict d;
        d["type_id"] = Capsule(b.state_type_id);
        d["type_info"] = Capsule(b.state_type_info);
        return d;
      },
      "platform"_a, "The handler state's type registration for jax.ffi.register_ffi_type.");

  nb::class_<PyPlan>(m, "Plan")
      .def(
          "__init__",
          [](PyPlan* self, nb::dict attrs) {
            new (self) PyPlan();
            std::string err = DecodePlan(PyDictSource(attrs), &self->plan);
            if (!err.empty()) throw nb::value_error(err.c_str());
          },
          "attrs"_a)
      .def_prop_ro("kernel_name", [](const PyPlan& p) { return p.plan.kernel_name; })
      .def_prop_ro("workspace_bytes", [](const PyPlan& p) { return p.plan.workspace_bytes; })
      .def_prop_ro("num_buffers", [](const PyPlan& p) {
        return p.plan.min_operands + (p.plan.workspace_bytes > 0 ? 1 : 0);
      });

  m.def(
      "launch",
      [](const PyPlan& p, const std::vector<uint64_t>& pointers, uint64_t stream,
         std::optional<std::vector<uint64_t>> sizes) {
        std::vector<BufferRef> bufs(pointers.size());
        if (sizes && sizes->size() != pointers.size()) {
          throw nb::value_error("sizes must have one entry per pointer");
        }
        for (size_t i = 0; i < pointers.size(); ++i) {
          bufs[i].ptr = pointers[i];
          bufs[i].size = sizes ? (*sizes)[i] : kUnknownSize;
        }
        const DriverTable* d = TorchTable();
        std::string err = ValidateBuffers(p.plan, bufs.data(), bufs.size());
        if (err.empty()) {
          nb::gil_scoped_release release;
          err = Launch(*d, p.plan, bufs.data(), bufs.size(),
                       reinterpret_cast<CUstream>(static_cast<uintptr_t>(stream)));
        }
        if (!err.empty()) throw std::runtime_error(err);
      },
      "plan"_a, "pointers"_a, "stream"_a, "sizes"_a = nb::none(),
      "Launch on raw device pointers (inputs, outputs, then the workspace) and a CUstream.");

  m.def(
      "encode_tensor_map",
      [](int data_type, const std::vector<uint64_t>& dims, const std::vector<uint64_t>& strides,
         const std::vector<uint32_t>& box, const std::vector<uint32_t>& element_strides,
         int interleave, int swizzle, int l2_promotion, int oob_fill, uint64_t address) {
        const size_t rank = dims.size();
        if (rank < 1 || rank > static_cast<size_t>(kMaxTensorRank) || strides.size() + 1 != rank ||
            box.size() != rank || element_strides.size() != rank) {
          throw nb::value_error(("encode_tensor_map: rank " + std::to_string(rank) + " needs " +
                                 "1..5 dims, rank-1 strides, rank box and element strides; got dims " +
                                 Join(dims) + ", strides " + Join(strides) + ", box " + Join(box) +
                                 ", element strides " + Join(element_strides)).c_str());
        }
        const DriverTable* d = TorchTable();
        CUtensorMap map{};
        CUresult rc = d->cuTensorMapEncodeTiled(
            &map, static_cast<CUtensorMapDataType>(data_type), static_cast<cuuint32_t>(rank),
            reinterpret_cast<void*>(static_cast<uintptr_t>(address)), dims.data(), strides.data(),
            box.data(), element_strides.data(), static_cast<CUtensorMapInterleave>(interleave),
            static_cast<CUtensorMapSwizzle>(swizzle), static_cast<CUtensorMapL2promotion>(l2_promotion),
            static_cast<CUtensorMapFloatOOBfill>(oob_fill));
        if (rc != CUDA_SUCCESS) {
          throw std::runtime_error(CallError(*d, "cuTensorMapEncodeTiled", rc) + " (rank " +
                                   std::to_string(rank) + ", global dims " + Join(dims) +
                                   ", box " + Join(box) + ", swizzle " + std::to_string(swizzle) + ")");
        }
        return nb::bytes(reinterpret_cast<const char*>(&map), kTensorMapBytes);
      },
      "data_type"_a, "dims"_a, "strides"_a, "box"_a, "element_strides"_a, "interleave"_a,
      "swizzle"_a, "l2_promotion"_a, "oob_fill"_a, "address"_a,
      "cuTensorMapEncodeTiled through the launcher's driver table (the recording one under "
      "set_recording(True)); per-dimension lists innermost first. Returns the 128 bytes.");
  m.def(
      "mem_alloc",
      [](size_t bytes) {
        const DriverTable& d = MemoryTable("mem_alloc");
        CUdeviceptr p = 0;
        CUresult rc = d.cuMemAlloc(&p, bytes);
        if (rc != CUDA_SUCCESS) throw std::runtime_error(CallError(d, "cuMemAlloc", rc));
        return static_cast<uint64_t>(p);
      },
      "bytes"_a, "cuMemAlloc through the launcher's driver table; needs a current context.");
  m.def(
      "mem_free",
      [](uint64_t ptr) {
        const DriverTable& d = MemoryTable("mem_free");
        CUresult rc = d.cuMemFree(static_cast<CUdeviceptr>(ptr));
        if (rc != CUDA_SUCCESS) throw std::runtime_error(CallError(d, "cuMemFree", rc));
      },
      "ptr"_a);
  m.def(
      "memcpy_htod",
      [](uint64_t dst, nb::bytes data) {
        const DriverTable& d = MemoryTable("memcpy_htod");
        CUresult rc = d.cuMemcpyHtoD(static_cast<CUdeviceptr>(dst), data.c_str(), data.size());
        if (rc != CUDA_SUCCESS) throw std::runtime_error(CallError(d, "cuMemcpyHtoD", rc));
      },
      "dst"_a, "data"_a);

  m.def("set_recording", &SetCudaUsesRecording, "enabled"_a,
        "Route the CUDA handler and launch() through the recording table.");
  m.def("recording_enabled", &CudaUsesRecording);
  m.def("recorded_calls", [] {
    nb::list out;
    for (const Record& rec : RecordedCalls()) {
      nb::dict d;
      for (const auto& [k, v] : rec) d[k.c_str()] = ToPython(v);
      out.append(d);
    }
    return out;
  });
  m.def(
      "clear_recording",
      [](bool reset_device) {
        ClearRecordedCalls();
        if (reset_device) {
          ResetModuleCache(RecordingDriver(true));
          ResetModuleCache(RecordingDriver(false));
          ResetRecordingDevice();
          ClearRecordedCalls();  // drop the unload records too
        }
      },
      "reset_device"_a = true,
      "Forget recorded calls; with reset_device, also the recording table's modules "
      "(the next launch loads again) and pending injected errors.");
  m.def(
      "inject_driver_error",
      [](const std::string& fn, int code) { InjectDriverError(fn, code); }, "fn_name"_a, "code"_a,
      "The recording table's next call of fn_name returns code.");
  m.def(
      "reset_module_cache", [](bool recording) {
        if (recording) return ResetModuleCache(RecordingDriver(true)) + ResetModuleCache(RecordingDriver(false));
        const char* why = nullptr;
        const DriverTable* d = RealDriver(&why);
        return d ? ResetModuleCache(d) : 0;
      },
      "recording"_a = true);
  m.def("driver_status", [] {
    const char* why = nullptr;
    const DriverTable* d = RealDriver(&why);
    return nb::make_tuple(d != nullptr, d ? std::string("ok") : std::string(why ? why : "?"));
  }, "(available, message) for libcuda.so.1.");
  m.def("store_kernel_ptx", &StoreKernelPtx, "with_proxy_fence"_a = true,
        "The built-in tensor-map store kernel's PTX.");
}
