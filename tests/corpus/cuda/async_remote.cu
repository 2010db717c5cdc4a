// corpus: sm90a: -arch=sm_90a
// Asynchronous remote writes inside a cluster: st.async and red.async with mbarrier
// complete_tx, remote mbarrier arrive (.release.cluster), mbarrier.expect_tx.
#include <cstdint>
__global__ void __cluster_dims__(2, 1, 1) remote(unsigned *out) {
  __shared__ __align__(8) uint64_t bar;
  __shared__ unsigned box[4];
  uint32_t rank, sbar = (uint32_t)__cvta_generic_to_shared(&bar), sbox = (uint32_t)__cvta_generic_to_shared(box);
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar));
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(sbar));
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  uint32_t rbar, rbox, peer = rank ^ 1;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(sbar), "r"(peer));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbox) : "r"(sbox), "r"(peer));
  if (threadIdx.x == 0) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" :: "r"(rbox), "r"(rank + 7), "r"(rbar));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.u32 [%0], {%1, %2}, [%3];" :: "r"(rbox + 4), "r"(1u), "r"(2u), "r"(rbar));
    asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];" :: "r"(rbox + 12), "r"(3u), "r"(rbar));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(rbar));
  }
  asm volatile("{\n.reg .pred p;\nLW_%=:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n@!p bra LW_%=;\n}\n" :: "r"(sbar));
  out[blockIdx.x * 4 + (threadIdx.x & 3)] = box[threadIdx.x & 3];
}
