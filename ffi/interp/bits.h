// ffi/interp/bits.h: an f32's bits and back, for the interpreter's native core (arith.cc,
// ex2.cc, matrix.cc, mma.cc): memcpy, so that no type punning is undefined; the flush of a
// subnormal to zero and NaN's one pattern as the NumPy handlers give them.
#pragma once

#include <cstdint>
#include <cstring>

inline float f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline uint32_t ftz(uint32_t u) { return (u & 0x7F800000u) == 0 ? (u & 0x80000000u) : u; }
inline bool is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
inline uint32_t canon(uint32_t u) { return is_nan(u) ? 0x7FFFFFFFu : u; }

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif
