// ffi/interp/mma.cc: a run of wgmma k-steps on one f32 accumulator in one pass, part of
// jax_pyptx.interpret.state._arith (registered by arith.cc's module).
//
//   mma_chain_f32(a, b, scale_d, negate, acc, b_rows=None)
//     a        n float64 arrays (W, M, K): each step's A of each warpgroup (a row's K elements
//              contiguous, rows and warpgroups at any stride)
//     b        n float64 arrays (W, K, N): each step's B, transposed as the product reads it
//              (likewise); with b_rows (int64 (W)), (U, K, N): warpgroup w's B is row b_rows[w]
//              (warpgroups of one CTA reading the same B)
//     scale_d  uint8 (n, W): whether step i adds warpgroup w's accumulator
//     negate   uint8 (n): whether step i's product is negated (scale-a * scale-b < 0)
//     acc      uint32 (W, M, N), C order: the accumulator's f32 bits, read where a step's
//              scale_d is set and written by every step
//
// Step i, in order, gives each warpgroup w: P = A_i[w] x B_i[w] in float64, P negated where
// negate[i], then acc[w] = the f32 of P + acc[w] where scale_d[i, w], else of P, rounded once
// (matrix.cc's round_f32). An element of P is the float64 sum of its K products taken in
// order k = 0, 1, ... from 0.0, as a matrix product's kernel takes it; the operands are
// bf16, f16, tf32 or fp8 values (ops.wgmma_chain), whose products float64 holds exactly, so
// a fused multiply-add and a product then a sum give the same bits. The CPU's AVX-512 loop
// and the portable one (use_cpu_features(False)) give the same bits.
#include "bits.h"
#include "mma.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MMA_X86 1
#endif

namespace nb = nanobind;

namespace {


// one step of one warpgroup's operands: A rows at a (row stride lda), B rows at b (ldb)
struct Step {
  const double* a;
  int64_t lda;
  const double* b;
  int64_t ldb;
};

// acc (M x N) = round(+-(A x B) [+ acc]), portable: a row's products for 16 columns at a time
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void step_portable(const Step& s, int64_t M, int64_t N, int64_t K, bool add, bool neg, uint32_t* acc) {
  double p[16];
  for (int64_t m = 0; m < M; ++m) {
    const double* ar = s.a + m * s.lda;
    uint32_t* o = acc + m * N;
    for (int64_t n0 = 0; n0 < N; n0 += 16) {
      int64_t w = N - n0 < 16 ? N - n0 : 16;
      for (int64_t j = 0; j < w; ++j) p[j] = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        double a = ar[k];
        const double* br = s.b + k * s.ldb + n0;
        for (int64_t j = 0; j < w; ++j) p[j] += a * br[j];
      }
      for (int64_t j = 0; j < w; ++j) {
        double v = neg ? -p[j] : p[j];
        if (add) v += static_cast<double>(f32(o[n0 + j]));
        o[n0 + j] = bits(static_cast<float>(v));
      }
    }
  }
}

