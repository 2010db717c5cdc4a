// A 2-stage cp.async pipeline: each block streams `ntiles` tiles of 256 floats through a
// double buffer in shared memory (cp.async.ca 4-byte and cp.async.cg 16-byte copies,
// commit_group / wait_group 1), and each thread accumulates out[j] = sum_t scale[t] * in[t][j]
// over the tiles for its 4 positions. The last tile may be partial: the copy's src-size
// operand zero-fills the missing bytes.
#include <stdint.h>
#define TILE 256

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

extern "C" __global__ void cp_async_pipeline(const float* __restrict__ in, const float* __restrict__ scale,
                                             float* __restrict__ out, int n, int ntiles) {
    __shared__ __align__(16) float buf[2][TILE];
    __shared__ float sc[2];
    int t = threadIdx.x;                       // 64 threads, 4 floats each
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    auto issue = [&](int tile, int stage) {
        int base = tile * TILE + t * 4;
        int remain = n - base;
        int bytes = remain >= 4 ? 16 : (remain > 0 ? remain * 4 : 0);
        const float* src = in + (remain > 0 ? base : 0);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::
                     "r"(smem_u32(&buf[stage][t * 4])), "l"(src), "r"(bytes));
        if (t == 0)
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::
                         "r"(smem_u32(&sc[stage])), "l"(scale + tile));
        asm volatile("cp.async.commit_group;\n" ::);
    };
    issue(0, 0);
    for (int tile = 0; tile < ntiles; ++tile) {
        int stage = tile & 1;
        if (tile + 1 < ntiles) {
            issue(tile + 1, stage ^ 1);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads();
        float s = sc[stage];
        for (int k = 0; k < 4; ++k) acc[k] += s * buf[stage][t * 4 + k];
        __syncthreads();
    }
    for (int k = 0; k < 4; ++k) out[blockIdx.x * TILE + t * 4 + k] = acc[k];
}
