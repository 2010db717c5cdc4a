// corpus: sm90a: -arch=sm_90a
// corpus: sm80: -arch=sm_80
// Producer/consumer ring over mbarriers: init, arrive (with state), try_wait with a phase
// token (test_wait before sm_90), arrive_drop, pending_count, cp.async.mbarrier.arrive; also CUDA's own
// cuda::barrier (which lowers to mbarrier instructions).
#include <cstdint>
#include <cuda/barrier>
#pragma nv_diag_suppress static_var_with_dynamic_init
#pragma nv_diag_suppress 550
#define STAGES 4
__global__ void ring(const float *in, float *out, int iters) {
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  __shared__ float data[STAGES][128];
  int t = threadIdx.x;
  if (t == 0)
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"((uint32_t)__cvta_generic_to_shared(&full[s])), "r"(128));
      asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"((uint32_t)__cvta_generic_to_shared(&empty[s])), "r"(128));
    }
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < iters; ++i) {
    int s = i % STAGES;
    uint32_t fb = (uint32_t)__cvta_generic_to_shared(&full[s]);
    uint32_t eb = (uint32_t)__cvta_generic_to_shared(&empty[s]);
    data[s][t] = in[i * 128 + t];
    uint64_t state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(fb) : "memory");
    uint32_t waitComplete = 0;
    while (!waitComplete)
#if __CUDA_ARCH__ >= 900
      asm volatile("{\n.reg .pred P1;\nmbarrier.try_wait.shared.b64 P1, [%1], %2;\nselp.b32 %0, 1, 0, P1;\n}\n"
                   : "=r"(waitComplete) : "r"(fb), "l"(state) : "memory");
#else
      asm volatile("{\n.reg .pred P1;\nmbarrier.test_wait.shared.b64 P1, [%1], %2;\nselp.b32 %0, 1, 0, P1;\n}\n"
                   : "=r"(waitComplete) : "r"(fb), "l"(state) : "memory");
#endif
    acc += data[s][(t + 1) & 127];
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(eb) : "memory");
    uint32_t pc;
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pc) : "l"(state));
    acc += pc;
  }
  uint64_t st;
  asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];" : "=l"(st) : "r"((uint32_t)__cvta_generic_to_shared(&full[0])));
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"((uint32_t)__cvta_generic_to_shared(&empty[0])));
  out[blockIdx.x * 128 + t] = acc;
}
__global__ void cuda_barrier(float *x) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  x[threadIdx.x] *= 2.f;
  auto token = bar.arrive();
  bar.wait(std::move(token));
  x[threadIdx.x] += x[(threadIdx.x + 1) % blockDim.x];
}
