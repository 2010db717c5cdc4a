// corpus: sm80: -arch=sm_80
// corpus: sm80_fast: -arch=sm_80 -use_fast_math
// corpus: sm90a: -arch=sm_90a
// Transcendentals, division and square roots (IEEE and fast-math variants), conversions.
__global__ void math(const float *x, float *y, const double *dx, double *dy, int *iy) {
  int t = threadIdx.x;
  float v = x[t];
  y[t] = sinf(v) + cosf(v) * expf(-v) + logf(fabsf(v) + 1.f) + sqrtf(fabsf(v)) + rsqrtf(v * v + 1.f)
         + tanhf(v) + 1.0f / (v + 3.f) + __expf(v) + __fdividef(v, 7.f) + powf(v, 1.5f) + erff(v);
  double d = dx[t];
  dy[t] = sqrt(fabs(d)) + exp(d) + d / 3.0 + fma(d, d, 1.0) + floor(d) + ceil(d);
  iy[t] = __float2int_rn(v) + (int)truncf(v) + __float2int_rd(v) + (int)(unsigned)v + __double2int_rz(d)
          + __float_as_int(v) + (int)rintf(v) + (int)roundf(v);
}
