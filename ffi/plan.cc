// Plan decoding and buffer validation (no driver calls).
#include "plan.h"

#include <algorithm>
#include <sstream>

namespace jax_pyptx {

namespace {

constexpr int64_t kPlanAbiVersion = 1;
constexpr int64_t kMaxU32 = 0xffffffffLL;

std::string Prefixed(const std::string& kernel, const std::string& msg) {
  return "jax_pyptx: kernel '" + (kernel.empty() ? std::string("?") : kernel) + "': " + msg;
}

struct Reader {
  const AttrSource& src;
  const std::string& kernel;
  std::string err;

  bool Fail(const std::string& msg) {
    if (err.empty()) err = Prefixed(kernel, msg);
    return false;
  }
  bool Str(const char* name, std::string* out) {
    std::string e;
    return src.GetString(name, out, &e) || Fail(e);
  }
  bool Int(const char* name, int64_t* out) {
    std::string e;
    return src.GetInt(name, out, &e) || Fail(e);
  }
  bool Ints(const char* name, std::vector<int64_t>* out, int64_t expect = -1) {
    std::string e;
    if (!src.GetInts(name, out, &e)) return Fail(e);
    if (expect >= 0 && static_cast<int64_t>(out->size()) != expect) {
      std::ostringstream os;
      os << "attribute '" << name << "' has " << out->size() << " entries, expected " << expect;
      return Fail(os.str());
    }
    return true;
  }
  bool Dim3(const char* name, unsigned int out[3]) {
    std::vector<int64_t> v;
    if (!Ints(name, &v, 3)) return false;
    for (int i = 0; i < 3; ++i) {
      if (v[i] < 1 || v[i] > kMaxU32) {
        return Fail(std::string(name) + " entries must be in [1, 2^32): got " + std::to_string(v[i]));
      }
      out[i] = static_cast<unsigned int>(v[i]);
    }
    return true;
  }
};

bool InRange(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

}  // namespace

std::string ErrorPrefix(const Plan& plan) { return Prefixed(plan.kernel_name, ""); }

std::string DecodePlan(const AttrSource& src, Plan* plan) {
  std::string name_err;
  if (!src.GetString("kernel_name", &plan->kernel_name, &name_err)) {
    return Prefixed("", name_err);
  }
  Reader r{src, plan->kernel_name, {}};
  int64_t abi = kPlanAbiVersion;
  if (src.Has("abi_version") && r.Int("abi_version", &abi) && abi != kPlanAbiVersion) {
    r.Fail("plan attribute schema version " + std::to_string(abi) +
           " does not match the extension's version " + std::to_string(kPlanAbiVersion) +
           " (rebuild the extension: pip install -e .)");
  }
  if (!r.err.empty()) return r.err;
  r.Str("ptx", &plan->ptx) && r.Str("ptx_sha256", &plan->ptx_sha256) && r.Str("arch", &plan->arch) &&
      r.Dim3("grid", plan->grid) && r.Dim3("block", plan->block) &&
      r.Dim3("cluster", plan->cluster) && r.Int("smem_bytes", &plan->smem_bytes);
  if (r.err.empty() && src.Has("cubin_path")) r.Str("cubin_path", &plan->cubin_path);
  if (!r.err.empty()) return r.err;
  if (plan->ptx.empty()) return Prefixed(plan->kernel_name, "empty PTX text");
  if (!InRange(plan->smem_bytes, 0, kMaxU32)) {
    return Prefixed(plan->kernel_name, "smem_bytes out of range: " + std::to_string(plan->smem_bytes));
  }
  for (int i = 0; i < 3; ++i) {
    if (plan->grid[i] % plan->cluster[i] != 0) {
      return Prefixed(plan->kernel_name, "grid dimension " + std::to_string(i) + " (" +
                                             std::to_string(plan->grid[i]) +
                                             ") is not a multiple of the cluster dimension (" +
                                             std::to_string(plan->cluster[i]) + ")");
    }
  }

  // ---- tensor maps
  std::vector<int64_t> operand, dtype, rank, interleave, swizzle, l2, oob, mode, batch, bstride;
  if (!r.Ints("tma_operand", &operand)) return r.err;
  const int64_t t = static_cast<int64_t>(operand.size());
  r.Ints("tma_dtype", &dtype, t) && r.Ints("tma_rank", &rank, t) &&
      r.Ints("tma_interleave", &interleave, t) && r.Ints("tma_swizzle", &swizzle, t) &&
      r.Ints("tma_l2_promotion", &l2, t) && r.Ints("tma_oob_fill", &oob, t) &&
      r.Ints("tma_mode", &mode, t) && r.Ints("tma_batch", &batch, t) &&
      r.Ints("tma_batch_stride", &bstride, t);
  if (!r.err.empty()) return r.err;
  int64_t sum_rank = 0;
  for (int64_t i = 0; i < t; ++i) {
    if (!InRange(rank[i], 1, kMaxTensorRank)) {
      return Prefixed(plan->kernel_name, "tma[" + std::to_string(i) + "]: rank must be 1..5, got " +
                                             std::to_string(rank[i]));
    }
    sum_rank += rank[i];
  }
  std::vector<int64_t> dims, strides, box, estrides;
  r.Ints("tma_global_dims", &dims, sum_rank) &&
      r.Ints("tma_global_strides", &strides, sum_rank - t) && r.Ints("tma_box", &box, sum_rank) &&
      r.Ints("tma_element_strides", &estrides, sum_rank);
  if (!r.err.empty()) return r.err;
  plan->tma.assign(t, TmaDesc{});
  int64_t at = 0, at_stride = 0, ws = 0;
  for (int64_t i = 0; i < t; ++i) {
    TmaDesc& d = plan->tma[i];
    const std::string where = "tma[" + std::to_string(i) + "]: ";
    auto bad = [&](const std::string& what) { return Prefixed(plan->kernel_name, where + what); };
    d.operand = operand[i];
    d.rank = static_cast<int>(rank[i]);
    if (operand[i] < 0) return bad("negative operand index");
    if (TensorMapElementBytes(static_cast<int>(dtype[i])) == 0) {
      return bad("unknown CUtensorMapDataType " + std::to_string(dtype[i]));
    }
    d.data_type = static_cast<int>(dtype[i]);
    if (!InRange(interleave[i], 0, 2)) return bad("interleave must be 0..2");
    if (!InRange(swizzle[i], 0, 6)) return bad("swizzle must be 0..6");
    if (!InRange(l2[i], 0, 3)) return bad("l2_promotion must be 0..3");
    if (!InRange(oob[i], 0, 1)) return bad("oob_fill must be 0..1");
    if (!InRange(mode[i], 0, 1)) return bad("mode must be 0 (global) or 1 (by_value)");
    if (batch[i] < 1) return bad("batch must be >= 1");
    if (mode[i] == 1 && batch[i] != 1) return bad("a by_value tensor map cannot be batched");
    if (bstride[i] < 0) return bad("negative batch_stride");
    d.interleave = static_cast<int>(interleave[i]);
    d.swizzle = static_cast<int>(swizzle[i]);
    d.l2_promotion = static_cast<int>(l2[i]);
    d.oob_fill = static_cast<int>(oob[i]);
    d.mode = static_cast<TmaMode>(mode[i]);
    d.batch = batch[i];
    d.batch_stride = bstride[i];
    for (int k = 0; k < d.rank; ++k, ++at) {
      if (dims[at] < 1) return bad("global dims must be >= 1");
      if (!InRange(box[at], 1, kMaxU32) || !InRange(estrides[at], 1, kMaxU32)) {
        return bad("box and element strides must be >= 1");
      }
      d.dims[k] = static_cast<cuuint64_t>(dims[at]);
      d.box[k] = static_cast<cuuint32_t>(box[at]);
      d.element_strides[k] = static_cast<cuuint32_t>(estrides[at]);
    }
    for (int k = 0; k + 1 < d.rank; ++k, ++at_stride) {
      if (strides[at_stride] < 1) return bad("global strides must be >= 1 byte");
      d.strides[k] = static_cast<cuuint64_t>(strides[at_stride]);
    }
    if (d.mode == TmaMode::kGlobal) {
      d.workspace_offset = ws;
      ws += kTensorMapBytes * d.batch;
      plan->num_global_descriptors += d.batch;
    }
    plan->min_operands = std::max(plan->min_operands, d.operand + 1);
  }
  plan->workspace_bytes = ws;
  int64_t declared_ws = 0;
  if (!r.Int("workspace_bytes", &declared_ws)) return r.err;
  if (declared_ws != ws) {
    return Prefixed(plan->kernel_name, "workspace_bytes is " + std::to_string(declared_ws) +
                                           " but the global-mode tensor maps need " +
                                           std::to_string(ws));
  }

  // ---- kernel parameters
  std::vector<int64_t> kind, index, size;
  if (!r.Ints("param_kind", &kind)) return r.err;
  const int64_t n = static_cast<int64_t>(kind.size());
  r.Ints("param_index", &index, n) && r.Ints("param_size", &size, n);
  if (!r.err.empty()) return r.err;
  std::string e;
  if (!src.GetBytes("param_data", &plan->param_data, &e)) return Prefixed(plan->kernel_name, e);
  plan->params.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    ParamSlot& p = plan->params[i];
    const std::string where = "param[" + std::to_string(i) + "]: ";
    auto bad = [&](const std::string& what) { return Prefixed(plan->kernel_name, where + what); };
    p.index = index[i];
    p.size = size[i];
    switch (kind[i]) {
      case 0:
        p.kind = ParamKind::kBuffer;
        if (p.index < 0) return bad("negative operand index");
        if (p.size != 8) return bad("a buffer parameter is 8 bytes");
        plan->min_operands = std::max(plan->min_operands, p.index + 1);
        break;
      case 1:
        p.kind = ParamKind::kScalar;
        if (p.size != 1 && p.size != 2 && p.size != 4 && p.size != 8) {
          return bad("scalar size must be 1, 2, 4 or 8 bytes, got " + std::to_string(p.size));
        }
        if (p.index < 0 || p.index + p.size > static_cast<int64_t>(plan->param_data.size())) {
          return bad("scalar bytes lie outside param_data");
        }
        break;
      case 2: {
        p.kind = ParamKind::kTma;
        if (p.index < 0 || p.index >= t) return bad("tensor map index out of range");
        const int64_t want = plan->tma[p.index].mode == TmaMode::kByValue ? kTensorMapBytes : 8;
        if (p.size != want) {
          return bad("tensor map parameter must be " + std::to_string(want) + " bytes");
        }
        break;
      }
      default:
        return bad("unknown parameter kind " + std::to_string(kind[i]));
    }
  }
  return "";
}

std::string ValidateBuffers(const Plan& plan, const BufferRef* buffers, size_t count) {
  const int64_t need = plan.min_operands + (plan.workspace_bytes > 0 ? 1 : 0);
  if (static_cast<int64_t>(count) < need) {
    return ErrorPrefix(plan) + "the plan needs " + std::to_string(need) + " buffers" +
           (plan.workspace_bytes > 0 ? " (the last one the descriptor workspace)" : "") +
           " but the call has " + std::to_string(count);
  }
  if (plan.workspace_bytes > 0) {
    const BufferRef& w = buffers[count - 1];
    if (w.size != kUnknownSize && w.size < static_cast<uint64_t>(plan.workspace_bytes)) {
      return ErrorPrefix(plan) + "the workspace buffer has " + std::to_string(w.size) +
             " bytes, the tensor maps need " + std::to_string(plan.workspace_bytes);
    }
  }
  for (size_t i = 0; i < plan.tma.size(); ++i) {
    const TmaDesc& d = plan.tma[i];
    const BufferRef& b = buffers[d.operand];
    if (b.size == kUnknownSize || d.data_type >= CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B) continue;
    // Last byte touched: elem*dims[0] + sum_k (dims[k]-1)*stride[k-1], per batch entry.
    unsigned __int128 extent = static_cast<unsigned __int128>(d.dims[0]) *
                               TensorMapElementBytes(d.data_type);
    for (int k = 1; k < d.rank; ++k) {
      extent += static_cast<unsigned __int128>(d.dims[k] - 1) * d.strides[k - 1];
    }
    extent += static_cast<unsigned __int128>(d.batch - 1) * static_cast<uint64_t>(d.batch_stride);
    if (extent > b.size) {
      return ErrorPrefix(plan) + "tma[" + std::to_string(i) + "] spans " +
             std::to_string(static_cast<uint64_t>(extent)) + " bytes but operand " +
             std::to_string(d.operand) + " has only " + std::to_string(b.size);
    }
  }
  return "";
}

}  // namespace jax_pyptx
