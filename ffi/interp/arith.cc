// jax_pyptx.interpret.state._arith: the interpreter's native arithmetic.
//
//   run(code, imms, arrays, widths, n, index, gathered, scratch, blocks, tiles) -> True, or
//       False where it declines (below)
//   ops    the operation names, in the order of their codes (1, 2, ...); bfly32 (a warp
//          shuffle) needs n a multiple of 32, its warps whole
//   round_f32, bf16_to_f64, take_bf16, regs_to_tile, tile_to_regs: matrices and register
//                                  blocks moved in one pass (ffi/interp/matrix.cc)
//   mma_chain_f32                  a run of wgmma k-steps on one f32 accumulator (ffi/interp/mma.cc)
//   (ex2's loops are ffi/interp/ex2.cc's)
//   use_cpu_features(on)           the fma / AVX2 / AVX-512 loops, or the portable ones (tests)
//
// Runs a block of pure PTX register arithmetic (jax_pyptx/interpret/scheduler/native.py
// compiles it from a segment's batches) for n threads in native loops, instead of one NumPy
// call per batch. Every operation gives the bits the interpreter's NumPy handler gives
// (tests/test_interp_native.py runs each against it on special values).
//
//   code    int32 (m, 6): op, flags, d, a, b, c. An operand >= 0 is a slot of `arrays`;
//           -1 - k is immediate k of `imms`; -32768 is unused.
//   imms    uint64: the immediates' bit patterns (their low bytes are used).
//   arrays  the slots: 1-D arrays of n elements (any stride), the block's inputs, then its
//           outputs (contiguous and writable, written before they are read). The first
//           `gathered` are read at `index` (int64, n elements): element i is array[index[i]]
//           (a group's threads read from the batch's registers). `blocks` (optional): 2-D
//           C-contiguous writable arrays (k, n) whose rows are the next slots, block after block
//           (the kept outputs of one element size in one array: one buffer, not one a row).
//           Slots past the arrays and blocks (the block's temporaries) are carved from
//           `scratch` (uint8), n elements each, in order, each at an 8-byte boundary.
//   widths  uint8, one per slot: its element size in bytes (checked against the arrays).
//   tiles   (optional) (tile, lanes, slots): inputs `slots` (int64 (k,), 4-byte elements) are
//           read from one register block's tile (machine/asyncregs.py's TileLayout) instead of
//           their arrays: tile uint32 (n / 32, per_warp), C order, lanes int64 (k, 32), C order,
//           element i of slot slots[j] being tile[i / 32, lanes[j, i % 32]] (thread i is lane
//           i % 32 of the tile's warp i / 32). Their entries of `arrays` are not read (any
//           object) and never gathered at `index`.
//
// It declines (the caller runs the block through NumPy) where an ex2 lies so near an f32
// rounding boundary that NumPy's exp2 and the C library's could round apart.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>

#include "bits.h"
#include "ex2.h"
#include "matrix.h"
#include "mma.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

enum Op : int32_t {
  F_ADD = 1, F_SUB, F_MUL, F_FMA, F_MAX, F_MIN, F_NEG, F_ABS, F_EX2, CVT_BF16X2, CVT_F16X2,
  MOV8, MOV32, MOV64, AND8, OR8, XOR8,
  ADD32, SUB32, MUL32, SHL32, SHRU32, SHRS32, AND32, OR32, XOR32,
  ADD64, SUB64, MUL64, SHL64, SHRU64, SHRS64, AND64, OR64, XOR64,
  ZEXT32_64, SEXT32_64, TRUNC64_32,
  SETP32, SETP64, SELP32, SELP64,
  BFLY32, F_RCP,
  OP_END
};

// flags
constexpr int32_t FTZ = 1;
// setp: flags >> 1 is the comparison; bit 4 set: signed
enum Cmp : int32_t { EQ = 0, NE, LT, LE, GT, GE };
constexpr int32_t SIGNED = 16;

constexpr int32_t UNUSED = -32768;
constexpr size_t CHUNK = 1024;
static_assert(CHUNK % 32 == 0, "a chunk holds whole warps (bfly32)");
static_assert(CHUNK <= EX2_MAX, "ex2's loop takes a chunk at once");

// max / min of two f32 bit patterns, NaN-ignoring, -0 below +0 (the handler's rule), as
// selects the compiler can vectorize: equal values have equal bits unless they are zeros of
// two signs, where a & b (max) or a | b (min) is the zero the rule picks
template <bool MIN>
inline uint32_t fmax_bits(uint32_t a, uint32_t b) {
  bool an = is_nan(a), bn = is_nan(b);
  float x = f32(a), y = f32(b);
  uint32_t r = (MIN ? x < y : x > y) ? a : b;
  r = x == y ? (MIN ? (a | b) : (a & b)) : r;
  r = an ? b : r;
  r = bn ? a : r;
  return (an && bn) ? 0x7FFFFFFFu : r;
}

