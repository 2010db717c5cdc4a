// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// corpus: sm80_G: -arch=sm_80 -G
// corpus: sm80_lineinfo: -arch=sm_80 -lineinfo
// Elementwise add: the smallest kernel, also built with -G (DWARF sections) and -lineinfo.
__global__ void vector_add(float *__restrict__ out, const float *__restrict__ a,
                           const float *__restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
