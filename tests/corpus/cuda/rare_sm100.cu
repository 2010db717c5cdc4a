// corpus: sm100a: -arch=sm_100a
// Blackwell-only rarities: st.bulk, mbarrier.complete_tx, cvt.pack and tcgen05.mma.ws.
#include <cstdint>
__global__ void rare100(const uint64_t *descs, uint32_t idesc, uint32_t *out) {
  __shared__ __align__(16) uint8_t buf[256];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t tmem;
  uint32_t sbuf = (uint32_t)__cvta_generic_to_shared(buf), sbar = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("st.bulk.weak.shared::cta [%0], 256, 0;" :: "r"(sbuf));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar));
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(sbar));
  }
  if (threadIdx.x < 32)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"((uint32_t)__cvta_generic_to_shared(&tmem)));
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  if (threadIdx.x == 0)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(tmem), "l"(descs[0]), "l"(descs[1]), "r"(idesc), "r"(1));
  uint32_t packed;
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(packed) : "r"((int)threadIdx.x), "r"(-3), "r"(0));
  out[threadIdx.x] = packed;
  __syncthreads();
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(tmem));
  }
}
