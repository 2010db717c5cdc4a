// corpus: sm80_rdc: -arch=sm_80 -rdc=true
// corpus: sm90a_rdc: -arch=sm_90a -rdc=true
// Cooperative groups: grid-wide sync (calls into the cudadevrt helpers), tiled partitions,
// coalesced groups, and an extern __device__ function defined in another translation unit.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern __device__ float external_scale(float);
__global__ void grid_norm(float *x, float *partial, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += x[i] * x[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(&partial[0], v);
  grid.sync();
  float norm = sqrtf(partial[0]);
  for (int i = grid.thread_rank(); i < n; i += grid.size()) x[i] = external_scale(x[i] / norm);
  cg::coalesced_group active = cg::coalesced_threads();
  if (active.thread_rank() == 0) partial[1 + blockIdx.x] = active.size();
}