// f32 -> f16 bits, rounded once to nearest even (subnormals, infinity), NaN as 0x7FFF
inline uint32_t f16_rn(uint32_t u) {
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FFFu;
  if (a >= 0x477FF000u) return sign | 0x7C00u;          // 65520 and up round to infinity
  if (a >= 0x38800000u)                                 // 2^-14 and up: a normal half
    return sign | ((a + 0x0FFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13);
  if (a <= 0x33000000u) return sign;                    // 2^-25 and below: zero (2^-25: a tie)
  uint32_t shift = 126u - (a >> 23);                    // a subnormal half: units of 2^-24
  uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
  return sign | q;
}

inline uint32_t bf16_rn(uint32_t u) {
  return u + (0x7FFFu + ((u >> 16) & 1u));
}


template <class T>
inline bool compare(T x, T y, int32_t cmp) {
  switch (cmp) {
    case EQ: return x == y;
    case NE: return x != y;
    case LT: return x < y;
    case LE: return x <= y;
    case GT: return x > y;
    default: return x >= y;
  }
}

int width_of(int32_t op, int pos) {   // pos 0: d, 1..3: a, b, c
  switch (op) {
    case MOV8: case AND8: case OR8: case XOR8: return 1;
    case MOV64: case ADD64: case SUB64: case MUL64: case AND64: case OR64: case XOR64:
      return 8;
    case SHL64: case SHRU64: case SHRS64: return pos == 2 ? 4 : 8;
    case ZEXT32_64: case SEXT32_64: return pos == 0 ? 8 : 4;
    case TRUNC64_32: return pos == 0 ? 4 : 8;
    case SETP32: return pos == 0 ? 1 : 4;
    case SETP64: return pos == 0 ? 1 : 8;
    case SELP32: return pos == 3 ? 1 : 4;
    case SELP64: return pos == 3 ? 1 : 8;
    default: return 4;
  }
}

int arity(int32_t op) {
  switch (op) {
    case F_NEG: case F_ABS: case F_EX2: case F_RCP: case MOV8: case MOV32: case MOV64:
    case ZEXT32_64: case SEXT32_64: case TRUNC64_32:
      return 1;
    case F_FMA: case SELP32: case SELP64: return 3;
    default: return 2;
  }
}

// bytes left uninitialized (every one is written before it is read): a vector<char> would
// zero them first, a memset per buffer per call
class Bytes {
 public:
  void resize(size_t n) { p_.reset(new char[n]); }
  char* data() const { return p_.get(); }

 private:
  std::unique_ptr<char[]> p_;
};

struct Slot {
  char* base = nullptr;
  int64_t stride = 1;       // in elements
  int width = 0;
  const int64_t* index = nullptr;   // a gathered input: element i is base[index[i] * stride]
  const uint32_t* tile = nullptr;   // an input read from a tile: element i is
  const int64_t* lanes = nullptr;   //   tile[(i / 32) * per_warp + lanes[i % 32]]
  int64_t per_warp = 0;
  Bytes chunk;                      // a gathered input's elements of the current chunk
};

// One operand's elements [lo, lo + len) as a contiguous pointer: the array itself, a
// gathered copy of a strided one, or a constant buffer (an immediate, a stride-0 array)
// a block's constants: count copies of each value (its low w bytes) once, shared by every
// operand that names it
class Constants {
 public:
  explicit Constants(size_t count) : count_(count) {}

  const char* of(const void* value, int w) {
    uint64_t v = 0;
    std::memcpy(&v, value, static_cast<size_t>(w));
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i].first == v && keys_[i].second == w) return bufs_[i].data();
    keys_.emplace_back(v, w);
    bufs_.emplace_back();
    bufs_.back().resize(count_ * static_cast<size_t>(w));
    char* p = bufs_.back().data();
    switch (w) {
      case 1: std::memset(p, static_cast<int>(v & 0xFF), count_); break;
      case 4: copies<uint32_t>(p, static_cast<uint32_t>(v)); break;
      default: copies<uint64_t>(p, v); break;
    }
    return p;
  }

 private:
  template <class T>
  void copies(char* p, T v) {
    T* q = reinterpret_cast<T*>(p);
    for (size_t i = 0; i < count_; ++i) q[i] = v;
  }

  size_t count_;
  std::vector<std::pair<uint64_t, int>> keys_;
  std::vector<Bytes> bufs_;
};