#ifdef MMA_X86
bool cpu_has_avx512() {           // (and the AVX2 and fma the AVX-512 loops are built with)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
const bool CPU_AVX512 = cpu_has_avx512();

// the rounding of 8 sums at o (f32 bits): +-p [+ o]
__attribute__((target("avx512f"))) inline void round8(__m512d p, bool add, bool neg, uint32_t* o) {
  if (neg) p = _mm512_sub_pd(_mm512_setzero_pd(), p);
  if (add) p = _mm512_add_pd(p, _mm512_cvtps_pd(_mm256_loadu_ps(reinterpret_cast<const float*>(o))));
  _mm256_storeu_ps(reinterpret_cast<float*>(o), _mm512_cvtpd_ps(p));
}

// rows m0..m0+R-1, columns n0..n0+8*C-1: R x C vectors of sums held in registers over k
template <int R, int C>
__attribute__((target("avx512f"))) inline void block512(const Step& s, int64_t m0, int64_t n0, int64_t N,
                                                       int64_t K, bool add, bool neg, uint32_t* acc) {
  __m512d p[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) p[r][c] = _mm512_setzero_pd();
  for (int64_t k = 0; k < K; ++k) {
    const double* br = s.b + k * s.ldb + n0;
    __m512d b[C];
    for (int c = 0; c < C; ++c) b[c] = _mm512_loadu_pd(br + 8 * c);
    for (int r = 0; r < R; ++r) {
      __m512d a = _mm512_set1_pd(s.a[(m0 + r) * s.lda + k]);
      for (int c = 0; c < C; ++c) p[r][c] = _mm512_fmadd_pd(a, b[c], p[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) round8(p[r][c], add, neg, acc + (m0 + r) * N + n0 + 8 * c);
}

// N a multiple of 8 and M of 8 (wgmma's shapes); else the portable loop
__attribute__((target("avx512f"))) void step512(const Step& s, int64_t M, int64_t N, int64_t K, bool add,
                                                bool neg, uint32_t* acc) {
  for (int64_t m0 = 0; m0 < M; m0 += 8) {
    int64_t n0 = 0;
    for (; n0 + 16 <= N; n0 += 16) block512<8, 2>(s, m0, n0, N, K, add, neg, acc);
    if (n0 < N) block512<8, 1>(s, m0, n0, N, K, add, neg, acc);
  }
}
#else
const bool CPU_AVX512 = false;
#endif

bool HW_AVX512 = CPU_AVX512;

void chain(const std::vector<Step>& steps, const uint8_t* sd, const uint8_t* neg, int64_t W, int64_t M,
           int64_t N, int64_t K, const int64_t* wa, const int64_t* wb, const int64_t* brow, uint32_t* acc) {
  size_t n = steps.size();
  bool wide = HW_AVX512 && M % 8 == 0 && N % 8 == 0;
  for (int64_t w = 0; w < W; ++w) {            // a warpgroup at a time: its tile stays in cache
    uint32_t* t = acc + w * M * N;
    for (size_t i = 0; i < n; ++i) {
      Step s = steps[i];
      s.a += w * wa[i];
      s.b += (brow ? brow[w] : w) * wb[i];
      bool add = sd[i * W + w] != 0;
#ifdef MMA_X86
      if (wide) {
        step512(s, M, N, K, add, neg[i] != 0, t);
        continue;
      }
#endif
      step_portable(s, M, N, K, add, neg[i] != 0, t);
    }
  }
}

using F64_3 = nb::ndarray<const double, nb::ndim<3>, nb::device::cpu>;

}  // namespace

bool avx512_in_use() { return HW_AVX512; }

bool use_avx512(bool on) {
  bool was = HW_AVX512;
  HW_AVX512 = on && CPU_AVX512;
  return was;
}

void register_mma(nb::module_& m) {
  m.def("mma_chain_f32",
        [](std::vector<F64_3> a, std::vector<F64_3> b,
           nb::ndarray<const uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> scale_d,
           nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> negate,
           nb::ndarray<uint32_t, nb::ndim<3>, nb::c_contig, nb::device::cpu> acc,
           std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>> b_rows) {
          size_t n = a.size();
          int64_t W = acc.shape(0), M = acc.shape(1), N = acc.shape(2);
          if (n == 0 || b.size() != n || scale_d.shape(0) != n || static_cast<int64_t>(scale_d.shape(1)) != W
              || negate.shape(0) != n)
            throw std::invalid_argument("mma_chain_f32: a, b, scale_d and negate must have one entry per step");
          int64_t K = a[0].shape(2);
          int64_t U = b_rows ? static_cast<int64_t>(b[0].shape(0)) : W;     // B's rows
          const int64_t* brow = nullptr;
          if (b_rows) {
            if (static_cast<int64_t>(b_rows->shape(0)) != W)
              throw std::invalid_argument("mma_chain_f32: b_rows must have one entry per warpgroup");
            brow = b_rows->data();
            for (int64_t w = 0; w < W; ++w)
              if (brow[w] < 0 || brow[w] >= U)
                throw std::invalid_argument("mma_chain_f32: a row of b_rows lies outside b");
          }
          std::vector<Step> steps(n);
          std::vector<int64_t> wa(n), wb(n);
          for (size_t i = 0; i < n; ++i) {
            const F64_3& x = a[i];
            const F64_3& y = b[i];
            if (static_cast<int64_t>(x.shape(0)) != W || static_cast<int64_t>(x.shape(1)) != M
                || static_cast<int64_t>(x.shape(2)) != K || static_cast<int64_t>(y.shape(0)) != U
                || static_cast<int64_t>(y.shape(1)) != K || static_cast<int64_t>(y.shape(2)) != N)
              throw std::invalid_argument("mma_chain_f32: step " + std::to_string(i) +
                                          ": a must be (W, M, K) and b (W, K, N) (rows of b_rows), acc (W, M, N)");
            if ((K > 1 && x.stride(2) != 1) || (N > 1 && y.stride(2) != 1))
              throw std::invalid_argument("mma_chain_f32: step " + std::to_string(i) +
                                          ": a row's elements must be contiguous");
            steps[i] = Step{x.data(), x.stride(1), y.data(), y.stride(1)};   // (warpgroup 0's)
            wa[i] = x.stride(0);
            wb[i] = y.stride(0);
          }
          const uint8_t* sd = scale_d.data();
          const uint8_t* ng = negate.data();
          uint32_t* o = acc.data();
          nb::gil_scoped_release unlocked;
          chain(steps, sd, ng, W, M, N, K, wa.data(), wb.data(), brow, o);
        },
        nb::arg("a"), nb::arg("b"), nb::arg("scale_d"), nb::arg("negate"), nb::arg("acc"),
        nb::arg("b_rows").none() = nb::none(),
        "acc = each step's A x B (float64, k in order) added to acc where scale_d, rounded to "
        "f32 once, step after step: a run of wgmma.mma_async on one f32 accumulator "
        "(ops.wgmma_chain)");
}
