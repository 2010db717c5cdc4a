// corpus: sm100a: -arch=sm_100a
// Other Blackwell additions: cluster launch control (try_cancel / query_cancel with .b128
// registers), fp4/fp6 conversions (cvt ... e2m1x2 / e3m2x2), redux.sync.f32 min/max,
// multimem-free cluster work stealing loop.
#include <cstdint>
__global__ void __cluster_dims__(1, 1, 1) persistent(float *x, uint32_t *fp4, int n) {
  __shared__ __align__(16) uint4 resp;
  __shared__ __align__(8) uint64_t bar;
  uint32_t sresp = (uint32_t)__cvta_generic_to_shared(&resp), sbar = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sbar));
  __syncthreads();
  int bid = blockIdx.x;
  uint32_t phase = 0;
  while (true) {
    int i = bid * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.f;
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" :: "r"(sbar));
      asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];" :: "r"(sresp), "r"(sbar));
    }
    asm volatile("{\n.reg .pred P1;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n@!P1 bra W_%=;\n}\n" :: "r"(sbar), "r"(phase));
    phase ^= 1;
    uint32_t ok, next;
    asm volatile("{\n.reg .b128 r;\n.reg .pred p;\nld.shared.b128 r, [%2];\n"
                 "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\nselp.u32 %0, 1, 0, p;\n"
                 "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %1, r;\n}\n"
                 : "=r"(ok), "=r"(next) : "r"(sresp));
    __syncthreads();
    if (!ok) break;
    bid = next;
  }
  float a = x[threadIdx.x], b = x[threadIdx.x + 1];
  uint16_t packed;
  asm("{\n.reg .b8 t;\ncvt.rn.satfinite.e2m1x2.f32 t, %1, %2;\nmov.b16 %0, {t, t};\n}\n" : "=h"(packed) : "f"(a), "f"(b));
  uint16_t p6;
  asm("cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;" : "=h"(p6) : "f"(a), "f"(b));
  float mx;
  asm("redux.sync.max.f32 %0, %1, 0xffffffff;" : "=f"(mx) : "f"(a));
  fp4[threadIdx.x] = packed | ((uint32_t)p6 << 16) | __float_as_uint(mx);
}