struct Source {
  const char* direct = nullptr;   // contiguous array base (offset by lo at use)
  const Slot* strided = nullptr;
  Bytes buf;
  const char* constant = nullptr; // a constant's copies (Constants)

  const Slot* chunked = nullptr;  // a gathered input: its chunk buffer, filled per chunk

  const char* at(size_t lo, size_t len, int w) {
    if (direct) return direct + lo * w;
    if (constant) return constant;
    if (chunked) return chunked->chunk.data();
    for (size_t i = 0; i < len; ++i)
      std::memcpy(buf.data() + i * w,
                  strided->base + static_cast<int64_t>(lo + i) * strided->stride * w, w);
    return buf.data();
  }
};

template <class T>
inline const T* P(const char* p) { return reinterpret_cast<const T*>(p); }

// ---------------------------------------------------------------- the element loops
template <class F>
ALWAYS_INLINE void f32_binary(uint32_t* d, const uint32_t* a, const uint32_t* b, size_t len, bool flush, F f) {
  if (flush) {
    for (size_t i = 0; i < len; ++i) d[i] = canon(ftz(bits(f(f32(ftz(a[i])), f32(ftz(b[i]))))));
  } else {
    for (size_t i = 0; i < len; ++i) d[i] = canon(bits(f(f32(a[i]), f32(b[i]))));
  }
}

// the fma loop inlined into a caller built with fma (apply_512): __builtin_fmaf is then one
// instruction, the correctly rounded fma as std::fmaf
template <bool FLUSH>
ALWAYS_INLINE void fma_loop_builtin(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c,
                                    size_t len) {
  for (size_t i = 0; i < len; ++i) {
    uint32_t x = a[i], y = b[i], z = c[i];
    if (FLUSH) { x = ftz(x); y = ftz(y); z = ftz(z); }
    uint32_t u = bits(__builtin_fmaf(f32(x), f32(y), f32(z)));
    d[i] = canon(FLUSH ? ftz(u) : u);
  }
}

template <bool FLUSH>
void fma_loop(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    uint32_t x = a[i], y = b[i], z = c[i];
    if (FLUSH) { x = ftz(x); y = ftz(y); z = ftz(z); }
    uint32_t u = bits(std::fmaf(f32(x), f32(y), f32(z)));
    d[i] = canon(FLUSH ? ftz(u) : u);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// the same loop where the CPU has an fma instruction (std::fmaf is then one instruction,
// not the C library's exact emulation; both are the correctly rounded fma)
template <bool FLUSH>
__attribute__((target("fma"))) void fma_loop_hw(uint32_t* d, const uint32_t* a, const uint32_t* b,
                                               const uint32_t* c, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    uint32_t x = a[i], y = b[i], z = c[i];
    if (FLUSH) { x = ftz(x); y = ftz(y); z = ftz(z); }
    uint32_t u = bits(__builtin_fmaf(f32(x), f32(y), f32(z)));
    d[i] = canon(FLUSH ? ftz(u) : u);
  }
}
bool cpu_has_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma");
}
bool cpu_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
}
const bool CPU_FMA = cpu_has_fma();
const bool CPU_AVX2_FMA = cpu_has_avx2_fma();
#else
template <bool FLUSH>
void fma_loop_hw(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c, size_t len) {
  fma_loop<FLUSH>(d, a, b, c, len);
}
const bool CPU_FMA = false;
const bool CPU_AVX2_FMA = false;
#endif
// the loops in use: the CPU's fma / AVX2 ones where it has them, and AVX-512 ones (mma.h's
// switch) (use_cpu_features(False) picks the portable ones, which the tests run too)
bool HW_FMA = CPU_FMA;
bool HW_AVX2_FMA = CPU_AVX2_FMA;

template <class T, class F>
ALWAYS_INLINE void int_binary(char* dp, const char* ap, const char* bp, size_t len, F f) {
  T* d = reinterpret_cast<T*>(dp);
  const T* a = P<T>(ap);
  const T* b = P<T>(bp);
  for (size_t i = 0; i < len; ++i) d[i] = f(a[i], b[i]);
}

template <class T>
ALWAYS_INLINE void shift(int32_t op, char* dp, const char* ap, const char* bp, size_t len) {
  constexpr uint32_t W = sizeof(T) * 8;
  using S = typename std::make_signed<T>::type;
  T* d = reinterpret_cast<T*>(dp);
  const T* a = P<T>(ap);
  const uint32_t* s = P<uint32_t>(bp);
  bool left = op == SHL32 || op == SHL64, sgn = op == SHRS32 || op == SHRS64;
  for (size_t i = 0; i < len; ++i) {
    uint32_t k = s[i];
    if (left) d[i] = k >= W ? T(0) : T(a[i] << k);
    else if (sgn) d[i] = static_cast<T>(static_cast<S>(a[i]) >> (k >= W - 1 ? W - 1 : k));
    else d[i] = k >= W ? T(0) : T(a[i] >> k);
  }
}

