// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// printf (an extern vprintf call with a local-memory argument buffer) and assert/trap.
#include <cstdio>
#include <cassert>
__global__ void debug_print(const float *x, int n) {
  int i = threadIdx.x;
  if (i < n && x[i] < 0.f) printf("thread %d: negative value %f (n=%d)\n", i, x[i], n);
  if (i == 0) printf("block %d done\n", blockIdx.x);
  assert(n > 0);
  if (n > 1 << 30) __trap();
}
