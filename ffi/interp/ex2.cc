// ffi/interp/ex2.cc: ex2.approx.f32 in native loops (ex2.h), part of
// jax_pyptx.interpret.state._arith.
#include "ex2.h"

#include "bits.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// ex2: the f32 of exp2 in f64 (NumPy's, in the handler). Ours (exp2_core) and NumPy's differ
// by a few ulps of f64; where the f64 value lies within EX2_MARGIN ulps of an f32 rounding
// boundary the two could round apart, and the block declines.
constexpr double EX2_MARGIN = 64;

bool near_boundary(double y, float r) {        // y >= 0 finite, r = its f32
  double margin = EX2_MARGIN * (std::nextafter(y, INFINITY) - y);
  double top = static_cast<double>(FLT_MAX) + 0x1p103;          // FLT_MAX | inf
  float lo = std::nextafterf(r, -INFINITY), hi = std::nextafterf(r, INFINITY);
  double blo = std::isinf(r) ? top : (static_cast<double>(r) + lo) * 0.5;
  double bhi = std::isinf(hi) ? top : (static_cast<double>(r) + hi) * 0.5;
  return std::fabs(y - blo) <= margin || std::fabs(y - bhi) <= margin;
}

// p * t + c: fused where the CPU has fma (the series' accuracy only, not its bits, matters)
template <bool FMA>
ALWAYS_INLINE double madd(double p, double t, double c) {
#if defined(__GNUC__) || defined(__clang__)
  if (FMA) return __builtin_fma(p, t, c);
#endif
  return p * t + c;
}

// 2^x in f64 for f32 x in [-1022, 1023], within a few ulps (the margin above covers them):
// x = k + f with |f| <= 1/2, 2^f by its Taylor series in f ln 2 to the 14th power (|f ln 2|
// <= 0.35: the first term left out is under 2^-57), times 2^k made from k's bits. No branch:
// the loop over a chunk vectorizes. For B elements at x into y (x and y may be the same), the
// series' steps taken for the whole block in turn, so that its B chains of dependent
// multiply-adds overlap (one element's chain alone waits on each step's latency); every element
// takes the same operations whatever B.
constexpr size_t EX2_BLOCK = 64;

template <bool FMA, size_t B>
ALWAYS_INLINE void exp2_block(const double* x, double* y) {
  constexpr double shifter = 0x1.8p52;
  constexpr double series[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
                                 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};     // 1/13! ... 1/1!, 1/0!
  double r[B], t[B], p[B];
  for (size_t e = 0; e < B; ++e) {
    r[e] = x[e] + shifter;                              // k in its low bits, rounded to nearest
    double k = r[e] - shifter;
    t[e] = (x[e] - k) * 0x1.62e42fefa39efp-1;           // f ln 2
    p[e] = 1.0 / 87178291200.0;                         // 1/14!
  }
  for (double c : series)
    for (size_t e = 0; e < B; ++e) p[e] = madd<FMA>(p[e], t[e], c);
  const uint64_t base = 0x4338000000000000ull;          // the bits of the shifter
  for (size_t e = 0; e < B; ++e) {
    uint64_t rb, sb;
    std::memcpy(&rb, &r[e], 8);
    sb = (rb - base + 1023) << 52;                      // 2^k (k in [-1022, 1023])
    double scale;
    std::memcpy(&scale, &sb, 8);
    y[e] = p[e] * scale;
  }
}

template <bool FMA>
ALWAYS_INLINE double exp2_core(double x) {
  double y;
  exp2_block<FMA, 1>(&x, &y);
  return y;
}

// the same for any f32 x (NaN, infinities, under- and overflow, subnormal results)
double exp2_any(float xf) {
  double x = xf;
  if (x != x) return x;
  if (x >= 1024.0) return static_cast<double>(INFINITY);
  if (x <= -1075.0) return 0.0;
  if (x >= -1022.0 && x <= 1023.0) return exp2_core<false>(x);
  return x > 0 ? exp2_core<false>(x - 1.0) * 2.0 : std::ldexp(exp2_core<false>(x + 1022.0), -1022);
}

// ex2 over len elements (len <= EX2_MAX): the f64 values, their f32 and the boundary test in
// passes that vectorize; values outside the f32 normal range are checked one by one after.
// False where it declines.
template <bool FMA>
ALWAYS_INLINE bool ex2_loop(uint32_t* d, const uint32_t* a, size_t len, bool flush) {
  double y[EX2_MAX + EX2_BLOCK];
  uint32_t odd = 0;
  for (size_t i = 0; i < len; ++i) {    // the inputs in range (the others: 0, redone below)
    float x = f32(flush ? ftz(a[i]) : a[i]);
    uint32_t in = x >= -1022.0f && x <= 1023.0f;
    odd |= in ^ 1u;
    y[i] = in ? x : 0.0f;
  }
  size_t whole = (len + EX2_BLOCK - 1) / EX2_BLOCK * EX2_BLOCK;
  for (size_t i = len; i < whole; ++i) y[i] = 0.0;
  for (size_t i = 0; i < whole; i += EX2_BLOCK) exp2_block<FMA, EX2_BLOCK>(y + i, y + i);
  if (odd) {
    for (size_t i = 0; i < len; ++i) {
      float x = f32(flush ? ftz(a[i]) : a[i]);
      if (!(x >= -1022.0f && x <= 1023.0f)) y[i] = exp2_any(x);
    }
  }
  uint32_t risky = 0, rare = 0;
  const int64_t margin = static_cast<int64_t>(EX2_MARGIN);
  for (size_t i = 0; i < len; ++i) {
    double v = y[i];
    uint64_t yb;
    std::memcpy(&yb, &v, 8);
    int64_t t = static_cast<int64_t>(yb & 0x1FFFFFFFull) - 0x10000000ll;
    uint32_t normal = v >= 0x1p-125 && v < 0x1p127;   // an f32 boundary ends in 1 << 28
    risky |= normal & static_cast<uint32_t>(t <= margin && t >= -margin);
    rare |= normal ^ 1u;
    uint32_t u = bits(static_cast<float>(v));
    d[i] = canon(flush ? ftz(u) : u);
  }
  if (rare) {
    for (size_t i = 0; i < len; ++i) {
      double v = y[i];
      if (v >= 0x1p-125 && v < 0x1p127) continue;
      if (v > 0 && std::isfinite(v) && !(flush && v < 0x1p-127) &&
          near_boundary(v, static_cast<float>(v)))
        risky = 1;
    }
  }
  return !risky;
}

}  // namespace

bool ex2_loop_portable(uint32_t* d, const uint32_t* a, size_t len, bool flush) {
  return ex2_loop<false>(d, a, len, flush);
}

// the same loop built for the CPU's vector units (the same bits: every element takes the same
// operations, only more of them at once)
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) bool ex2_loop_hw(uint32_t* d, const uint32_t* a, size_t len,
                                                    bool flush) {
  return ex2_loop<true>(d, a, len, flush);
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma"))) bool ex2_loop_512(uint32_t* d, const uint32_t* a,
                                                                             size_t len, bool flush) {
  return ex2_loop<true>(d, a, len, flush);
}
#else
bool ex2_loop_hw(uint32_t* d, const uint32_t* a, size_t len, bool flush) {
  return ex2_loop<false>(d, a, len, flush);
}
bool ex2_loop_512(uint32_t* d, const uint32_t* a, size_t len, bool flush) {
  return ex2_loop<false>(d, a, len, flush);
}
#endif