template <class T>
ALWAYS_INLINE void setp(int32_t fl, char* d, const char* ap, const char* bp, size_t len) {
  using S = typename std::make_signed<T>::type;
  int32_t cmp = (fl >> 1) & 7;
  const T* a = P<T>(ap);
  const T* b = P<T>(bp);
  if (fl & SIGNED) {
    for (size_t i = 0; i < len; ++i) d[i] = compare(static_cast<S>(a[i]), static_cast<S>(b[i]), cmp);
  } else {
    for (size_t i = 0; i < len; ++i) d[i] = compare(a[i], b[i], cmp);
  }
}

template <class T>
ALWAYS_INLINE void selp(char* dp, const char* ap, const char* bp, const char* c, size_t len) {
  T* d = reinterpret_cast<T*>(dp);
  const T* a = P<T>(ap);
  const T* b = P<T>(bp);
  for (size_t i = 0; i < len; ++i) d[i] = c[i] ? a[i] : b[i];
}

// shfl.sync.bfly.b32 over whole warps (every lane executing it, the clamp 31): element i of
// a warp of 32 takes its lane i ^ b (b: the lane mask, one immediate, its low 5 bits). A chunk
// starts on a warp (CHUNK is a multiple of 32) and holds whole warps (run_block checks n);
// d may be a itself
ALWAYS_INLINE void bfly(uint32_t* d, const uint32_t* a, const uint32_t* b, size_t len) {
  uint32_t m = b[0] & 31, w[32];
  for (size_t lo = 0; lo < len; lo += 32) {
    std::memcpy(w, a + lo, sizeof w);
    for (uint32_t l = 0; l < 32; ++l) d[lo + l] = w[l ^ m];
  }
}

