// Part of jax_pyptx.interpret.state._arith (ffi/interp/arith.cc makes the module): the
// interpreter's matrices and register blocks moved in one native pass each.
//
//   round_f32(sum, addend, out)   an f32 accumulator's bits after a matrix product
//   bf16_to_f64(raw, out)          a bf16 matrix operand's values
//   take_bf16(src, first, index, out, stride=1)   a bf16 matrix operand gathered and widened
//   regs_to_tile(regs, slots, lanes, out) / tile_to_regs(tile, lanes, slots, regs)
//                                  a register block (a wgmma accumulator) to its tile and back
//   rows_to_regs(rows, slots, regs)   a block's rows into its registers, in place
//   take_uniform(regs, slots, group, out)   registers each group of threads holds one value of
//
// Each gives the values the NumPy code it replaces gives (tests/test_interp_native.py).
#include "bits.h"
#include "matrix.h"
#include "mma.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {


// o = the f32 bits of s + a (a: f32 bits, or null), rounded once
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void round_f32(const double* __restrict s, const uint32_t* __restrict a, uint32_t* __restrict o,
               size_t n) {
  if (a) {
    for (size_t i = 0; i < n; ++i) o[i] = bits(static_cast<float>(s[i] + static_cast<double>(f32(a[i]))));
  } else {
    for (size_t i = 0; i < n; ++i) o[i] = bits(static_cast<float>(s[i]));
  }
}

// o (C order) = the f64 values of the bf16 bit patterns of a 3-D array a of any strides (in
// elements), exact: a bf16 is the high half of an f32
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void bf16_to_f64(const uint16_t* a, const int64_t* shape, const int64_t* st, double* __restrict o) {
  if (st[2] != 1 && st[1] == 1) {         // a transposed view: read along its contiguous axis
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t k = 0; k < shape[2]; ++k) {
        const uint16_t* col = a + i * st[0] + k * st[2];
        double* out = o + i * shape[1] * shape[2] + k;
        for (int64_t j = 0; j < shape[1]; ++j)
          out[j * shape[2]] = static_cast<double>(f32(static_cast<uint32_t>(col[j]) << 16));
      }
    return;
  }
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      const uint16_t* row = a + i * st[0] + j * st[1];
      double* out = o + (i * shape[1] + j) * shape[2];
      if (st[2] == 1) {
        for (int64_t k = 0; k < shape[2]; ++k) out[k] = static_cast<double>(f32(static_cast<uint32_t>(row[k]) << 16));
      } else {
        for (int64_t k = 0; k < shape[2]; ++k)
          out[k] = static_cast<double>(f32(static_cast<uint32_t>(row[k * st[2]]) << 16));
      }
    }
}

// o[i, j] = the f64 value of the bf16 bit pattern a[first[i] + index[j]] (m x len, C order):
// a matrix operand gathered by its element offsets and widened in one pass. Runs: 8 positions
// j, j + stride, ..., j + 7 * stride of index (a group of 8 * stride positions holds stride of
// them) naming 8 consecutive offsets, a swizzle's 16-byte chunk (stride 1: in order; stride mn:
// down a column of a transposed operand), are read as one vector; the positions past the last
// whole group one by one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void take_bf16(const uint16_t* a, const int64_t* first, size_t m, const int64_t* index, size_t len,
               size_t stride, double* __restrict o) {
  size_t groups = len / (8 * stride), span = 8 * stride;
  std::vector<uint8_t> run(groups * stride);
  for (size_t g = 0; g < groups; ++g)
    for (size_t c = 0; c < stride; ++c) {
      const int64_t* x = index + g * span + c;
      bool ok = true;
      for (size_t e = 1; e < 8; ++e) ok &= x[e * stride] == x[0] + static_cast<int64_t>(e);
      run[g * stride + c] = ok;
    }
  for (size_t i = 0; i < m; ++i) {
    const uint16_t* row = a + first[i];
    double* out = o + i * len;
    for (size_t g = 0; g < groups; ++g)
      for (size_t c = 0; c < stride; ++c) {
        size_t b = g * span + c;
        if (run[g * stride + c]) {
          const uint16_t* src = row + index[b];
          if (stride == 1) {        // (8 contiguous outputs: one vector store)
            for (size_t e = 0; e < 8; ++e) out[b + e] = static_cast<double>(f32(static_cast<uint32_t>(src[e]) << 16));
          } else {
            double v[8];
            for (size_t e = 0; e < 8; ++e) v[e] = static_cast<double>(f32(static_cast<uint32_t>(src[e]) << 16));
            for (size_t e = 0; e < 8; ++e) out[b + e * stride] = v[e];
          }
        } else {
          for (size_t e = 0; e < 8; ++e)
            out[b + e * stride] = static_cast<double>(f32(static_cast<uint32_t>(row[index[b + e * stride]]) << 16));
        }
      }
    for (size_t j = groups * span; j < len; ++j)
      out[j] = static_cast<double>(f32(static_cast<uint32_t>(row[index[j]]) << 16));
  }
}

