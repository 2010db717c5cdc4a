// Assorted nvcc kernels that exercise many PTX instruction families through the interpreter:
// atomics (global and shared), local memory, calls to a non-inlined function, printf,
// half / bfloat16 math, integer intrinsics, double precision with libdevice, fast-math
// intrinsics, a data-dependent (divergent) loop, warp votes / match / redux, dynamic smem.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>

extern "C" __global__ void histogram(const int* __restrict__ x, int n, unsigned* __restrict__ hist,
                                     float* __restrict__ total, int* __restrict__ maxv) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = x[i];
        atomicAdd(&local[v & 15], 1u);
        atomicAdd(total, (float)(v & 7));
        atomicMax(maxv, v);
    }
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
}

__device__ __noinline__ float poly(const float* c, int k, float x) {
    float r = 0.f;
    for (int i = k - 1; i >= 0; --i) r = r * x + c[i];
    return r;
}

extern "C" __global__ void local_and_call(const float* __restrict__ x, const int* __restrict__ idx,
                                          float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float c[8];
    for (int k = 0; k < 8; ++k) c[k] = x[(i + k) % n] * (k + 1);
    float pick = c[idx[i] & 7];                  // dynamic index: c lives in local memory
    y[i] = poly(c, 1 + (idx[i] & 7), 0.5f) + pick;
}

extern "C" __global__ void say_hello(int n) {
    if (threadIdx.x < n) printf("hello from thread %d of block %d: %f\n", threadIdx.x, blockIdx.x, 0.5 * threadIdx.x);
}

extern "C" __global__ void half_math(const __half2* __restrict__ a, const __half2* __restrict__ b,
                                     __half2* __restrict__ c, const float* __restrict__ f,
                                     __nv_bfloat16* __restrict__ bf, __half* __restrict__ h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], z = b[i];
    c[i] = __hfma2(x, z, __hadd2(x, z));
    bf[i] = __float2bfloat16_rn(f[i]) ;
    h[i] = __float2half_rz(f[i]);
}

extern "C" __global__ void int_math(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                                    unsigned* __restrict__ out, unsigned long long* __restrict__ out64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i] | 1u;
    unsigned* o = out + 10 * i;
    o[0] = __popc(x);
    o[1] = __clz(x);
    o[2] = __brev(x);
    o[3] = __byte_perm(x, y, 0x5140);
    o[4] = __funnelshift_l(x, y, y & 31);
    o[5] = __umulhi(x, y);
    o[6] = x / y;
    o[7] = x % y;
    o[8] = (unsigned)((int)x >> (y & 31));
    o[9] = __sad(x, y, 7u);
    unsigned long long X = ((unsigned long long)x << 32) | y;
    out64[2 * i] = __umul64hi(X, X + 12345);
    out64[2 * i + 1] = X / (unsigned long long)(y | 0x10000);
}

extern "C" __global__ void double_math(const double* __restrict__ a, double* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i];
    out[4 * i] = fma(x, x, 1.0);
    out[4 * i + 1] = sqrt(fabs(x));
    out[4 * i + 2] = 1.0 / (x + 3.0);
    out[4 * i + 3] = exp(x);
}

extern "C" __global__ void fast_math(const float* __restrict__ a, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    out[6 * i] = __expf(x);
    out[6 * i + 1] = __sinf(x);
    out[6 * i + 2] = __logf(fabsf(x) + 1.0f);
    out[6 * i + 3] = rsqrtf(fabsf(x) + 1.0f);
    out[6 * i + 4] = __fdividef(x, 3.0f);
    out[6 * i + 5] = expf(x);                  // accurate expf: a longer instruction sequence
}

extern "C" __global__ void collatz(const unsigned* __restrict__ start, unsigned* __restrict__ steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = start[i], s = 0;
    while (v != 1) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        ++s;
    }
    steps[i] = s;
}

extern "C" __global__ void warp_votes(const int* __restrict__ x, unsigned* __restrict__ out) {
    int t = threadIdx.x;
    int v = x[t];
    unsigned* o = out + 6 * t;
    o[0] = __all_sync(0xffffffffu, v > 0);
    o[1] = __any_sync(0xffffffffu, v > 5);
    o[2] = __match_any_sync(0xffffffffu, v & 3);
    o[3] = __reduce_add_sync(0xffffffffu, (unsigned)v);
    o[4] = __reduce_max_sync(0xffffffffu, (unsigned)v);
    o[5] = __activemask();
}

extern "C" __global__ void dyn_smem_reverse(const float* __restrict__ x, float* __restrict__ y, int n) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    if (t < n) s[t] = x[blockIdx.x * n + t];
    __syncthreads();
    if (t < n) y[blockIdx.x * n + t] = s[n - 1 - t];
}
