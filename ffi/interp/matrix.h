// ffi/interp/matrix.cc: the interpreter's native moves of matrices and register blocks, part
// of jax_pyptx.interpret.state._arith (registered by arith.cc's module).
#pragma once

#include <nanobind/nanobind.h>

void register_matrix(nanobind::module_& m);

#include <cstdint>

// row[l] = t[ln[l]] for a whole warp's 32 lanes (a register's values out of its warp's tile):
// four AVX-512 gathers of eight where `wide` (avx512_in_use()), else the portable loop
void warp_from_tile(const uint32_t* t, const int64_t* ln, uint32_t* row, bool wide);
