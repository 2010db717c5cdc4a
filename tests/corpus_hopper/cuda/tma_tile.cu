// corpus: sm90a: -arch=sm_90a
// TMA tile load and store through an mbarrier with expect_tx. Host-built tensor maps are passed
// by value as `const __grid_constant__ CUtensorMap` params (a 128-byte .param, 64-aligned).
//
// X and Y are fp32 [40 rows, 48 cols] row-major; both maps have box 32 cols x 16 rows and 128B
// swizzle (the box's inner extent is 128 bytes). Block (bx, by) handles the tile at column 32 bx,
// row 16 by; with grid (2, 3) the last tile column and row stick out of the tensor, so the load
// fills them with zeros and the store clips them. Each block:
//   1. thread 0: mbarrier.init, arrive.expect_tx(2048), cp.async.bulk.tensor.2d load;
//   2. every thread waits on phase 0 (try_wait.parity), copies the raw shared-memory image
//      (swizzled, zero-filled) to raw[tile] and writes 2 x + 1 back in place;
//   3. fence.proxy.async, __syncthreads, thread 0: TMA store, commit_group, wait_group.read 0.
// So Y = 2 X + 1 everywhere, and raw holds each tile as the 128B swizzle laid it out.
//
// Two entries share the body: `tma_tile` takes the maps by value (`__grid_constant__`: the TMA
// reads them through the generic address of the .param), `tma_tile_gmem` takes pointers to maps
// the host copied into global memory (64-byte aligned); its load map asks for NaN out-of-bounds
// fill (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), so raw holds NaN where the box sticks out.
#include <cstdint>
#include <cuda.h>

#define BOX_COLS 32
#define BOX_ROWS 16
#define TILE_BYTES (BOX_COLS * BOX_ROWS * 4)

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}

__device__ __forceinline__ void tile_body(const CUtensorMap *in_map, const CUtensorMap *out_map,
                                          float *raw) {
  __shared__ __align__(1024) float tile[BOX_ROWS * BOX_COLS];
  __shared__ __align__(8) uint64_t bar;
  const int c0 = BOX_COLS * blockIdx.x, c1 = BOX_ROWS * blockIdx.y;   // innermost coordinate first
  const uint32_t sbar = smem_u32(&bar), stile = smem_u32(tile);
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"(in_map) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // the init, visible to TMA
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(sbar), "r"(TILE_BYTES) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(stile), "l"(in_map), "r"(c0), "r"(c1), "r"(sbar) : "memory");
  }
  wait_phase(sbar, 0);
  const int t = blockIdx.y * gridDim.x + blockIdx.x;
  for (int i = threadIdx.x; i < BOX_ROWS * BOX_COLS; i += blockDim.x) {
    raw[t * BOX_ROWS * BOX_COLS + i] = tile[i];
    tile[i] = 2.f * tile[i] + 1.f;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // generic writes -> TMA store
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(out_map), "r"(c0), "r"(c1), "r"(stile) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(sbar) : "memory");
  }
}

extern "C" __global__ void __launch_bounds__(128)
tma_tile(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
         float *raw) {
  tile_body(&in_map, &out_map, raw);
}

extern "C" __global__ void __launch_bounds__(128)
tma_tile_gmem(const CUtensorMap *in_map, const CUtensorMap *out_map, float *raw) {
  tile_body(in_map, out_map, raw);
}