// one instruction over len elements; false where an ex2 declines. The loops (inlined here) are
// built three times: for the baseline, AVX2 (apply's clone, chosen at load where the CPU has
// it) and AVX-512 (apply_512, where avx512_in_use()); every element takes the same IEEE
// operations (-ffp-contract=off; an fma only where the op is fma), so all give the same bits.
template <bool W512>
ALWAYS_INLINE bool apply_body(int32_t op, int32_t fl, char* dp, const char* a, const char* b, const char* c,
                              size_t len) {
  bool flush = fl & FTZ;
  uint32_t* d32 = reinterpret_cast<uint32_t*>(dp);
  const uint32_t *a32 = P<uint32_t>(a), *b32 = P<uint32_t>(b), *c32 = P<uint32_t>(c);
  switch (op) {
    case F_ADD: f32_binary(d32, a32, b32, len, flush, [](float x, float y) { return x + y; }); return true;
    case F_SUB: f32_binary(d32, a32, b32, len, flush, [](float x, float y) { return x - y; }); return true;
    case F_MUL: f32_binary(d32, a32, b32, len, flush, [](float x, float y) { return x * y; }); return true;
    case F_FMA:
      if (W512) flush ? fma_loop_builtin<true>(d32, a32, b32, c32, len) : fma_loop_builtin<false>(d32, a32, b32, c32, len);
      else if (HW_FMA) flush ? fma_loop_hw<true>(d32, a32, b32, c32, len) : fma_loop_hw<false>(d32, a32, b32, c32, len);
      else flush ? fma_loop<true>(d32, a32, b32, c32, len) : fma_loop<false>(d32, a32, b32, c32, len);
      return true;
    case F_MAX:
      if (flush) for (size_t i = 0; i < len; ++i) d32[i] = fmax_bits<false>(ftz(a32[i]), ftz(b32[i]));
      else for (size_t i = 0; i < len; ++i) d32[i] = fmax_bits<false>(a32[i], b32[i]);
      return true;
    case F_MIN:
      if (flush) for (size_t i = 0; i < len; ++i) d32[i] = fmax_bits<true>(ftz(a32[i]), ftz(b32[i]));
      else for (size_t i = 0; i < len; ++i) d32[i] = fmax_bits<true>(a32[i], b32[i]);
      return true;
    case F_NEG: case F_ABS:
      for (size_t i = 0; i < len; ++i) {
        uint32_t x = flush ? ftz(a32[i]) : a32[i];
        d32[i] = op == F_NEG ? x ^ 0x80000000u : x & 0x7FFFFFFFu;
      }
      return true;
    case F_EX2:
      if (avx512_in_use()) return ex2_loop_512(d32, a32, len, flush);
      return HW_AVX2_FMA ? ex2_loop_hw(d32, a32, len, flush) : ex2_loop_portable(d32, a32, len, flush);
    case F_RCP:       // 1 / x rounded to nearest: the IEEE quotient (rcp.rn, and rcp.approx as the handler)
      if (flush) for (size_t i = 0; i < len; ++i) d32[i] = canon(ftz(bits(1.0f / f32(ftz(a32[i])))));
      else for (size_t i = 0; i < len; ++i) d32[i] = canon(bits(1.0f / f32(a32[i])));
      return true;
    case CVT_BF16X2:
      for (size_t i = 0; i < len; ++i) {
        uint32_t x = a32[i], y = b32[i];
        uint32_t hi = is_nan(x) ? 0x7FFF0000u : bf16_rn(x) & 0xFFFF0000u;
        uint32_t lo16 = is_nan(y) ? 0x7FFFu : bf16_rn(y) >> 16;
        d32[i] = hi | lo16;
      }
      return true;
    case CVT_F16X2:
      for (size_t i = 0; i < len; ++i) d32[i] = (f16_rn(a32[i]) << 16) | f16_rn(b32[i]);
      return true;
    case MOV8: std::memcpy(dp, a, len); return true;
    case AND8: int_binary<uint8_t>(dp, a, b, len, [](uint8_t x, uint8_t y) { return uint8_t(x & y); }); return true;
    case OR8: int_binary<uint8_t>(dp, a, b, len, [](uint8_t x, uint8_t y) { return uint8_t(x | y); }); return true;
    case XOR8: int_binary<uint8_t>(dp, a, b, len, [](uint8_t x, uint8_t y) { return uint8_t(x ^ y); }); return true;
    case MOV32: std::memcpy(dp, a, len * 4); return true;
    case MOV64: std::memcpy(dp, a, len * 8); return true;
    case ADD32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x + y; }); return true;
    case SUB32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x - y; }); return true;
    case MUL32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x * y; }); return true;
    case AND32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x & y; }); return true;
    case OR32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x | y; }); return true;
    case XOR32: int_binary<uint32_t>(dp, a, b, len, [](uint32_t x, uint32_t y) { return x ^ y; }); return true;
    case ADD64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x + y; }); return true;
    case SUB64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x - y; }); return true;
    case MUL64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x * y; }); return true;
    case AND64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x & y; }); return true;
    case OR64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x | y; }); return true;
    case XOR64: int_binary<uint64_t>(dp, a, b, len, [](uint64_t x, uint64_t y) { return x ^ y; }); return true;
    case SHL32: case SHRU32: case SHRS32: shift<uint32_t>(op, dp, a, b, len); return true;
    case SHL64: case SHRU64: case SHRS64: shift<uint64_t>(op, dp, a, b, len); return true;
    case ZEXT32_64: {
      uint64_t* d = reinterpret_cast<uint64_t*>(dp);
      for (size_t i = 0; i < len; ++i) d[i] = a32[i];
      return true;
    }
    case SEXT32_64: {
      uint64_t* d = reinterpret_cast<uint64_t*>(dp);
      for (size_t i = 0; i < len; ++i) d[i] = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(a32[i])));
      return true;
    }
    case TRUNC64_32: {
      const uint64_t* s = P<uint64_t>(a);
      for (size_t i = 0; i < len; ++i) d32[i] = static_cast<uint32_t>(s[i]);
      return true;
    }
    case SETP32: setp<uint32_t>(fl, dp, a, b, len); return true;
    case SETP64: setp<uint64_t>(fl, dp, a, b, len); return true;
    case SELP32: selp<uint32_t>(dp, a, b, c, len); return true;
    case SELP64: selp<uint64_t>(dp, a, b, c, len); return true;
    case BFLY32: bfly(d32, a32, b32, len); return true;
    default: throw std::invalid_argument("bad op");
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
bool apply(int32_t op, int32_t fl, char* dp, const char* a, const char* b, const char* c, size_t len) {
  return apply_body<false>(op, fl, dp, a, b, c, len);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
bool apply_512(int32_t op, int32_t fl, char* dp, const char* a, const char* b, const char* c, size_t len) {
  return apply_body<true>(op, fl, dp, a, b, c, len);
}
#else
bool apply_512(int32_t op, int32_t fl, char* dp, const char* a, const char* b, const char* c, size_t len) {
  return apply_body<false>(op, fl, dp, a, b, c, len);
}
#endif

template <class T>
void gather_into(Slot& sl, const int64_t* ix, size_t len) {
  const T* base = reinterpret_cast<const T*>(sl.base);
  T* out = reinterpret_cast<T*>(sl.chunk.data());
  int64_t st = sl.stride;
  for (size_t i = 0; i < len; ++i) out[i] = base[ix[i] * st];
}

// the tile inputs' elements [lo, lo + len) (lo a multiple of 32, len of whole warps), warp by
// warp: every input's lanes of one warp's tile while it is in the cache (a register's 32 lanes
// lie on several of the tile's rows, which the other registers share)
void tiles_into(const std::vector<Slot*>& ts, size_t lo, size_t len, bool wide) {
  for (size_t w = 0; w < len / 32; ++w) {
    size_t warp = lo / 32 + w;
    for (const Slot* sl : ts)
      warp_from_tile(sl->tile + static_cast<int64_t>(warp) * sl->per_warp, sl->lanes,
                     reinterpret_cast<uint32_t*>(sl->chunk.data()) + 32 * w, wide);
  }
}

// the starts of the runs of consecutive indices in ix[0, len) (a group of whole warps of a
// warp-specialized role is a few runs), with len as the last entry
void index_runs(const int64_t* ix, size_t len, std::vector<size_t>& at) {
  at.clear();
  at.push_back(0);
  for (size_t i = 1; i < len; ++i)
    if (ix[i] != ix[i - 1] + 1) at.push_back(i);
  at.push_back(len);
}

// a gathered input of stride 1 as one copy per run
void gather_runs(Slot& sl, const int64_t* ix, const std::vector<size_t>& at) {
  size_t w = static_cast<size_t>(sl.width);
  for (size_t r = 0; r + 1 < at.size(); ++r)
    std::memcpy(sl.chunk.data() + at[r] * w, sl.base + static_cast<size_t>(ix[at[r]]) * w,
                (at[r + 1] - at[r]) * w);
}

// false where the block declines (an ex2 near a rounding boundary): the outputs are then partial
bool run_block(const int32_t* code, size_t m, const uint64_t* imms, size_t nimm,
              std::vector<Slot>& slots, size_t n) {
  // operands, decoded once
  std::vector<Source> src(m * 3);
  Constants consts(n < CHUNK ? n : CHUNK);   // a constant's copies: one chunk's worth
  for (size_t j = 0; j < m; ++j) {
    const int32_t* c = code + 6 * j;
    int32_t op = c[0];
    if (op <= 0 || op >= OP_END) throw std::invalid_argument("bad op");
    if (op == BFLY32 && n % 32) throw std::invalid_argument("bfly32 needs whole warps");
    int32_t d = c[2];
    if (d < 0 || static_cast<size_t>(d) >= slots.size() || slots[d].width != width_of(op, 0)
        || slots[d].stride != 1)
      throw std::invalid_argument("bad destination slot");
    for (int k = 0; k < 3; ++k) {
      int32_t o = c[3 + k];
      Source& s = src[3 * j + k];
      if (k >= arity(op)) {
        if (o != UNUSED) throw std::invalid_argument("operand past the arity");
        continue;
      }
      int w = width_of(op, k + 1);
      if (o < 0) {
        size_t i = static_cast<size_t>(-1 - static_cast<int64_t>(o));
        if (o == UNUSED || i >= nimm) throw std::invalid_argument("bad immediate");
        s.constant = consts.of(&imms[i], w);
        continue;
      }
      if (static_cast<size_t>(o) >= slots.size() || slots[o].width != w)
        throw std::invalid_argument("bad source slot");
      const Slot& sl = slots[o];
      if (sl.index || sl.tile) {
        s.chunked = &sl;
      } else if (sl.stride == 1) {
        s.direct = sl.base;
      } else if (sl.stride == 0) {
        s.constant = consts.of(sl.base, w);
      } else {
        s.strided = &sl;
        s.buf.resize(CHUNK * w);
      }
    }
  }
  bool any_index = false;
  std::vector<Slot*> tiled;
  for (Slot& sl : slots) {
    if (sl.index) any_index = true;
    if (sl.tile) tiled.push_back(&sl);
    if (sl.index || sl.tile) sl.chunk.resize(CHUNK * sl.width);
  }
  std::vector<size_t> runs;
  const bool wide = avx512_in_use();
  for (size_t lo = 0; lo < n; lo += CHUNK) {
    size_t len = n - lo < CHUNK ? n - lo : CHUNK;
    bool by_runs = false;     // the gathered inputs share one index: its runs, once a chunk
    if (any_index) {
      for (const Slot& sl : slots)
        if (sl.index) {
          index_runs(sl.index + lo, len, runs);
          by_runs = (runs.size() - 1) * 16 <= len;     // runs of 16 elements or more on average
          break;
        }
    }
    if (!tiled.empty()) tiles_into(tiled, lo, len, wide);
    for (Slot& sl : slots) {      // the gathered inputs' elements of this chunk, once
      if (!sl.index || sl.tile) continue;
      const int64_t* ix = sl.index + lo;
      if (by_runs && sl.stride == 1) {
        gather_runs(sl, ix, runs);
        continue;
      }
      switch (sl.width) {
        case 1: gather_into<uint8_t>(sl, ix, len); break;
        case 4: gather_into<uint32_t>(sl, ix, len); break;
        default: gather_into<uint64_t>(sl, ix, len); break;
      }
    }
    for (size_t j = 0; j < m; ++j) {
      const int32_t* c = code + 6 * j;
      int32_t op = c[0];
      int na = arity(op);
      const char* a = src[3 * j].at(lo, len, width_of(op, 1));
      const char* b = na > 1 ? src[3 * j + 1].at(lo, len, width_of(op, 2)) : nullptr;
      const char* cc = na > 2 ? src[3 * j + 2].at(lo, len, width_of(op, 3)) : nullptr;
      if (!(wide ? apply_512 : apply)(op, c[1], slots[c[2]].base + lo * width_of(op, 0), a, b, cc, len)) return false;
    }
  }
  return true;
}

}  // namespace

