// corpus: sm80: -arch=sm_80
// Tensor cores through CUDA's wmma API (wmma.load / wmma.mma / wmma.store).
#include <mma.h>
using namespace nvcuda;
__global__ void wmma_gemm(const half *A, const half *B, float *C, int M, int N, int K) {
  int wm = (blockIdx.y * blockDim.y + threadIdx.y) * 16;
  int wn = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    if (wm < M && wn < N) {
      wmma::load_matrix_sync(fa, A + wm * K + k, K);
      wmma::load_matrix_sync(fb, B + wn * K + k, K);
      wmma::mma_sync(fc, fa, fb, fc);
    }
  }
  if (wm < M && wn < N) wmma::store_matrix_sync(C + wm * N + wn, fc, N, wmma::mem_row_major);
}
