// corpus: sm80: -arch=sm_80
// corpus: sm90a: -arch=sm_90a
// Warp-wide votes, match, activemask, redux (sm_80), warp sync and lane masks.
__global__ void votes(const int *in, unsigned *out) {
  int t = threadIdx.x;
  int v = in[t];
  unsigned m = __activemask();
  unsigned b = __ballot_sync(m, v > 0);
  int any = __any_sync(m, v == 3), all = __all_sync(m, v >= 0);
  unsigned eq = __match_any_sync(m, v);
  int pred;
  unsigned ea = __match_all_sync(m, v, &pred);
  unsigned rs = __reduce_add_sync(m, (unsigned)v);
  int rmin = __reduce_min_sync(m, v);
  unsigned ror = __reduce_or_sync(m, (unsigned)v);
  __syncwarp(m);
  unsigned lt;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  out[t] = b + any + all + eq + ea + pred + rs + rmin + ror + __popc(b & lt);
}
