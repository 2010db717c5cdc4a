// ffi/interp/bits.h: an f32's bits and back, for the interpreter's native core (arith.cc,
// matrix.cc, mma.cc): memcpy, so that no type punning is undefined.
#pragma once

#include <cstdint>
#include <cstring>

inline float f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
