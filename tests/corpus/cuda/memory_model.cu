// corpus: sm90a: -arch=sm_90a
// corpus: sm80: -arch=sm_80
// Memory-consistency instructions: ld.acquire / st.release / atom with scopes, fences,
// membar, ld.volatile, ld.global.nc with cache hints, createpolicy, prefetch, nanosleep,
// special registers (%clock64, %globaltimer, %smid, %warpid, %nsmid).
#include <cstdint>
__global__ void mm(unsigned *flag, unsigned *data, unsigned long long *times, const float4 *ro, float4 *wo) {
  unsigned v, t = threadIdx.x;
  if (t == 0) {
    data[blockIdx.x] = blockIdx.x;
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(flag + blockIdx.x), "r"(1u) : "memory");
    do { asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory"); __nanosleep(100); } while (v == 0);
    asm volatile("atom.acq_rel.gpu.global.cas.b32 %0, [%1], %2, %3;" : "=r"(v) : "l"(flag + 1), "r"(0u), "r"(5u) : "memory");
    asm volatile("fence.sc.sys;" ::: "memory");
    asm volatile("membar.gl;" ::: "memory");
    __threadfence_block();
    __threadfence_system();
  }
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  float4 x;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w) : "l"(ro + t), "l"(policy));
  asm volatile("prefetch.global.L2 [%0];" :: "l"(ro + t + 128));
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(ro + t + 256));
  wo[t] = __ldg(ro + t + 1);
  asm volatile("st.global.L1::no_allocate.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(wo + t + 64), "f"(x.x), "f"(x.y), "f"(x.z), "f"(x.w));
  unsigned long long c, g;
  unsigned smid, warpid, nsm;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsm));
  times[t] = c + g + smid + warpid + nsm + *(volatile unsigned *)(data + t);
}
