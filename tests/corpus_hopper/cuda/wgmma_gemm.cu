// corpus: sm90a: -arch=sm_90a
// wgmma.mma_async with both operands from shared-memory descriptors (128B swizzle) and with A
// from registers. One warpgroup (128 threads, one CTA) computes
//     C[64 x 64] (f32) = A[64 x 64] @ B^T,   A [M=64, K=64] and B [N=64, K=64] bf16 row-major,
// i.e. both operands K-major, as four m64n64k16 steps along K.
#include <cstdint>
#include <cuda_bf16.h>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

// A [64 x 64] bf16 row-major global tile -> shared memory in the 128B-swizzle K-major layout:
// row r is 128 bytes at offset 128 r; its 16-byte chunk c lands at chunk c ^ (r % 8) (byte
// address bits [4:6] ^= bits [7:9] of a 1024-byte aligned tile). Generic-proxy stores.
__device__ __forceinline__ void load_swizzled(const __nv_bfloat16 *g, __nv_bfloat16 *s, int rows) {
  const uint4 *src = reinterpret_cast<const uint4 *>(g);
  uint4 *dst = reinterpret_cast<uint4 *>(s);
  for (int i = threadIdx.x; i < rows * 8; i += blockDim.x) {
    int r = i / 8, c = i % 8;
    dst[r * 8 + (c ^ (r % 8))] = src[i];
  }
}

// wgmma matrix descriptor: start address >> 4 (bits 0-13), LBO >> 4 (bits 16-29; unused by a
// swizzled K-major operand, 1 by convention), SBO >> 4 (bits 32-45: 1024 bytes between groups
// of 8 rows), base offset 0 (bits 49-51; the tile is 1024-aligned), swizzle 1 = 128B (62-63).
__device__ __forceinline__ uint64_t desc_sw128(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
         (uint64_t)1 << 62;
}

// D (m64n64, f32): thread t of warp w holds d[i] at row 16 w + t / 4 + 8 ((i / 2) % 2),
// column 8 (i / 4) + 2 (t % 4) + i % 2.
__device__ __forceinline__ void store_d(const float (&d)[32], float *C) {
  int w = threadIdx.x / 32, t = threadIdx.x % 32;
  for (int i = 0; i < 32; ++i) {
    int row = 16 * w + t / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
    C[row * 64 + col] = d[i];
  }
}

__device__ __forceinline__ void wgmma_ss(float (&d)[32], uint64_t da, uint64_t db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t db,
                                         int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}

// Both operands from shared memory: A and B staged with 128B swizzle, then
// fence.proxy.async (generic stores -> async proxy), wgmma.fence, 4 x mma_async, commit, wait.
extern "C" __global__ void __launch_bounds__(128)
wgmma_ss_sw128(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C) {
  __shared__ __align__(1024) __nv_bfloat16 As[64 * 64];
  __shared__ __align__(1024) __nv_bfloat16 Bs[64 * 64];
  load_swizzled(A, As, 64);
  load_swizzled(B, Bs, 64);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  uint32_t sa = smem_u32(As), sb = smem_u32(Bs);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < 4; ++k)      // K step of 16 bf16 = 32 bytes inside the 128-byte swizzle row
    wgmma_ss(d, desc_sw128(sa + 32 * k), desc_sw128(sb + 32 * k), k);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  store_d(d, C);
}

// A from registers (the m64k16 A fragment: thread t of warp w holds rows 16 w + t / 4 (+8),
// columns 2 (t % 4) (+1, +8, +9) of each K step), B from a 128B-swizzled descriptor.
extern "C" __global__ void __launch_bounds__(128)
wgmma_rs_sw128(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C) {
  __shared__ __align__(1024) __nv_bfloat16 Bs[64 * 64];
  load_swizzled(B, Bs, 64);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  int w = threadIdx.x / 32, t = threadIdx.x % 32;
  int r0 = 16 * w + t / 4, c0 = 2 * (t % 4);
  const uint32_t *A32 = reinterpret_cast<const uint32_t *>(A);     // pairs of bf16
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  uint32_t sb = smem_u32(Bs);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < 4; ++k) {
    int col = 16 * k + c0;
    uint32_t a[4] = {A32[(r0 * 64 + col) / 2], A32[((r0 + 8) * 64 + col) / 2],
                     A32[(r0 * 64 + col + 8) / 2], A32[((r0 + 8) * 64 + col + 8) / 2]};
    wgmma_rs(d, a, desc_sw128(sb + 32 * k), k);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  store_d(d, C);
}
