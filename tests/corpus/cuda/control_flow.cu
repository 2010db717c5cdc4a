// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// corpus: sm80_O0: -arch=sm_80 -O0 -Xptxas -O0
// Branch shapes for the transpiler: nested loops, while/do-while, break/continue, early
// return, a switch (jump table candidates), #pragma unroll 1 (.pragma "nounroll"), and a
// divergent if/else chain; __syncthreads_count / _or / _and (bar.red).
__global__ void flow(const int *in, int *out, int n, int mode) {
  int t = threadIdx.x, acc = 0;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    int v = in[i * blockDim.x + t];
    if (v < 0) continue;
    if (v > 1000) break;
    switch ((v + mode) & 7) {
      case 0: acc += v; break;
      case 1: acc -= v; break;
      case 2: acc ^= v; break;
      case 3: acc *= 3; break;
      case 4: acc |= v << 2; break;
      case 5: acc = max(acc, v); break;
      case 6: acc = min(acc, v); break;
      default: acc += 1;
    }
  }
  int k = 0;
  while (acc > 16) { acc >>= 1; ++k; }
  do { acc += k; } while (acc < 4 && k-- > 0);
  if (t > 100) return;
  if (acc & 1) out[t] = acc;
  else if (acc & 2) out[t] = -acc;
  else out[t] = 0;
  int c = __syncthreads_count(acc > 3), o = __syncthreads_or(acc == 7), a = __syncthreads_and(acc != 0);
  out[t + blockDim.x] = c + o + a;
}
