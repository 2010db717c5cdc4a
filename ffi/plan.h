// The launch plan on the C++ side: decoded once (XLA instantiate stage, or
// once per plan object for the PyTorch path) from the attributes written by
// jax_pyptx/runtime/ffi_plan.py:plan_to_attrs. The attribute schema is
// documented there; this file and that one change together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_driver.h"

namespace jax_pyptx {

enum class ParamKind : int { kBuffer = 0, kScalar = 1, kTma = 2 };
enum class TmaMode : int { kGlobal = 0, kByValue = 1 };

struct ParamSlot {
  ParamKind kind = ParamKind::kBuffer;
  int64_t index = 0;  // buffer: operand; scalar: byte offset in param_data; tma: tma index
  int64_t size = 0;   // bytes this slot occupies in the kernel's parameter list
};

struct TmaDesc {
  int64_t operand = 0;
  int data_type = 0;  // CUtensorMapDataType
  int rank = 0;
  int interleave = 0, swizzle = 0, l2_promotion = 0, oob_fill = 0;
  TmaMode mode = TmaMode::kGlobal;
  int64_t batch = 1;
  int64_t batch_stride = 0;
  cuuint64_t dims[kMaxTensorRank] = {};
  cuuint64_t strides[kMaxTensorRank - 1] = {};
  cuuint32_t box[kMaxTensorRank] = {};
  cuuint32_t element_strides[kMaxTensorRank] = {};
  int64_t workspace_offset = -1;  // global mode: byte offset of descriptor 0 in the workspace
};

struct Plan {
  std::string kernel_name;
  std::string ptx;  // NUL-terminated by std::string: passed as-is to the JIT
  std::string ptx_sha256;
  std::string arch;
  std::string cubin_path;  // optional prebuilt cubin, tried before the cache and the JIT
  unsigned int grid[3] = {1, 1, 1};
  unsigned int block[3] = {1, 1, 1};
  unsigned int cluster[3] = {1, 1, 1};
  int64_t smem_bytes = 0;
  std::vector<ParamSlot> params;
  std::vector<uint8_t> param_data;
  std::vector<TmaDesc> tma;
  int64_t workspace_bytes = 0;  // 128 * descriptors in global mode
  int64_t num_global_descriptors = 0;
  int64_t min_operands = 0;  // 1 + the largest operand index the plan uses

  bool has_cluster() const { return cluster[0] * cluster[1] * cluster[2] != 1; }
};

// Where DecodePlan reads attributes from: an XLA FFI dictionary or a Python
// dict. Each getter returns false and sets *err when the attribute is missing
// or has the wrong type.
class AttrSource {
 public:
  virtual ~AttrSource() = default;
  virtual bool Has(const char* name) const = 0;
  virtual bool GetString(const char* name, std::string* out, std::string* err) const = 0;
  virtual bool GetInt(const char* name, int64_t* out, std::string* err) const = 0;
  virtual bool GetInts(const char* name, std::vector<int64_t>* out, std::string* err) const = 0;
  virtual bool GetBytes(const char* name, std::vector<uint8_t>* out, std::string* err) const = 0;
};

// Decodes and validates a plan. Returns "" on success, else a message that
// names the kernel (when its name could be read) and the offending field.
std::string DecodePlan(const AttrSource& src, Plan* plan);

// One buffer as the launcher sees it: a device address and its size in bytes
// (kUnknownSize when the caller does not know, e.g. raw PyTorch pointers).
constexpr uint64_t kUnknownSize = ~uint64_t{0};
struct BufferRef {
  uint64_t ptr = 0;
  uint64_t size = kUnknownSize;
};

// Checks buffers against the plan: enough operands, the workspace (the last
// buffer when workspace_bytes > 0) big enough and 64-byte aligned-sized, and
// every tensor map's extent inside its buffer where sizes are known.
std::string ValidateBuffers(const Plan& plan, const BufferRef* buffers, size_t count);

// "jax_pyptx: kernel 'NAME': " -- the prefix of every error message.
std::string ErrorPrefix(const Plan& plan);

}  // namespace jax_pyptx
