// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Rarely generated instructions through inline asm: red, testp, slct, dp2a, mad24, subc,
// bmsk, cnot, fns, szext, isspacep, ldu, prefetchu, applypriority, discard, barrier.arrive,
// barrier.red, pmevent, exit.
#include <cstdint>
__global__ void rare(const float *x, unsigned *u, int *s, unsigned long long *g) {
  unsigned t = threadIdx.x, a, b, c, d, e, f2, h, k;
  int i;
  float v = x[t];
  asm volatile("red.global.add.u32 [%0], %1;" :: "l"(u), "r"(t));
  asm volatile("red.relaxed.gpu.global.max.s32 [%0], %1;" :: "l"(s), "r"((int)t));
  asm("{\n.reg .pred q;\ntestp.finite.f32 q, %1;\nselp.u32 %0, 1, 0, q;\n}\n" : "=r"(a) : "f"(v));
  asm("slct.u32.s32 %0, %1, %2, %3;" : "=r"(b) : "r"(t), "r"(a), "r"((int)t - 5));
  asm("dp2a.lo.u32.u32 %0, %1, %2, %3;" : "=r"(c) : "r"(t), "r"(a), "r"(b));
  asm("mad24.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(t), "r"(c), "r"(b));
  asm("sub.cc.u32 %0, %1, %2;\nsubc.u32 %0, %0, 0;" : "=r"(e) : "r"(d), "r"(c));
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(f2) : "r"(t & 31), "r"(4u));
  asm("cnot.b32 %0, %1;" : "=r"(h) : "r"(f2));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(k) : "r"(0xffffffffu), "r"(t & 31), "r"(1));
  asm("szext.wrap.s32 %0, %1, %2;" : "=r"(i) : "r"(t), "r"(8u));
  unsigned is_g;
  asm("{\n.reg .pred q;\nisspacep.global q, %1;\nselp.u32 %0, 1, 0, q;\n}\n" : "=r"(is_g) : "l"(x));
  float w;
  asm("ldu.global.f32 %0, [%1];" : "=f"(w) : "l"(x));
  asm volatile("prefetchu.L1 [%0];" :: "l"(x + 32));
  asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(g));
  asm volatile("discard.global.L2 [%0], 128;" :: "l"(g + 16));
  asm volatile("barrier.arrive 1, 64;");
  unsigned cnt;
  asm volatile("{\n.reg .pred q;\nsetp.ne.u32 q, %1, 0;\nbarrier.red.popc.u32 %0, 2, q;\n}\n" : "=r"(cnt) : "r"(a));
  asm volatile("pmevent 1;");
  u[t + 64] = a + b + c + d + e + f2 + h + k + i + is_g + cnt + (unsigned)w;
  if (t > 1000) asm volatile("exit;");
}
