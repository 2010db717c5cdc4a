// ffi/interp/ex2.h: ex2.approx.f32 over a chunk of a native block, part of
// jax_pyptx.interpret.state._arith (arith.cc's `run` calls it).
#pragma once

#include <cstddef>
#include <cstdint>

// the most elements one call takes (arith.cc's chunk)
constexpr size_t EX2_MAX = 1024;

// d[i] = the f32 bits of 2^a[i] (f32 bits; `flush`: subnormal inputs and results to zero), as
// the NumPy handler gives them; false (the block declines) where an element lies so near an
// f32 rounding boundary that the handler's exp2 and ours could round apart. The three builds
// give the same bits: the portable loop, AVX2 with fma, AVX-512.
bool ex2_loop_portable(uint32_t* d, const uint32_t* a, size_t len, bool flush);
bool ex2_loop_hw(uint32_t* d, const uint32_t* a, size_t len, bool flush);
bool ex2_loop_512(uint32_t* d, const uint32_t* a, size_t len, bool flush);
