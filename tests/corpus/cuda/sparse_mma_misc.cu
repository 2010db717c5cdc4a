// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Rarer warp-level matrix instructions: mma.sp and mma.sp::ordered_metadata (2:4 sparsity),
// movmatrix, m8n8k4 f64 mma, b1 xor-popc mma, and ldmatrix .x1; plus cvt packing forms.
#include <cstdint>
__global__ void sparse(const uint32_t *a, const uint32_t *b, uint32_t meta, float *c, double *dd, uint32_t *bits) {
  int l = threadIdx.x;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(meta));
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6, %7}, {%0, %1, %2, %3}, %8, 0x0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[12]), "r"(a[13]), "r"(b[6]), "r"(b[7]), "r"(meta));
  c[l] = d0 + d1 + d2 + d3;
  uint32_t m;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(m) : "r"(a[l]));
  double x0 = 0, x1 = 0;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(x0), "+d"(x1) : "d"(dd[l]), "d"(dd[l + 32]));
  dd[l] = x0 + x1;
  int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
  asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(b[4]), "r"(b[5]));
  __shared__ __align__(16) uint16_t tile[64];
  tile[l] = (uint16_t)l;
  __syncwarp();
  uint32_t r, h2, t32;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"((uint32_t)__cvta_generic_to_shared(&tile[(l % 8) * 8])));
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h2) : "f"(d0), "f"(d1));
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t32) : "f"(d2));
  bits[l] = m ^ r ^ h2 ^ t32 ^ i0 ^ i1 ^ i2 ^ i3;
}
