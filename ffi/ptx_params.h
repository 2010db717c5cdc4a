// Kernel parameter layouts read from PTX text, the way the driver derives
// them from a module: each .entry's parameters with their offsets (aligned to
// the declared .align or the element size) and sizes. Used by the recording
// driver table to answer cuFuncGetParamInfo and to serialize launch params.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace jax_pyptx {

struct PtxParam {
  size_t offset;
  size_t size;
};

struct PtxEntry {
  bool params_known = false;  // false: a parameter type this reader does not size
  std::vector<PtxParam> params;
};

// Every .entry in `text` (comments ignored) -> its parameters in order.
std::map<std::string, PtxEntry> ParsePtxEntries(const std::string& text);

}  // namespace jax_pyptx