// A register block's tile (a wgmma accumulator, machine/asyncregs.py's TileLayout): lane l of
// a warp holds in register j the tile element lanes[j, l] of its warp's rows x cols tile.
// Thread i of a group of whole warps is lane i % 32 of its warp i / 32, at batch slot slots[i].
// regs_to_tile: tile[i / 32, lanes[j, i % 32]] = regs[j][slots[i]] (a permutation: every
// element is written once); tile_to_regs: out[j, slots[i]] = tile[i / 32, lanes[j, i % 32]].
// whether a warp's 32 slots are consecutive (a whole warp of a CTA: its lanes read and write
// one run of 32 elements, no per-lane slot to look up)
inline bool consecutive(const int64_t* s) {
  bool ok = true;
  for (int l = 1; l < 32; ++l) ok &= s[l] == s[0] + l;
  return ok;
}

// a whole warp's 32 consecutive slots of register r into its tile t at lanes ln, and back:
// with AVX-512, four scatters (gathers) of eight
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
void warp_to_tile_512(const uint32_t* r, const int64_t* ln, uint32_t* t) {
  for (int q = 0; q < 4; ++q)
    _mm512_i64scatter_epi32(t, _mm512_loadu_si512(ln + 8 * q),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 8 * q)), 4);
}
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
void warp_from_tile_512(const uint32_t* t, const int64_t* ln, uint32_t* row) {
  for (int q = 0; q < 4; ++q)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 8 * q),
                        _mm512_i64gather_epi32(_mm512_loadu_si512(ln + 8 * q), t, 4));
}
#else
void warp_to_tile_512(const uint32_t* r, const int64_t* ln, uint32_t* t) {
  for (size_t l = 0; l < 32; ++l) t[ln[l]] = r[l];
}
void warp_from_tile_512(const uint32_t* t, const int64_t* ln, uint32_t* row) {
  for (size_t l = 0; l < 32; ++l) row[l] = t[ln[l]];
}
#endif

}  // namespace

void warp_from_tile(const uint32_t* t, const int64_t* ln, uint32_t* row, bool wide) {
  if (wide) {
    warp_from_tile_512(t, ln, row);
    return;
  }
  for (size_t l = 0; l < 32; ++l) row[l] = t[ln[l]];
}

