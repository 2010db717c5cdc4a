// corpus: sm90a: -arch=sm_90a
// wgmma with fp8 (e4m3 x e5m2) inputs, f16 accumulators, and a tf32 form.
#include <cstdint>
__global__ void __launch_bounds__(128) wgmma_fp8(const uint64_t *descs, uint32_t *out, float *outf) {
  uint64_t da = descs[0], db = descs[1];
  uint32_t d[8];
  for (int i = 0; i < 8; ++i) d[i] = 0;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e5m2 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, -1;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
      : "l"(da), "l"(db), "r"(1));
  float f[8];
  for (int i = 0; i < 8; ++i) f[i] = 0.f;
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;\n}\n"
      : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7])
      : "l"(descs[2]), "l"(descs[3]), "r"(0));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 8; ++i) { out[threadIdx.x * 8 + i] = d[i]; outf[threadIdx.x * 8 + i] = f[i]; }
}
