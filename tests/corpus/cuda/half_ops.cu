// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Packed half/bfloat16 arithmetic (f16x2, bf16x2), conversions and fp8 on sm_90.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#if __CUDA_ARCH__ >= 890
#include <cuda_fp8.h>
#endif
__global__ void halfs(const __half2 *a, const __half2 *b, __half2 *c, const __nv_bfloat162 *p,
                      __nv_bfloat162 *q, float *f, unsigned char *f8) {
  int t = threadIdx.x;
  __half2 x = a[t], y = b[t];
  __half2 z = __hfma2(x, y, __hadd2(x, y));
  z = __hmul2(z, __hsub2(x, y));
  z = __hmax2(z, __hneg2(x));
  c[t] = z;
  __nv_bfloat162 u = p[t];
  q[t] = __hfma2(u, u, __float2bfloat162_rn(1.0f));
  f[t] = __half2float(__low2half(z)) + __bfloat162float(__high2bfloat16(u)) + __half2float(hexp(__low2half(x)));
#if __CUDA_ARCH__ >= 890
  __nv_fp8_e4m3 e(f[t]);
  __nv_fp8_e5m2 g(f[t] * 2.f);
  f8[t] = *(unsigned char *)&e ^ *(unsigned char *)&g;
#endif
}
