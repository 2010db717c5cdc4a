"""Blackwell (sm_100a) kernels: the row kernels (RMSNorm, LayerNorm, softmax) built for
Blackwell, ``tcgen05_suite`` (each tcgen05 primitive in isolation), and four GEMMs on the
fifth-generation tensor cores with the accumulator in Tensor Memory: a 1-SM GEMM
(``gemm``), a persistent GEMM with double-buffered accumulators (``persistent_gemm``), a
2-SM GEMM (``gemm_2sm``, ``tcgen05.mma.cta_group::2`` across a cluster of two) and a grouped
GEMM (``grouped_gemm``, a per-group problem table in global memory).

Each module has ``build_*`` functions returning configured ``Kernel`` objects (``.ptx()``, a
JAX callable, ``jax_pyptx.to_torch(k)``), a NumPy ``reference`` and runs as a script
(``python examples/blackwell/gemm.py``): ptxas's resource line, the SASS instructions of the
pattern and the interpreter check. The kernels are registered in
``examples/blackwell/library.py`` for the proofs, the generated ``docs/kernels.md`` and
``benchmarks/kernels.py``; ``sm100`` holds the GEMMs' shared machinery (warp roles, the
TMA/mbarrier ring, descriptors, the TMEM epilogues).
"""
ARCH = "sm_100a"
