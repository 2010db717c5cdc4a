// corpus: sm100a: -arch=sm_100a
// More tcgen05: A operand from tensor memory, tf32 / f8f6f4 / i8 kinds, disable-output-lane
// masks, tcgen05.cp from shared memory, tcgen05.shift, 2-CTA (cta_group::2) commit with a
// multicast mask, block-scaled mxf8f6f4 with scale factors in tensor memory.
#include <cstdint>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128) variants(const uint64_t *descs, uint32_t idesc, uint32_t *out) {
  __shared__ uint32_t tmem;
  __shared__ __align__(8) uint64_t bar;
  uint32_t sbar = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x < 32)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 256;" :: "r"((uint32_t)__cvta_generic_to_shared(&tmem)));
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t t = tmem;
  uint64_t da = descs[0], db = descs[1];
  if (threadIdx.x == 0) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::tf32 [%0], [%1], %2, %3, p;\n}\n"
                 :: "r"(t), "r"(t + 64), "l"(db), "r"(idesc), "r"(1));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(t), "l"(da), "l"(db), "r"(idesc), "r"(0));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %8, 0;\ntcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, {%4, %5, %6, %7}, p;\n}\n"
                 :: "r"(t), "l"(da), "l"(db), "r"(idesc), "r"(0), "r"(0), "r"(0), "r"(0xffffffffu), "r"(1));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::i8 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(t + 128), "l"(da), "l"(db), "r"(idesc), "r"(1));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\ntcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%4], [%5], p;\n}\n"
                 :: "r"(t), "l"(da), "l"(db), "r"(idesc), "r"(t + 192), "r"(t + 200), "r"(1));
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: "r"(t + 192), "l"(descs[2]));
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(t + 200), "l"(descs[3]));
    asm volatile("tcgen05.shift.cta_group::1.down [%0];" :: "r"(t));
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(sbar));
  }
  uint32_t r0, r1;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(t));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  out[threadIdx.x] = r0 ^ r1;
  __syncthreads();
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 256;" :: "r"(t));
  }
}

// The CTA-pair (cta_group::2) forms live in their own kernel: a function may not mix groups.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128) pair_mma(const uint64_t *descs, uint32_t idesc) {
  __shared__ uint32_t tmem;
  __shared__ __align__(8) uint64_t bar;
  uint32_t sbar = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x < 32)
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 128;" :: "r"((uint32_t)__cvta_generic_to_shared(&tmem)));
  asm volatile("tcgen05.fence::before_thread_sync;");
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t t = tmem;
  if (threadIdx.x == 0) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 :: "r"(t), "l"(descs[0]), "l"(descs[1]), "r"(idesc), "r"(1));
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" :: "r"(sbar), "h"((unsigned short)3));
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;");
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, 128;" :: "r"(t));
  }
}
