// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Every flavour of atomics: add/sub/min/max/and/or/xor/exch/cas/inc/dec on global and shared,
// 64-bit and floating-point, system/block scopes, red (result unused) and a CAS loop.
__device__ double atomic_mul(double *addr, double v) {
  unsigned long long *p = (unsigned long long *)addr, old = *p, assumed;
  do { assumed = old; old = atomicCAS(p, assumed, __double_as_longlong(v * __longlong_as_double(assumed))); } while (assumed != old);
  return __longlong_as_double(old);
}
__global__ void atomics(int *gi, unsigned *gu, unsigned long long *gl, float *gf, double *gd, int *out) {
  __shared__ int si[32];
  __shared__ float sf[32];
  int t = threadIdx.x;
  if (t < 32) { si[t] = 0; sf[t] = 0.f; }
  __syncthreads();
  int r = atomicAdd(&gi[0], t) + atomicSub(&gi[1], 1) + atomicMin(&gi[2], t) + atomicMax(&gi[3], t);
  r += atomicAnd(&gi[4], 0xff) + atomicOr(&gi[5], 1 << (t & 31)) + atomicXor(&gi[6], t);
  r += atomicExch(&gi[7], t) + atomicCAS(&gi[8], t, t + 1);
  r += atomicInc(&gu[0], 100) + atomicDec(&gu[1], 100);
  r += (int)atomicAdd(&gl[0], 1ull) + (int)atomicMin(&gl[1], (unsigned long long)t);
  atomicAdd(&gf[0], 1.5f);
  atomicAdd(&gd[0], 2.5);
  atomic_mul(&gd[1], 1.01);
  atomicAdd_block(&gi[9], 1);
  atomicAdd_system(&gi[10], 1);
  atomicAdd(&si[t & 31], 1);
  atomicAdd(&sf[t & 31], 0.5f);
  __syncthreads();
  out[t] = r + si[t & 31] + (int)sf[t & 31];
}
