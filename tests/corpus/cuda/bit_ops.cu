// corpus: sm80: -arch=sm_80
// corpus: sm100a: -arch=sm_100a
// Bit manipulation: popc, clz, brev, ffs, byte_perm (prmt), funnel shifts (shf), bfe/bfi
// and lop3 via inline asm, 64-bit multiplies (mul.hi, mul.wide), dp4a, sad.
#include <cstdint>
__global__ void bits(const uint32_t *a, const uint64_t *b, uint32_t *out, uint64_t *out64) {
  int t = threadIdx.x;
  uint32_t x = a[t], y = a[t + 1];
  uint32_t r = __popc(x) + __clz(y) + __brev(x) + __ffs(y) + __byte_perm(x, y, 0x5140)
             + __funnelshift_l(x, y, t) + __funnelshift_r(x, y, 7) + __umulhi(x, y) + __sad(x, y, 3);
  uint32_t e, f, g;
  asm("bfe.u32 %0, %1, 4, 8;" : "=r"(e) : "r"(x));
  asm("bfi.b32 %0, %1, %2, 8, 4;" : "=r"(f) : "r"(x), "r"(y));
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(g) : "r"(x), "r"(y), "r"(r));
  out[t] = r ^ e ^ f ^ g ^ (uint32_t)__dp4a((int)x, (int)y, t);
  uint64_t p = b[t];
  out64[t] = __popcll(p) + __clzll(p) + __brevll(p) + __umul64hi(p, p) + (uint64_t)x * y + (p >> (x & 63)) + (p << 3);
}
