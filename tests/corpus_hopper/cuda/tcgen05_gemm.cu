// corpus: sm100a: -arch=sm_100a
// Blackwell tcgen05: one CTA (128 threads, 4 warps) computes
//     C[128 x 64] (f32) = A[128 x 64] @ B^T,   A [M=128, K=64], B [N=64, K=64] bf16 row-major,
// with the accumulator in tensor memory:
//   warp 0: tcgen05.alloc 64 columns (address written to shared memory), relinquish_alloc_permit;
//   all: A and B staged into shared memory in the 128B-swizzle K-major layout (generic stores),
//        fence.proxy.async, tcgen05.fence::before_thread_sync / bar.sync / after_thread_sync;
//   thread 0: four tcgen05.mma.cta_group::1.kind::f16 (M=128, N=64, K=16 each; enable-input-d
//        false for the first), then tcgen05.commit ... mbarrier::arrive::one to an mbarrier;
//   all: wait on the mbarrier's phase 0, tcgen05.fence::after_thread_sync; warp w reads TMEM
//        lanes 32 w .. 32 w + 31 (= rows of C) with tcgen05.ld.sync.aligned.32x32b.x64 (64
//        columns, one f32 each), tcgen05.wait::ld, stores its row of C;
//   warp 0: tcgen05.dealloc after a final barrier.
#include <cstdint>
#include <cuda_bf16.h>

#define M 128
#define N 64
#define K 64

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

// rows x 64 bf16 (128 bytes a row) -> 128B-swizzle K-major: chunk c of row r at chunk c ^ (r % 8)
__device__ __forceinline__ void load_swizzled(const __nv_bfloat16 *g, __nv_bfloat16 *s, int rows) {
  const uint4 *src = reinterpret_cast<const uint4 *>(g);
  uint4 *dst = reinterpret_cast<uint4 *>(s);
  for (int i = threadIdx.x; i < rows * 8; i += blockDim.x) {
    int r = i / 8, c = i % 8;
    dst[r * 8 + (c ^ (r % 8))] = src[i];
  }
}

// tcgen05 shared-memory descriptor: start >> 4 (bits 0-13), LBO >> 4 (16-29; unused by a swizzled
// K-major operand: 1), SBO >> 4 (32-45: 1024 bytes between 8-row groups), the fixed 0b001 at bits
// 46-48, base offset 0, LBO mode 0, swizzle 2 = 128B (bits 61-63).
__device__ __forceinline__ uint64_t sdesc_sw128(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
         (uint64_t)1 << 46 | (uint64_t)2 << 61;
}

// Instruction descriptor, kind::f16: D f32 (bits 4-5 = 1), A bf16 (7-9 = 1), B bf16 (10-12 = 1),
// no negation, A and B K-major (bits 15, 16 = 0), N >> 3 at bits 17-22, M >> 4 at bits 24-28.
#define IDESC ((1u << 4) | (1u << 7) | (1u << 10) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24))

extern "C" __global__ void __launch_bounds__(128)
tcgen05_gemm(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C) {
  __shared__ __align__(1024) __nv_bfloat16 As[M * K];
  __shared__ __align__(1024) __nv_bfloat16 Bs[N * K];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t tmem_slot;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t sbar = smem_u32(&bar);
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;"
                 :: "r"(smem_u32(&tmem_slot)), "r"(N) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar) : "memory");
  load_swizzled(A, As, M);
  load_swizzled(B, Bs, N);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem = tmem_slot;
  if (threadIdx.x == 0) {
    const uint32_t sa = smem_u32(As), sb = smem_u32(Bs);
    for (int k = 0; k < K / 16; ++k) {
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                   :: "r"(tmem), "l"(sdesc_sw128(sa + 32 * k)), "l"(sdesc_sw128(sb + 32 * k)),
                      "r"(IDESC), "r"(k)
                   : "memory");
    }
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(sbar) : "memory");
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(sbar) : "memory");
  }
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  uint32_t r[64];
  // TMEM address: lane in bits 16-31, column in bits 0-15; warp w may access lanes 32 w .. 32 w + 31
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x64.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, [%64];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31]), "=r"(r[32]), "=r"(r[33]), "=r"(r[34]), "=r"(r[35]), "=r"(r[36]), "=r"(r[37]), "=r"(r[38]), "=r"(r[39]), "=r"(r[40]), "=r"(r[41]), "=r"(r[42]), "=r"(r[43]), "=r"(r[44]), "=r"(r[45]), "=r"(r[46]), "=r"(r[47]), "=r"(r[48]), "=r"(r[49]), "=r"(r[50]), "=r"(r[51]), "=r"(r[52]), "=r"(r[53]), "=r"(r[54]), "=r"(r[55]), "=r"(r[56]), "=r"(r[57]), "=r"(r[58]), "=r"(r[59]), "=r"(r[60]), "=r"(r[61]), "=r"(r[62]), "=r"(r[63]) : "r"(tmem + ((uint32_t)(32 * warp) << 16)) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  const int row = 32 * warp + lane;
  for (int j = 0; j < N; ++j) C[row * N + j] = __uint_as_float(r[j]);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(tmem), "r"(N) : "memory");
  }
}
