// corpus: sm100a: -arch=sm_100a
// corpus: sm100a_lineinfo: -arch=sm_100a -lineinfo
// A Blackwell GEMM step: TMA loads of A/B tiles, tcgen05.mma kind::f16 from shared-memory
// descriptors into tensor memory, tcgen05.commit to an mbarrier, wait, tcgen05.ld epilogue.
#include <cuda.h>
#include <cstdint>
__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t phase) {
  asm volatile("{\n.reg .pred P1;\nWAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               "@P1 bra DONE_%=;\nbra WAIT_%=;\nDONE_%=:\n}\n" :: "r"(bar), "r"(phase));
}
__device__ __forceinline__ uint64_t sdesc(uint32_t saddr) {
  return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)64 << 32) | ((uint64_t)1 << 46) | ((uint64_t)2 << 61);
}
__global__ void __launch_bounds__(128) umma(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                            float *C, int ktiles, uint32_t idesc) {
  __shared__ __align__(1024) uint8_t sa[128 * 64 * 2];
  __shared__ __align__(1024) uint8_t sb[128 * 64 * 2];
  __shared__ __align__(8) uint64_t load_bar, mma_bar;
  __shared__ uint32_t tmem;
  uint32_t lbar = (uint32_t)__cvta_generic_to_shared(&load_bar), mbar = (uint32_t)__cvta_generic_to_shared(&mma_bar);
  int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(lbar));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mbar));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  if (warp == 1) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 128;" :: "r"((uint32_t)__cvta_generic_to_shared(&tmem)));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t d_tmem = tmem;
  for (int k = 0; k < ktiles; ++k) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(lbar), "r"(2 * 128 * 64 * 2));
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"((uint32_t)__cvta_generic_to_shared(sa)), "l"(&ta), "r"(k * 64), "r"(blockIdx.y * 128), "r"(lbar) : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   :: "r"((uint32_t)__cvta_generic_to_shared(sb)), "l"(&tb), "r"(k * 64), "r"(blockIdx.x * 128), "r"(lbar) : "memory");
    }
    wait_phase(lbar, k & 1);
    asm volatile("tcgen05.fence::after_thread_sync;");
    if (threadIdx.x == 0) {
      for (int kk = 0; kk < 4; ++kk) {
        uint64_t da = sdesc((uint32_t)__cvta_generic_to_shared(sa) + kk * 32);
        uint64_t db = sdesc((uint32_t)__cvta_generic_to_shared(sb) + kk * 32);
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                     :: "r"(d_tmem), "l"(da), "l"(db), "r"(idesc), "r"(k | kk));
      }
      asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(mbar) : "memory");
    }
    wait_phase(mbar, k & 1);
  }
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t r[16];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
                 "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
               : "r"(d_tmem + ((warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  for (int i = 0; i < 16; ++i) C[(blockIdx.y * 128 + threadIdx.x) * 16 + i] = __uint_as_float(r[i]);
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  if (warp == 1) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 128;" :: "r"(d_tmem));
}