NB_MODULE(_arith, m) {
  m.doc() = "The interpreter's native arithmetic (jax_pyptx.interpret.scheduler.native).";
  m.def("run",
        [](nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> code,
           nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> imms,
           nb::list arrays,
           nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> widths,
           size_t n,
           std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>> index,
           size_t gathered,
           std::optional<nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>> scratch,
           std::optional<nb::list> blocks, std::optional<nb::tuple> tiles) {
          if (code.shape(1) != 6) throw std::invalid_argument("code must be (m, 6)");
          size_t ns = widths.shape(0), na = nb::len(arrays);
          if (na > ns) throw std::invalid_argument("more arrays than widths");
          if (gathered > na || (gathered && !index)) throw std::invalid_argument("gathered slots need an index");
          const int64_t* ix = nullptr;
          int64_t ix_max = -1;
          if (index) {
            if (index->shape(0) != n) throw std::invalid_argument("the index must have n elements");
            ix = index->data();
            for (size_t i = 0; i < n; ++i) {
              if (ix[i] < 0) throw std::invalid_argument("a negative index");
              ix_max = ix[i] > ix_max ? ix[i] : ix_max;
            }
          }
          std::vector<Slot> slots(ns);
          // the tile inputs (held by `tiles` for the call): one tile, a row of lanes a slot
          using Tile = nb::ndarray<const uint32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
          using Lanes = nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
          using Index = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
          Tile tl;
          Lanes ln;
          std::vector<bool> is_tile(na, false);
          if (tiles) {
            if (n % 32) throw std::invalid_argument("tile inputs need whole warps");
            if (nb::len(*tiles) != 3) throw std::invalid_argument("tiles: (tile, lanes, slots)");
            tl = nb::cast<Tile>((*tiles)[0]);
            ln = nb::cast<Lanes>((*tiles)[1]);
            Index at = nb::cast<Index>((*tiles)[2]);
            size_t k = at.shape(0);
            if (tl.shape(0) * 32 != n || ln.shape(0) != k || ln.shape(1) != 32)
              throw std::invalid_argument("tile inputs: shapes");
            for (size_t e = 0; e < 32 * k; ++e)
              if (ln.data()[e] < 0 || static_cast<size_t>(ln.data()[e]) >= tl.shape(1))
                throw std::invalid_argument("tile input " + std::to_string(at.data()[e / 32]) +
                                            ": a lane past its warp's tile");
            for (size_t j = 0; j < k; ++j) {
              int64_t i = at.data()[j];
              if (i < 0 || static_cast<size_t>(i) >= na || is_tile[i] || widths.data()[i] != 4)
                throw std::invalid_argument("tile input " + std::to_string(i) + ": slot or width");
              is_tile[i] = true;
              slots[i].tile = tl.data();
              slots[i].lanes = ln.data() + 32 * j;
              slots[i].per_warp = static_cast<int64_t>(tl.shape(1));
              slots[i].width = 4;
            }
          }
          std::vector<Py_buffer> views(na + (blocks ? nb::len(*blocks) : 0));   // (never reallocated)
          size_t got = 0;
          struct Release {    // the views taken so far, on every way out
            std::vector<Py_buffer>& v; size_t& k;
            ~Release() { for (size_t i = 0; i < k; ++i) PyBuffer_Release(&v[i]); }
          } release{views, got};
          for (size_t i = 0; i < na; ++i) {
            if (is_tile[i]) {       // (read through the tile: its entry of arrays is not)
              views[i].obj = nullptr;       // (nothing to release)
              ++got;
              continue;
            }
            if (PyObject_GetBuffer(arrays[i].ptr(), &views[i], PyBUF_RECORDS_RO) != 0) {
              PyErr_Clear();
              throw std::invalid_argument("slot " + std::to_string(i) + ": not a buffer");
            }
            ++got;
            const Py_buffer& v = views[i];
            int w = static_cast<int>(v.itemsize);
            bool gath = i < gathered;
            if (v.ndim != 1 || w != widths.data()[i] || v.strides[0] % w != 0
                || (gath ? v.shape[0] <= ix_max : static_cast<size_t>(v.shape[0]) != n))
              throw std::invalid_argument("slot " + std::to_string(i) + ": shape, itemsize or stride");
            slots[i].base = static_cast<char*>(v.buf);
            slots[i].stride = v.strides[0] / w;
            slots[i].width = w;
            if (gath) slots[i].index = ix;
          }
          size_t first_temp = na;
          if (blocks) {                         // rows of 2-D arrays: the next slots
            size_t nbk = nb::len(*blocks);
            for (size_t b = 0; b < nbk; ++b) {
              Py_buffer& v = views[na + b];
              if (PyObject_GetBuffer((*blocks)[b].ptr(), &v, PyBUF_RECORDS) != 0) {
                PyErr_Clear();
                throw std::invalid_argument("block " + std::to_string(b) + ": not a writable buffer");
              }
              ++got;
              int w = static_cast<int>(v.itemsize);
              if (v.ndim != 2 || static_cast<size_t>(v.shape[1]) != n || (n > 1 && v.strides[1] != w) ||
                  (v.shape[0] > 1 && v.strides[0] != static_cast<Py_ssize_t>(n) * w))   // (a dimension of 1: any stride)
                throw std::invalid_argument("block " + std::to_string(b) + ": not a C-contiguous (k, n) array");
              if (first_temp + static_cast<size_t>(v.shape[0]) > ns)
                throw std::invalid_argument("more arrays than widths");
              for (Py_ssize_t r = 0; r < v.shape[0]; ++r, ++first_temp) {
                if (w != widths.data()[first_temp])
                  throw std::invalid_argument("slot " + std::to_string(first_temp) + ": shape, itemsize or stride");
                slots[first_temp].base = static_cast<char*>(v.buf) + r * static_cast<Py_ssize_t>(n) * w;
                slots[first_temp].stride = 1;
                slots[first_temp].width = w;
              }
            }
          }
          size_t at = 0, room = scratch ? scratch->shape(0) : 0;
          for (size_t i = first_temp; i < ns; ++i) {    // the rest: carved from scratch, 8-byte aligned
            int w = widths.data()[i];
            size_t nb_ = (n * w + 7) & ~static_cast<size_t>(7);
            if (at + nb_ > room) throw std::invalid_argument("scratch too small for the slots past the arrays");
            slots[i].base = reinterpret_cast<char*>(scratch->data()) + at;
            slots[i].width = w;
            at += nb_;
          }
          nb::gil_scoped_release unlocked;
          return run_block(code.data(), code.shape(0), imms.data(), imms.shape(0), slots, n);
        },
        nb::arg("code"), nb::arg("imms"), nb::arg("arrays"), nb::arg("widths"), nb::arg("n"),
        nb::arg("index").none() = nb::none(), nb::arg("gathered") = 0,
        nb::arg("scratch").none() = nb::none(), nb::arg("blocks").none() = nb::none(),
        nb::arg("tiles").none() = nb::none());
  register_matrix(m);
  register_mma(m);
  m.def("use_cpu_features",
        [](bool on) {
          bool was = HW_FMA || HW_AVX2_FMA;
          HW_FMA = on && CPU_FMA;
          HW_AVX2_FMA = on && CPU_AVX2_FMA;
          return use_avx512(on) || was;
        },
        nb::arg("on"),
        "Use the fma / AVX2 / AVX-512 loops where the CPU has them (the default), or the "
        "portable loops (False: the same bits, for the tests); returns whether any was in use "
        "before");
  m.attr("ops") = nb::make_tuple(
      "f_add", "f_sub", "f_mul", "f_fma", "f_max", "f_min", "f_neg", "f_abs", "f_ex2",
      "cvt_bf16x2", "cvt_f16x2", "mov8", "mov32", "mov64", "and8", "or8", "xor8",
      "add32", "sub32", "mul32", "shl32", "shru32", "shrs32", "and32", "or32", "xor32",
      "add64", "sub64", "mul64", "shl64", "shru64", "shrs64", "and64", "or64", "xor64",
      "zext32_64", "sext32_64", "trunc64_32", "setp32", "setp64", "selp32", "selp64",
      "bfly32", "f_rcp");
}
