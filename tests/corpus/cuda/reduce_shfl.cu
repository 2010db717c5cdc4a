// corpus: sm80: -arch=sm_80
// corpus: sm90a_lineinfo: -arch=sm_90a -lineinfo
// Block reduction: warp shuffles, a shared array of warp sums, an atomic to finish.
__inline__ __device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__global__ void reduce_sum(const float *__restrict__ in, float *out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  v = warp_sum(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}
__global__ void reduce_max_xor(const int *in, int *out) {
  int v = in[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  int u = __shfl_up_sync(0xffffffffu, v, 1);
  int w = __shfl_sync(0xffffffffu, v, 0);
  if ((threadIdx.x & 31) == 0) atomicMax(out, v + u - w);
}
