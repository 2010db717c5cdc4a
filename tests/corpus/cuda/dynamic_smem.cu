// corpus: sm80: -arch=sm_80
// corpus: sm100a: -arch=sm_100a
// Dynamic shared memory (extern __shared__ -> .extern .shared ... []), several views of it,
// 128-bit vector loads and stores, %dynamic_smem_size, and __launch_bounds__ with min blocks.
__global__ void __launch_bounds__(256, 2) dyn(const float4 *in, float4 *out, int n) {
  extern __shared__ __align__(16) unsigned char smem[];
  float4 *f4 = reinterpret_cast<float4 *>(smem);
  int *counts = reinterpret_cast<int *>(smem + blockDim.x * sizeof(float4));
  int t = threadIdx.x;
  f4[t] = in[blockIdx.x * blockDim.x + t];
  counts[t] = 0;
  __syncthreads();
  float4 v = f4[(t + 1) % blockDim.x];
  atomicAdd(&counts[(int)v.x & 255], 1);
  unsigned dsz;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
  __syncthreads();
  v.w += counts[t] + dsz;
  out[blockIdx.x * blockDim.x + t] = v;
}
