// One GEMM tile with tensor cores: C[BM x BN] (f32) = A[BM x K] (bf16, row-major) *
// B[K x BN] (bf16, row-major), BM = BN = 128, 4 warps in a 2x2 grid, each warp 64x64 outputs
// = 4 x 8 mma.sync.m16n8k16 tiles. Tiles of A and B are staged in shared memory (K chunks of
// 32, cp.async), A fragments come from ldmatrix.x4, B fragments from ldmatrix.x2.trans.
#include <cuda_bf16.h>
#include <stdint.h>
#define BM 128
#define BN 128
#define BK 32

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

extern "C" __global__ void __launch_bounds__(128)
mma_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
         float* __restrict__ C, int K, int lda, int ldb, int ldc) {
    __shared__ __align__(16) __nv_bfloat16 As[BM][BK];
    __shared__ __align__(16) __nv_bfloat16 Bs[BK][BN];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int wm = (warp >> 1) * 64, wn = (warp & 1) * 64;
    const __nv_bfloat16* Ab = A + blockIdx.y * BM * lda;
    const __nv_bfloat16* Bb = B + blockIdx.x * BN;
    float acc[4][8][4];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j)
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        // A chunk: 128 x 32 bf16 = 512 x 16 bytes; B chunk: 32 x 128 bf16 = 512 x 16 bytes
        for (int c = tid; c < 512; c += 128) {
            int ar = c / 4, ac = (c % 4) * 8;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::
                         "r"(smem_u32(&As[ar][ac])), "l"(Ab + ar * lda + k0 + ac));
            int br = c / 16, bc = (c % 16) * 8;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::
                         "r"(smem_u32(&Bs[br][bc])), "l"(Bb + (k0 + br) * ldb + bc));
        }
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();
        for (int kk = 0; kk < BK; kk += 16) {
            uint32_t af[4][4], bfr[8][2];
            for (int i = 0; i < 4; ++i) {
                int row = wm + i * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                int col = kk + (lane / 16) * 8;
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(af[i][0]), "=r"(af[i][1]), "=r"(af[i][2]), "=r"(af[i][3])
                             : "r"(smem_u32(&As[row][col])));
            }
            for (int j = 0; j < 8; ++j) {
                int krow = kk + (lane % 16);
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                             : "=r"(bfr[j][0]), "=r"(bfr[j][1])
                             : "r"(smem_u32(&Bs[krow][wn + j * 8])));
            }
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 8; ++j)
                    asm volatile(
                        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                        : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                        : "r"(af[i][0]), "r"(af[i][1]), "r"(af[i][2]), "r"(af[i][3]),
                          "r"(bfr[j][0]), "r"(bfr[j][1]));
        }
        __syncthreads();
    }
    float* Cb = C + blockIdx.y * BM * ldc + blockIdx.x * BN;
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) {
            int r = wm + i * 16 + g, c = wn + j * 8 + 2 * t;
            *(float2*)&Cb[r * ldc + c] = make_float2(acc[i][j][0], acc[i][j][1]);
            *(float2*)&Cb[(r + 8) * ldc + c] = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
