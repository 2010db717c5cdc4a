// corpus: sm90a: -arch=sm_90a
// corpus: sm90a_rdc: -arch=sm_90a -rdc=true
// Thread-block clusters: __cluster_dims__ (.reqnctapercluster), cluster special registers,
// barrier.cluster arrive/wait, mapa + ld/st.shared::cluster (distributed shared memory)
// through cooperative_groups and through inline asm.
#include <cooperative_groups.h>
#include <cstdint>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) cluster_exchange(int *out) {
  __shared__ int mine[128];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  mine[threadIdx.x] = rank * 1000 + threadIdx.x;
  cluster.sync();
  int *peer = cluster.map_shared_rank(mine, (rank + 1) % cluster.num_blocks());
  int v = peer[threadIdx.x];
  cluster.sync();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v + cluster.dim_blocks().x;
}
__global__ void cluster_asm(unsigned *out) {
  __shared__ unsigned slot;
  unsigned rank, n, cid, ctaid;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(ctaid));
  if (threadIdx.x == 0) slot = rank;
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  uint32_t local = (uint32_t)__cvta_generic_to_shared(&slot), remote, got, who;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"((rank + 1) % n));
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(got) : "r"(remote));
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(who) : "r"(remote));
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;" : "=r"(got) : "r"(remote));
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait;" ::: "memory");
  out[blockIdx.x] = got + who + cid + ctaid;
}