namespace {

void regs_to_tile(const std::vector<const uint32_t*>& regs, const int64_t* slots, size_t n,
                  const int64_t* lanes, uint32_t* __restrict tile, size_t per_warp) {
  size_t k = regs.size();
  const bool wide = avx512_in_use();
  for (size_t w = 0; w < n / 32; ++w) {        // a warp at a time: its tile stays in cache
    uint32_t* t = tile + w * per_warp;
    const int64_t* s = slots + 32 * w;
    if (consecutive(s)) {
      for (size_t j = 0; j < k; ++j) {
        const uint32_t* r = regs[j] + s[0];
        const int64_t* ln = lanes + 32 * j;
        if (wide) {
          warp_to_tile_512(r, ln, t);
          continue;
        }
        for (size_t l = 0; l < 32; ++l) t[ln[l]] = r[l];
      }
      continue;
    }
    for (size_t j = 0; j < k; ++j) {
      const uint32_t* r = regs[j];
      const int64_t* ln = lanes + 32 * j;
      for (size_t l = 0; l < 32; ++l) t[ln[l]] = r[s[l]];
    }
  }
}

void tile_to_regs(const uint32_t* tile, size_t per_warp, const int64_t* lanes,
                  const std::vector<uint32_t*>& out, const int64_t* slots, size_t n) {
  size_t k = out.size();
  const bool wide = avx512_in_use();
  for (size_t w = 0; w < n / 32; ++w) {
    const uint32_t* t = tile + w * per_warp;
    const int64_t* s = slots + 32 * w;
    if (consecutive(s)) {
      for (size_t j = 0; j < k; ++j) {
        uint32_t* row = out[j] + s[0];
        const int64_t* ln = lanes + 32 * j;
        warp_from_tile(t, ln, row, wide);
      }
      continue;
    }
    for (size_t j = 0; j < k; ++j) {
      uint32_t* row = out[j];
      const int64_t* ln = lanes + 32 * j;
      for (size_t l = 0; l < 32; ++l) row[s[l]] = t[ln[l]];
    }
  }
}

// out[j][slots[i]] = rows[j, i] for elements of `width` bytes: a block's rows written into
// its registers at the group's slots, a run of consecutive slots at a time where the runs are
// long (32 elements or more on average), else element by element
template <typename T>
void scatter_rows(const T* rows, size_t n, const std::vector<char*>& out, const int64_t* slots) {
  for (size_t j = 0; j < out.size(); ++j) {
    T* o = reinterpret_cast<T*>(out[j]);
    const T* r = rows + j * n;
    for (size_t i = 0; i < n; ++i) o[slots[i]] = r[i];
  }
}

void rows_to_regs(const char* rows, size_t n, size_t width, const std::vector<char*>& out,
                  const int64_t* slots) {
  std::vector<size_t> cut{0};          // the runs of consecutive slots: [cut[r], cut[r + 1])
  for (size_t i = 1; i < n; ++i)
    if (slots[i] != slots[i - 1] + 1) cut.push_back(i);
  cut.push_back(n);
  if (n && (cut.size() - 1) * 32 <= n) {
    for (size_t j = 0; j < out.size(); ++j)
      for (size_t r = 0; r + 1 < cut.size(); ++r)
        std::memcpy(out[j] + slots[cut[r]] * width, rows + (j * n + cut[r]) * width,
                    (cut[r + 1] - cut[r]) * width);
    return;
  }
  switch (width) {
    case 1: scatter_rows(reinterpret_cast<const uint8_t*>(rows), n, out, slots); break;
    case 4: scatter_rows(reinterpret_cast<const uint32_t*>(rows), n, out, slots); break;
    default: scatter_rows(reinterpret_cast<const uint64_t*>(rows), n, out, slots); break;
  }
}

// The 1-D arrays of a Python list as pointers, each of `width` bytes an element and more than
// `past` elements (a slot written lies below it); writable ones where asked. The buffers are
// released when the object goes (every way out of the call).
struct BufferList {
  std::vector<Py_buffer> views;
  size_t got = 0;
  BufferList(nb::list arrays, size_t width, int64_t past, bool writable, const char* what) : views(nb::len(arrays)) {
    int flags = PyBUF_ND | (writable ? PyBUF_WRITABLE : 0);
    for (size_t j = 0; j < views.size(); ++j) {
      if (PyObject_GetBuffer(arrays[j].ptr(), &views[j], flags) != 0) {
        PyErr_Clear();
        throw std::invalid_argument(std::string(what) + ": register " + std::to_string(j) + " is not a contiguous" +
                                    (writable ? " writable" : "") + " buffer");
      }
      ++got;
      if (static_cast<size_t>(views[j].itemsize) != width || views[j].ndim != 1)
        throw std::invalid_argument(std::string(what) + ": register " + std::to_string(j) + " is not 1-D of " +
                                    std::to_string(width) + "-byte elements");
      if (views[j].shape[0] <= past)
        throw std::invalid_argument(std::string(what) + ": a slot lies outside the registers");
    }
  }
  BufferList(const BufferList&) = delete;
  BufferList& operator=(const BufferList&) = delete;
  ~BufferList() { for (size_t i = 0; i < got; ++i) PyBuffer_Release(&views[i]); }
  template <typename T> std::vector<T*> pointers() const {
    std::vector<T*> p(views.size());
    for (size_t j = 0; j < views.size(); ++j) p[j] = static_cast<T*>(views[j].buf);
    return p;
  }
};

// out[j, w] = regs[j][slots[w * group]]: each group's first thread's value of each register;
// whether every thread of each group holds that value (a warpgroup's uniform operands: the
// descriptors and scale-d of a run of wgmma.mma_async)
template <typename T>
bool take_uniform(const std::vector<const char*>& regs, const int64_t* slots, size_t n, size_t group,
                  char* out) {
  size_t W = n / group;
  bool same = true;
  for (size_t j = 0; j < regs.size(); ++j) {
    const T* r = reinterpret_cast<const T*>(regs[j]);
    T* o = reinterpret_cast<T*>(out) + j * W;
    for (size_t w = 0; w < W; ++w) {
      const int64_t* s = slots + w * group;
      T v = r[s[0]];
      o[w] = v;
      for (size_t i = 1; i < group; ++i) same &= r[s[i]] == v;
    }
  }
  return same;
}

int64_t max_slot(const int64_t* slots, size_t n, const char* what) {
  int64_t hi = -1;
  for (size_t i = 0; i < n; ++i) {
    if (slots[i] < 0) throw std::invalid_argument(std::string(what) + ": a slot lies outside the registers");
    hi = slots[i] > hi ? slots[i] : hi;
  }
  return hi;
}

// the lanes map (k, 32) lies inside a warp's tile, the slots inside [0, limit)
void check_block(const int64_t* lanes, size_t nl, size_t per_warp, const int64_t* slots, size_t n,
                 int64_t limit, const char* what) {
  for (size_t i = 0; i < nl; ++i)
    if (lanes[i] < 0 || static_cast<size_t>(lanes[i]) >= per_warp)
      throw std::invalid_argument(std::string(what) + ": a lane's element lies outside its warp's tile");
  for (size_t i = 0; i < n; ++i)
    if (slots[i] < 0 || slots[i] >= limit)
      throw std::invalid_argument(std::string(what) + ": a slot lies outside the registers");
}

}  // namespace

