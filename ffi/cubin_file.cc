// Module images from disk: size and digest checks, ELF bounds (see cubin_file.h).
#include "cubin_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace jax_pyptx {
namespace {

// ---- SHA-256 (FIPS 180-4)
constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void Block(uint32_t h[8], const unsigned char* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) |
           (uint32_t{p[4 * i + 2]} << 8) | uint32_t{p[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 = k + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

// ---- ELF64 bounds
template <typename T>
T Get(const unsigned char* b, size_t off) {
  T v;
  std::memcpy(&v, b + off, sizeof(T));
  return v;
}

// [off, off + len) inside [0, size), without overflow.
bool Inside(uint64_t off, uint64_t len, size_t size) {
  return off <= size && len <= size - off;
}

bool CheckElf(const unsigned char* b, size_t size, std::string* why) {
  constexpr size_t kEhdr = 64, kShdr = 64, kPhdr = 56;
  if (size < kEhdr) {
    *why = "a " + std::to_string(size) + "-byte ELF file is shorter than its 64-byte header";
    return false;
  }
  if (b[4] != 2 || b[5] != 1) {
    *why = "not a little-endian 64-bit ELF file";
    return false;
  }
  const uint64_t phoff = Get<uint64_t>(b, 0x20), shoff = Get<uint64_t>(b, 0x28);
  const uint16_t phentsize = Get<uint16_t>(b, 0x36), phnum = Get<uint16_t>(b, 0x38);
  const uint16_t shentsize = Get<uint16_t>(b, 0x3a), shnum = Get<uint16_t>(b, 0x3c);
  if ((phnum && phentsize != kPhdr) || (shnum && shentsize != kShdr)) {
    *why = "the ELF header gives table entry sizes " + std::to_string(phentsize) + "/" +
           std::to_string(shentsize) + " (expected 56/64)";
    return false;
  }
  const uint64_t ph_bytes = uint64_t{phnum} * kPhdr, sh_bytes = uint64_t{shnum} * kShdr;
  if ((phnum && !Inside(phoff, ph_bytes, size)) || (shnum && !Inside(shoff, sh_bytes, size))) {
    *why = "the ELF header places its tables past the end of the " + std::to_string(size) +
           "-byte file (truncated or corrupt)";
    return false;
  }
  for (uint16_t i = 0; i < shnum; ++i) {
    const unsigned char* s = b + shoff + uint64_t{i} * kShdr;
    const uint32_t type = Get<uint32_t>(s, 4);
    if (type == 8 /* SHT_NOBITS */ || type == 0 /* SHT_NULL */) continue;
    if (!Inside(Get<uint64_t>(s, 24), Get<uint64_t>(s, 32), size)) {
      *why = "ELF section " + std::to_string(i) + " lies past the end of the " +
             std::to_string(size) + "-byte file (truncated or corrupt)";
      return false;
    }
  }
  for (uint16_t i = 0; i < phnum; ++i) {
    const unsigned char* p = b + phoff + uint64_t{i} * kPhdr;
    if (!Inside(Get<uint64_t>(p, 8), Get<uint64_t>(p, 32), size)) {
      *why = "ELF segment " + std::to_string(i) + " lies past the end of the " +
             std::to_string(size) + "-byte file (truncated or corrupt)";
      return false;
    }
  }
  return true;
}

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace

std::string Sha256Hex(const void* data, size_t size) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = static_cast<const unsigned char*>(data);
  size_t n = size;
  for (; n >= 64; n -= 64, p += 64) Block(h, p);
  unsigned char tail[128] = {0};
  std::memcpy(tail, p, n);
  tail[n] = 0x80;
  const size_t tail_len = n < 56 ? 64 : 128;
  const uint64_t bits = uint64_t{size} * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  Block(h, tail);
  if (tail_len == 128) Block(h, tail + 64);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint32_t v : h) {
    for (int s = 28; s >= 0; s -= 4) out.push_back(kHex[(v >> s) & 0xf]);
  }
  return out;
}

bool CheckImage(const void* image, size_t size, std::string* why) {
  const auto* b = static_cast<const unsigned char*>(image);
  if (size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') {
    return CheckElf(b, size, why);
  }
  if (size == 0 || std::memchr(b, 0, size) == nullptr) {
    // Not ELF: the driver reads it as NUL-terminated text; the terminator must
    // be part of what was given (std::string's trailing NUL counts: callers
    // pass size() + 1).
    *why = "the image is neither ELF nor NUL-terminated text";
    return false;
  }
  return true;
}

bool ReadModuleImage(const std::string& path, std::string* image, std::string* why) {
  why->clear();
  if (!ReadAll(path, image) || image->empty()) return false;
  std::string stamp;
  if (ReadAll(path + ".sha256", &stamp)) {
    std::istringstream in(stamp);
    std::string digest;
    unsigned long long size = 0;
    if (!(in >> digest >> size)) {
      *why = "its stamp " + path + ".sha256 is unreadable";
      return false;
    }
    if (size != image->size()) {
      *why = "it holds " + std::to_string(image->size()) + " bytes, its stamp records " +
             std::to_string(size);
      return false;
    }
    if (Sha256Hex(image->data(), image->size()) != digest) {
      *why = "its SHA-256 does not match its stamp";
      return false;
    }
  }
  const bool elf = image->size() >= 4 && image->compare(0, 4, "\x7f" "ELF") == 0;
  return CheckImage(image->data(), elf ? image->size() : image->size() + 1, why);
}

}  // namespace jax_pyptx
