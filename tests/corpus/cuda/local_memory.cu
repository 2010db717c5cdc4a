// corpus: sm80: -arch=sm_80
// corpus: sm80_G: -arch=sm_80 -G
// Dynamically indexed per-thread arrays (local memory depot, %SP/%SPL), alloca, a struct
// passed by value, and register spills forced by a large live set.
#include <cstdint>
struct Big { float v[24]; int tag; };
__device__ __noinline__ float consume(Big b, int k) { return b.v[k % 24] * b.tag; }
__global__ void local_mem(const int *idx, float *out, int n) {
  float hist[64];
  for (int i = 0; i < 64; ++i) hist[i] = 0.f;
  for (int i = 0; i < n; ++i) hist[idx[i] & 63] += 1.f;
  Big b;
  for (int i = 0; i < 24; ++i) b.v[i] = hist[i * 2];
  b.tag = n;
  char *scratch = (char *)alloca(n & 255);
  for (int i = 0; i < (n & 255); ++i) scratch[i] = (char)i;
  out[threadIdx.x] = hist[threadIdx.x & 63] + consume(b, threadIdx.x) + scratch[(threadIdx.x * 7) % ((n & 255) | 1)];
}
