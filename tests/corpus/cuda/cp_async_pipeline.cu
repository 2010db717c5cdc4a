// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Double-buffered global->shared copies with cp.async (CUDA's pipeline primitives + inline asm).
#include <cuda_pipeline.h>
#include <cstdint>
__global__ void cp_async_sum(const float4 *in, float *out, int tiles) {
  __shared__ __align__(16) float4 buf[2][128];
  int t = threadIdx.x;
  float acc = 0.f;
  __pipeline_memcpy_async(&buf[0][t], &in[t], sizeof(float4));
  __pipeline_commit();
  for (int k = 1; k <= tiles; ++k) {
    if (k < tiles) __pipeline_memcpy_async(&buf[k & 1][t], &in[k * 128 + t], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    float4 v = buf[(k - 1) & 1][(t + 1) % 128];
    acc += v.x + v.y + v.z + v.w;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = acc;
}
__global__ void cp_async_asm(const int *src, int *dst) {
  __shared__ __align__(16) int s[256];
  uint32_t sa = (uint32_t)__cvta_generic_to_shared(&s[threadIdx.x * 4]);
  const int *g = src + threadIdx.x * 4;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa), "l"(g));
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 4, 2;" :: "r"(sa), "l"(g + 1));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  dst[threadIdx.x] = s[(threadIdx.x * 5) % 256];
}
