// corpus: sm80: -arch=sm_80
// corpus: sm80_rdc: -arch=sm_80 -rdc=true
// corpus: sm90a_G: -arch=sm_90a -G
// Non-inlined device functions: .func with return params, by-value structs, recursion and
// an indirect call through a function pointer (call with a .callprototype).
struct Pair { float a; float b; };
__device__ __noinline__ Pair swap_scale(Pair p, float s) { return Pair{p.b * s, p.a * s}; }
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ __noinline__ float cube(float x) { return x * x * x; }
typedef float (*unary_fn)(float);
__device__ unary_fn table[2] = {square, cube};
__device__ __noinline__ void store3(float *p, float x, float y, float z) { p[0] = x; p[1] = y; p[2] = z; }
__global__ void calls(float *out, const int *sel, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Pair p = swap_scale(Pair{out[i], (float)i}, 2.0f);
  unary_fn f = table[sel[i] & 1];
  float r = f(p.a) + (float)fib(sel[i] & 7);
  store3(out + 3 * i, r, p.b, 0.5f);
}