void register_matrix(nb::module_& m) {
  m.def("round_f32",
        [](nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu> sum,
           std::optional<nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>> addend,
           nb::ndarray<uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> out) {
          size_t n = sum.shape(0);
          if (out.shape(0) != n || (addend && addend->shape(0) != n))
            throw std::invalid_argument("round_f32: arrays of different lengths");
          const double* s = sum.data();
          uint32_t* o = out.data();
          nb::gil_scoped_release unlocked;
          round_f32(s, addend ? addend->data() : nullptr, o, n);
        },
        nb::arg("sum"), nb::arg("addend").none(), nb::arg("out"),
        "out = the f32 bits of sum (float64) + addend (f32 bits, or None), rounded once: an "
        "f32 accumulator after a matrix product (ops.wgmma)");
  m.def("bf16_to_f64",
        [](nb::ndarray<const uint16_t, nb::ndim<3>, nb::device::cpu> raw,
           nb::ndarray<double, nb::ndim<3>, nb::c_contig, nb::device::cpu> out) {
          int64_t shape[3], st[3];
          for (int d = 0; d < 3; ++d) {
            shape[d] = static_cast<int64_t>(raw.shape(d));
            st[d] = raw.stride(d);
            if (static_cast<int64_t>(out.shape(d)) != shape[d])
              throw std::invalid_argument("bf16_to_f64: arrays of different shapes");
          }
          const uint16_t* a = raw.data();
          double* o = out.data();
          nb::gil_scoped_release unlocked;
          bf16_to_f64(a, shape, st, o);
        },
        nb::arg("raw"), nb::arg("out"),
        "out = the float64 values of a 3-D array of bf16 bit patterns (any strides): a matrix "
        "operand (ops.smem_matrix.values)");
  m.def("take_bf16",
        [](nb::ndarray<const uint16_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> src,
           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> first,
           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> index,
           nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> out, size_t stride) {
          size_t m = first.shape(0), len = index.shape(0);
          if (out.shape(0) != m || out.shape(1) != len)
            throw std::invalid_argument("take_bf16: out must be (len(first), len(index))");
          if (stride < 1)
            throw std::invalid_argument("take_bf16: stride must be 1 or more");
          const int64_t* f = first.data();
          const int64_t* ix = index.data();
          if (m && len) {         // every element read lies inside src
            int64_t flo = f[0], fhi = f[0], ilo = ix[0], ihi = ix[0];
            for (size_t i = 1; i < m; ++i) { flo = f[i] < flo ? f[i] : flo; fhi = f[i] > fhi ? f[i] : fhi; }
            for (size_t j = 1; j < len; ++j) { ilo = ix[j] < ilo ? ix[j] : ilo; ihi = ix[j] > ihi ? ix[j] : ihi; }
            if (flo + ilo < 0 || fhi + ihi >= static_cast<int64_t>(src.shape(0)))
              throw std::invalid_argument("take_bf16: an element offset lies outside src");
          }
          const uint16_t* a = src.data();
          double* o = out.data();
          nb::gil_scoped_release unlocked;
          take_bf16(a, f, m, ix, len, stride, o);
        },
        nb::arg("src"), nb::arg("first"), nb::arg("index"), nb::arg("out"), nb::arg("stride") = 1,
        "out[i, j] = the float64 value of the bf16 bit pattern src[first[i] + index[j]]: a "
        "matrix operand gathered by element offsets and widened in one pass (ops.smem_matrix); "
        "stride: where index's runs of 8 consecutive offsets lie, at positions stride apart "
        "(1: in order; mn: a transposed operand's columns)");
  m.def("regs_to_tile",
        [](nb::list regs,
           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> slots,
           nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> lanes,
           nb::ndarray<uint32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> out) {
          size_t k = nb::len(regs), n = slots.shape(0), per_warp = out.shape(1);
          if (lanes.shape(0) != k || lanes.shape(1) != 32 || n % 32 || out.shape(0) != n / 32
              || k * 32 != per_warp)
            throw std::invalid_argument("regs_to_tile: lanes must be (len(regs), 32), out (len(slots) / 32, 32 * len(regs))");
          check_block(lanes.data(), k * 32, per_warp, slots.data(), n, INT64_MAX, "regs_to_tile");
          BufferList in(regs, 4, max_slot(slots.data(), n, "regs_to_tile"), false, "regs_to_tile");
          std::vector<const uint32_t*> ptrs = in.pointers<const uint32_t>();
          nb::gil_scoped_release unlocked;
          regs_to_tile(ptrs, slots.data(), n, lanes.data(), out.data(), per_warp);
        },
        nb::arg("regs"), nb::arg("slots"), nb::arg("lanes"), nb::arg("out"),
        "out[i // 32, lanes[j, i % 32]] = regs[j][slots[i]]: a register block's tile from its "
        "registers (machine.asyncregs.TileLayout)");
  m.def("tile_to_regs",
        [](nb::ndarray<const uint32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> tile,
           nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> lanes,
           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> slots,
           nb::list regs) {
          size_t k = lanes.shape(0), n = slots.shape(0), per_warp = tile.shape(1);
          if (lanes.shape(1) != 32 || tile.shape(0) * 32 != n || nb::len(regs) != k)
            throw std::invalid_argument("tile_to_regs: lanes must be (len(regs), 32), tile (len(slots) / 32, elements)");
          check_block(lanes.data(), k * 32, per_warp, slots.data(), n, INT64_MAX, "tile_to_regs");
          BufferList out(regs, 4, max_slot(slots.data(), n, "tile_to_regs"), true, "tile_to_regs");
          std::vector<uint32_t*> rows = out.pointers<uint32_t>();
          nb::gil_scoped_release unlocked;
          tile_to_regs(tile.data(), per_warp, lanes.data(), rows, slots.data(), n);
        },
        nb::arg("tile"), nb::arg("lanes"), nb::arg("slots"), nb::arg("regs"),
        "regs[j][slots[i]] = tile[i // 32, lanes[j, i % 32]], in place: a register block's "
        "registers from its tile, written at the slots of the group (machine.asyncregs.TileLayout)");
  m.def("take_uniform",
        [](nb::list regs, nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> slots,
           size_t group, nb::ndarray<nb::ndim<2>, nb::c_contig, nb::device::cpu> out) {
          size_t k = nb::len(regs), n = slots.shape(0), width = out.dtype().bits / 8;
          if (width != 1 && width != 4 && width != 8)
            throw std::invalid_argument("take_uniform: out must be of 1-, 4- or 8-byte elements");
          if (!group || n % group || out.shape(0) != k || out.shape(1) * group != n)
            throw std::invalid_argument("take_uniform: out must be (len(regs), len(slots) / group)");
          BufferList in(regs, width, max_slot(slots.data(), n, "take_uniform"), false, "take_uniform");
          std::vector<const char*> ptrs = in.pointers<const char>();
          char* o = static_cast<char*>(out.data());
          nb::gil_scoped_release unlocked;
          switch (width) {
            case 1: return take_uniform<uint8_t>(ptrs, slots.data(), n, group, o);
            case 4: return take_uniform<uint32_t>(ptrs, slots.data(), n, group, o);
            default: return take_uniform<uint64_t>(ptrs, slots.data(), n, group, o);
          }
        },
        nb::arg("regs"), nb::arg("slots"), nb::arg("group"), nb::arg("out"),
        "out[j, w] = regs[j][slots[w * group]]; returns whether every thread of each group of "
        "``group`` slots holds that value in every register (a warpgroup's uniform operands: "
        "ops.wgmma_chain)");
  m.def("rows_to_regs",
        [](nb::ndarray<nb::ro, nb::ndim<2>, nb::c_contig, nb::device::cpu> rows,
           nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> slots,
           nb::list regs) {
          size_t k = rows.shape(0), n = rows.shape(1), width = rows.dtype().bits / 8;
          if (width != 1 && width != 4 && width != 8)
            throw std::invalid_argument("rows_to_regs: rows must be of 1-, 4- or 8-byte elements");
          if (slots.shape(0) != n || nb::len(regs) != k)
            throw std::invalid_argument("rows_to_regs: rows must be (len(regs), len(slots))");
          BufferList out(regs, width, max_slot(slots.data(), n, "rows_to_regs"), true, "rows_to_regs");
          std::vector<char*> ptrs = out.pointers<char>();
          const char* r = static_cast<const char*>(rows.data());
          nb::gil_scoped_release unlocked;
          rows_to_regs(r, n, width, ptrs, slots.data());
        },
        nb::arg("rows"), nb::arg("slots"), nb::arg("regs"),
        "regs[j][slots[i]] = rows[j, i], in place: a block of registers' new values written at "
        "the slots of the group (scheduler.register_blocks)");
}
