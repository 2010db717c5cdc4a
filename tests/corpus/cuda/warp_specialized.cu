// corpus: sm90a: -arch=sm_90a
// Warp specialization: setmaxnreg inc/dec per warpgroup, elect.sync to pick one lane,
// named barriers (bar.sync/bar.arrive with thread counts), stmatrix and ldmatrix .trans.
#include <cstdint>
__global__ void __launch_bounds__(384, 1) ws(const uint32_t *in, uint32_t *out) {
  __shared__ __align__(128) uint32_t stage[4 * 32 * 4];
  int wg = threadIdx.x / 128;
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    uint32_t is_leader;
    asm volatile("{\n.reg .pred P;\nelect.sync _|P, %1;\nselp.u32 %0, 1, 0, P;\n}\n" : "=r"(is_leader) : "r"(0xffffffffu));
    if (is_leader) stage[threadIdx.x / 32] = in[threadIdx.x];
    asm volatile("bar.arrive 1, 384;" ::: "memory");
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    asm volatile("bar.sync 1, 384;" ::: "memory");
    uint32_t lane = threadIdx.x & 31, r0, r1, r2, r3, leader;
    asm volatile("{\n.reg .pred q;\nelect.sync %0|q, 0xffffffff;\n}\n" : "=r"(leader));
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(&stage[(lane % 8) * 4 + (lane / 8) * 32]);
    uint32_t v = in[threadIdx.x] + leader;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(v), "r"(v + 1), "r"(v + 2), "r"(v + 3));
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(v), "r"(v ^ 5));
    __syncwarp();
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    out[threadIdx.x] = r0 + r1 + r2 + r3;
  }
}
