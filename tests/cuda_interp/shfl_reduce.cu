// Block sum reduction: warp-level __shfl_down_sync tree, warp partials in shared memory,
// the first warp reduces the partials; also exercises __shfl_sync (broadcast), __ballot_sync
// and __shfl_xor_sync. out[blockIdx.x] = sum of the block's slice; flags[blockIdx.x] = ballot
// of (x > 0) in warp 0 of the block.
extern "C" __global__ void shfl_reduce(const float* __restrict__ x, float* __restrict__ out,
                                       unsigned* __restrict__ flags, float* __restrict__ maxes,
                                       int n) {
    __shared__ float partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned ballot = __ballot_sync(0xffffffffu, v > 0.0f);
    float m = v;
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    v = __shfl_sync(0xffffffffu, v, 0);          // broadcast lane 0's sum
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int nw = (blockDim.x + 31) >> 5;
        float s = lane < nw ? partial[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0) { out[blockIdx.x] = s; flags[blockIdx.x] = ballot; }
    }
    if (lane == 0) maxes[blockIdx.x * ((blockDim.x + 31) >> 5) + warp] = m;
}
