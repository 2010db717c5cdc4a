// corpus: sm90a: -arch=sm_90a
// Non-tensor bulk copies: cp.async.bulk global->shared (mbarrier completion), shared->global
// (bulk_group), a bulk prefetch to L2 and cp.reduce.async.bulk; test_wait polling.
#include <cstdint>
__global__ void bulk(const float4 *src, float4 *dst, unsigned *done) {
  __shared__ __align__(128) float4 buf[256];
  __shared__ __align__(8) uint64_t bar;
  uint32_t sb = (uint32_t)__cvta_generic_to_shared(&bar), sbuf = (uint32_t)__cvta_generic_to_shared(buf);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sb));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], 4096;" :: "l"(src + 256));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" :: "r"(sb));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];"
                 :: "r"(sbuf), "l"(src), "r"(sb) : "memory");
  }
  __syncthreads();
  uint32_t ok = 0;
  while (!ok) {
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(sb));
  }
  buf[threadIdx.x].x += 1.f;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 4096;" :: "l"(dst), "r"(sbuf) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], 16;" :: "l"(done), "r"(sbuf) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;");
  }
}
