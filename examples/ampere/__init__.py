"""Ampere (sm_80) kernels: row kernels (RMSNorm, LayerNorm, softmax), SwiGLU, and a GEMM with
``mma.sync`` + ``ldmatrix`` + a multi-stage ``cp.async`` pipeline.

Each module has a ``build_*`` function returning a configured ``Kernel`` (``.ptx()``, a JAX
callable, ``jax_pyptx.to_torch(k)``), a NumPy ``reference`` and runs as a script
(``python examples/ampere/gemm.py``): ptxas's resource line and the interpreter check. The
kernels are registered in ``examples/ampere/library.py`` for the proofs, the generated
``docs/kernels.md`` and ``benchmarks/kernels.py``.
"""
ARCH = "sm_80"
