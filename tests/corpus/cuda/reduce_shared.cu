// corpus: sm80: -arch=sm_80
// corpus: sm80_O0: -arch=sm_80 -Xptxas -O0 -O0
// Classic shared-memory tree reduction with __syncthreads and a templated block size.
template <int BLOCK>
__global__ void tree_reduce(const double *in, double *out, int n) {
  __shared__ double s[BLOCK];
  int t = threadIdx.x;
  int i = blockIdx.x * BLOCK * 2 + t;
  double v = 0;
  if (i < n) v = in[i];
  if (i + BLOCK < n) v += in[i + BLOCK];
  s[t] = v;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
template __global__ void tree_reduce<256>(const double *, double *, int);
template __global__ void tree_reduce<128>(const double *, double *, int);
