// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// One warp computes a 16x8 tile with ldmatrix + mma.sync m16n8k16 (bf16 in, f32 accumulate).
#include <cuda_bf16.h>
#include <cstdint>
__global__ void mma_tile(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C, int K) {
  __shared__ __align__(16) __nv_bfloat16 sA[16 * 16];
  __shared__ __align__(16) __nv_bfloat16 sB[8 * 16];
  int lane = threadIdx.x;
  float acc[4] = {0, 0, 0, 0};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = lane; i < 256; i += 32) sA[i] = A[(i / 16) * K + k0 + i % 16];
    for (int i = lane; i < 128; i += 32) sB[i] = B[(i / 16) * K + k0 + i % 16];
    __syncwarp();
    uint32_t a[4], b[2];
    uint32_t pa = (uint32_t)__cvta_generic_to_shared(&sA[(lane % 16) * 16 + (lane / 16) * 8]);
    uint32_t pb = (uint32_t)__cvta_generic_to_shared(&sB[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    __syncwarp();
  }
  int row = lane / 4, col = (lane % 4) * 2;
  C[row * 8 + col] = acc[0]; C[row * 8 + col + 1] = acc[1];
  C[(row + 8) * 8 + col] = acc[2]; C[(row + 8) * 8 + col + 1] = acc[3];
}
// f16 mma with f16 accumulators and an m16n8k8 tf32 variant
__global__ void mma_variants(const uint32_t *a, const uint32_t *b, uint32_t *c, float *d) {
  uint32_t c0 = 0, c1 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"
               : "+r"(c0), "+r"(c1) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  float f0 = 0, f1 = 0, f2 = 0, f3 = 0;
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(f0), "+f"(f1), "+f"(f2), "+f"(f3) : "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(b[2]), "r"(b[3]));
  int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a[8]), "r"(a[9]), "r"(a[10]), "r"(a[11]), "r"(b[4]), "r"(b[5]));
  c[threadIdx.x] = c0 ^ c1 ^ i0 ^ i1 ^ i2 ^ i3;
  d[threadIdx.x] = f0 + f1 + f2 + f3;
}
