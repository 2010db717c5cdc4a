// Tensor cores through CUDA's wmma API: f16 (row-major A, column-major B, f32 accumulators
// scaled element-wise between tiles), bf16, tf32 and int8, stored row- or column-major.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_f16(const half* A, const half* B, float* C, int M, int N, int K, float scale) {
    int wm = blockIdx.y * 16;
    int wn = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, A + wm * K + k, K);
        wmma::load_matrix_sync(fb, B + wn * K + k, K);
        wmma::mma_sync(fc, fa, fb, fc);
        for (int i = 0; i < fc.num_elements; ++i) fc.x[i] *= scale;
    }
    wmma::store_matrix_sync(C + wm * N + wn, fc, N, wmma::mem_row_major);
}

extern "C" __global__ void wmma_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, const float* Cin, float* C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::load_matrix_sync(fa, A, 16);
    wmma::load_matrix_sync(fb, B, 16);
    wmma::load_matrix_sync(fc, Cin, 16, wmma::mem_col_major);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(C, fc, 16, wmma::mem_col_major);
}

extern "C" __global__ void wmma_tf32(const float* A, const float* B, float* C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 1.0f);
    wmma::load_matrix_sync(fa, A, 8);
    wmma::load_matrix_sync(fb, B, 16);
    for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(C, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void wmma_s8(const signed char* A, const signed char* B, int* C) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
    wmma::fill_fragment(fc, 7);
    wmma::load_matrix_sync(fa, A, 16);
    wmma::load_matrix_sync(fb, B, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(C, fc, 16, wmma::mem_row_major);
}
