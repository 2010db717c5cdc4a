// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Double precision and 64-bit integer arithmetic: carries (add.cc/addc), mul.hi/mul.wide,
// 64-bit division and remainder (calls into the div/rem helpers), min/max, fma.rn.f64,
// conversions between all widths, testp and copysign.
__global__ void wide(const double *a, const long long *b, double *c, long long *d, unsigned long long *e) {
  int t = threadIdx.x;
  double x = a[t], y = a[t + 1];
  c[t] = fma(x, y, -x) / (y + 1.0) + fmax(x, y) + copysign(x, y) + (isnan(x) ? 1.0 : 0.0) + (isinf(y) ? 2.0 : 0.0)
         + (double)(float)x + (double)b[t] + rsqrt(fabs(y) + 1.0) + __drcp_rn(x + 2.0);
  long long p = b[t], q = b[t + 1] | 1;
  d[t] = p / q + p % q + __mul64hi(p, q) + llabs(p) + min(p, q) + (p >> 3) + (long long)x;
  unsigned long long u = (unsigned long long)p, v = (unsigned long long)q;
  unsigned long long lo, hi;
  asm("add.cc.u64 %0, %2, %3;\naddc.u64 %1, 0, 0;" : "=l"(lo), "=l"(hi) : "l"(u), "l"(v));
  unsigned int m24;
  asm("mul24.lo.u32 %0, %1, %2;" : "=r"(m24) : "r"((unsigned)u), "r"((unsigned)v));
  e[t] = u / v + u % v + lo + hi + m24 + (unsigned long long)(short)p + (unsigned char)q;
}
