// corpus: sm80: -arch=sm_80
// corpus: sm100a: -arch=sm_100a
// Grid-stride saxpy with a vectorized float4 body and a scalar tail.
__global__ void saxpy(float a, const float4 *__restrict__ x, float4 *__restrict__ y, int n4) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 xv = x[i], yv = y[i];
    yv.x = a * xv.x + yv.x; yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z; yv.w = a * xv.w + yv.w;
    y[i] = yv;
  }
}
__global__ void saxpy_tail(float a, const float *x, float *y, int start, int n) {
  int i = start + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}
