// corpus: sm90a: -arch=sm_90a
// corpus: sm90a_lineinfo: -arch=sm_90a -lineinfo
// One warpgroup: wgmma.mma_async m64n64k16 bf16 -> f32 with shared-memory descriptors
// (SS form) and with A from registers (RS form); fence / commit_group / wait_group.
#include <cstdint>
#include <cuda_bf16.h>
__device__ __forceinline__ uint64_t make_desc(const void *smem) {
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)(16 >> 4) << 16;
  d |= (uint64_t)(1024 >> 4) << 32;
  d |= (uint64_t)1 << 62;  // 128B swizzle
  return d;
}
__global__ void __launch_bounds__(128) wgmma_ss(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C) {
  __shared__ __align__(1024) __nv_bfloat16 sA[64 * 64];
  __shared__ __align__(1024) __nv_bfloat16 sB[64 * 64];
  for (int i = threadIdx.x; i < 64 * 64; i += 128) { sA[i] = A[i]; sB[i] = B[i]; }
  __syncthreads();
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint64_t da = make_desc(sA + k * 16), db = make_desc(sB + k * 16);
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(k > 0 ? 1 : 0));
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 32; ++i) C[threadIdx.x * 32 + i] = d[i];
}
__global__ void __launch_bounds__(128) wgmma_rs(const uint32_t *A, const __nv_bfloat16 *B, float *C) {
  __shared__ __align__(1024) __nv_bfloat16 sB[64 * 16];
  for (int i = threadIdx.x; i < 64 * 16; i += 128) sB[i] = B[i];
  __syncthreads();
  uint32_t a0 = A[threadIdx.x * 4], a1 = A[threadIdx.x * 4 + 1], a2 = A[threadIdx.x * 4 + 2], a3 = A[threadIdx.x * 4 + 3];
  float d[16];
  for (int i = 0; i < 16; ++i) d[i] = 0.f;
  uint64_t db = make_desc(sB);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, 1, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 16; ++i) C[threadIdx.x * 16 + i] = d[i];
}
