// corpus: sm90a: -arch=sm_90a
// TMA stores and reductions: cp.async.bulk.tensor (shared -> global, 1-D to 5-D),
// cp.reduce.async.bulk.tensor, bulk_group commit/wait, tensormap prefetch and fences.
#include <cuda.h>
#include <cstdint>
__global__ void tma_store(const __grid_constant__ CUtensorMap out1, const __grid_constant__ CUtensorMap out3,
                          const __grid_constant__ CUtensorMap out5, const float *src) {
  __shared__ __align__(128) float tile[32 * 32];
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) tile[i] = src[i] * 2.f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint32_t s = (uint32_t)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"(&out3));
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];"
                 :: "l"(&out1), "r"(blockIdx.x * 32), "r"(s) : "memory");
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
                 :: "l"(&out3), "r"(0), "r"(blockIdx.x), "r"(1), "r"(s) : "memory");
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
                 :: "l"(&out5), "r"(0), "r"(0), "r"(blockIdx.x), "r"(0), "r"(0), "r"(s) : "memory");
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(&out3), "r"(0), "r"(blockIdx.x), "r"(s) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
