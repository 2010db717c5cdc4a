// corpus: sm90a: -arch=sm_90a
// corpus: sm90a_G: -arch=sm_90a -G
// TMA: a CUtensorMap kernel parameter, mbarrier init / arrive.expect_tx, a 2-D
// cp.async.bulk.tensor load and a try_wait.parity spin loop, then a prefetch of the next tile.
#include <cuda.h>
#include <cstdint>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t phase) {
  asm volatile(
      "{\n.reg .pred P1;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE_%=;\n"
      "bra WAIT_%=;\n"
      "DONE_%=:\n}\n" :: "r"(bar), "r"(phase));
}
__global__ void tma_load(const __grid_constant__ CUtensorMap tmap, float *out, int tiles) {
  __shared__ __align__(128) float tile[64 * 32];
  __shared__ __align__(8) uint64_t bar;
  uint32_t sbar = (uint32_t)__cvta_generic_to_shared(&bar);
  uint32_t stile = (uint32_t)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sbar), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  float acc = 0.f;
  for (int t = 0; t < tiles; ++t) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sbar), "r"(64 * 32 * 4));
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
          :: "r"(stile), "l"(&tmap), "r"(t * 32), "r"(blockIdx.x * 64), "r"(sbar) : "memory");
      if (t + 1 < tiles)
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];"
                     :: "l"(&tmap), "r"((t + 1) * 32), "r"(blockIdx.x * 64));
    }
    mbar_wait(sbar, t & 1);
    acc += tile[threadIdx.x];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(sbar));
}
