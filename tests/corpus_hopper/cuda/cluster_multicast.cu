// corpus: sm90a: -arch=sm_90a
// A cluster of 2 CTAs: multicast TMA and distributed shared memory.
//
// X is fp32 [32 C rows, 32 cols] for C clusters (grid C x 2 CTAs, cluster (2, 1, 1), 128 threads).
// Cluster c owns rows 32 c .. 32 c + 31. Its CTA of rank r loads the 16 rows 32 c + 16 r with
// one cp.async.bulk.tensor ... .multicast::cluster (ctaMask 0b11) into BOTH CTAs' `tile`, at
// byte offset 2048 r; each CTA's mbarrier expects the whole 4096 bytes (one arrive.expect_tx of
// its own; the two halves complete_tx on it). The map has no swizzle, box 32 cols x 16 rows.
// Then:
//   tile_out[2 c + r] = tile                          (the full 32 x 32 block, both CTAs)
//   each CTA stores tile * (r + 1) into its peer's `recv` (mapa + st.shared::cluster),
//   barrier.cluster arrive.release / wait.acquire,
//   peer_out[2 c + r] = recv + peer's tile read back with ld.shared::cluster
//                     = X block * (peer + 1) + X block = X block * ((r ^ 1) + 2),
//   and a last cluster barrier so no CTA exits while its peer still reads its shared memory.
#include <cstdint>
#include <cuda.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
cluster_multicast(const __grid_constant__ CUtensorMap map, float *tile_out, float *peer_out) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(16) float recv[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  uint32_t rank, cluster;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
  const uint32_t sbar = smem_u32(&bar), stile = smem_u32(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();                  // both barriers exist before either CTA's multicast lands
  if (threadIdx.x == 0) {
    const uint16_t mask = 0x3;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" :: "r"(sbar) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(stile + 2048 * rank), "l"(&map), "r"(0), "r"(32 * cluster + 16 * rank),
                    "r"(sbar), "h"(mask)
                 : "memory");
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(sbar) : "memory");
  }
  const uint32_t slot = 2 * cluster + rank, peer = rank ^ 1;
  uint32_t peer_recv, peer_tile;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer_recv) : "r"(smem_u32(recv)), "r"(peer));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer_tile) : "r"(stile), "r"(peer));
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) {
    tile_out[slot * 1024 + i] = tile[i];
    asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(peer_recv + 4 * i), "f"(tile[i] * (rank + 1))
                 : "memory");
  }
  cluster_sync();
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) {
    float theirs;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(theirs) : "r"(peer_tile + 4 * i) : "memory");
    peer_out[slot * 1024 + i] = recv[i] + theirs;
  }
  cluster_sync();
}
