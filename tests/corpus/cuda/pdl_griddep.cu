// corpus: sm90a: -arch=sm_90a
// Programmatic dependent launch (griddepcontrol.wait / launch_dependents) and the
// tensormap.replace / cp_fenceproxy instructions for editing TMA descriptors on device.
#include <cuda.h>
#include <cstdint>
__global__ void pdl(float *x, int n) {
  cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
  cudaTriggerProgrammaticLaunchCompletion();
}
__global__ void edit_tmap(CUtensorMap *gmaps, const __grid_constant__ CUtensorMap proto, float *new_base) {
  __shared__ __align__(128) CUtensorMap smap;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) smap = proto;
    __syncwarp();
    uint32_t s = (uint32_t)__cvta_generic_to_shared(&smap);
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" :: "r"(s), "l"(new_base));
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(256));
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" :: "r"(s), "l"(1024ull));
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                 :: "l"(gmaps + blockIdx.x), "r"(s) : "memory");
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(gmaps + blockIdx.x) : "memory");
  }
}
