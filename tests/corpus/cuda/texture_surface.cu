// corpus: sm80: -arch=sm_80
// Texture and surface objects: tex.2d / tex.1d fetches with vector address operands,
// tld4 gathers, suld/sust surface access and txq/suq queries.
__global__ void sample(cudaTextureObject_t tex, cudaTextureObject_t tex1, cudaSurfaceObject_t surf, float *out, int w) {
  int x = threadIdx.x, y = blockIdx.x;
  float4 v = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
  float s = tex1Dfetch<float>(tex1, x);
  float4 g = tex2Dgather<float4>(tex, x * 0.1f, y * 0.1f, 1);
  float l = tex2DLod<float>(tex1, x, y, 1.5f);
  float4 sv;
  surf2Dread(&sv, surf, x * 16, y);
  sv.x += v.x + s + g.y + l;
  surf2Dwrite(sv, surf, x * 16, y);
  out[y * w + x] = v.y + v.z + v.w;
}
