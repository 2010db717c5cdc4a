// corpus: sm80: -arch=sm_80
// corpus: sm100a: -arch=sm_100a
// Module-scope variables: __constant__ tables, __device__ globals with initializers,
// pointers to globals (generic(...) initializers), a managed variable and a 2-D array.
__constant__ float kPoly[8] = {1.0f, 0.5f, 0.25f, 0.125f, -1.0f, 3.14159f, 2.71828f, 1e-6f};
__constant__ int kPerm[4] = {3, 1, 2, 0};
__constant__ double kD[2] = {1.0e300, -2.5};
__device__ int gCounter = 42;
__device__ unsigned long long gBig = 0x123456789abcdefULL;
__device__ float gMat[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
__device__ int *gPtr = &gCounter;
__device__ float *gRow = &gMat[2][0];
__device__ char gName[] = "jax-pyptx";
__device__ __managed__ int gManaged = 7;
__device__ short gShorts[3] = {-1, 2, -3};
__global__ void use_globals(float *out, float x) {
  int t = threadIdx.x;
  float p = 0.f;
  for (int k = 7; k >= 0; --k) p = p * x + kPoly[k];
  out[t] = p + gMat[t & 3][kPerm[t & 3]] + gRow[t & 3] + (float)kD[t & 1] + gName[t % 9] + gShorts[t % 3];
  atomicAdd(gPtr, 1);
  if (t == 0) { gBig += 1; gManaged += *gPtr; }
}
