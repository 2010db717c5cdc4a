"""JAX and PyTorch runtimes: the launch-plan contract, the FFI bridge, the primitive.

JAX (``docs/runtime.md``): ``call`` (``kernel(*arrays)``, ``ptx_call``, ``configure``),
``primitive`` (``pyptx_call``: abstract eval, the interpreter lowering), ``lowering_cuda``
(the ``jax_pyptx_launch`` custom call), ``batching`` (vmap on the grid), ``sharding``
(partitioning under ``jit``), ``autodiff`` (forward/backward kernel pairs).
PyTorch: ``torch_op`` (``to_torch``: a ``torch.library`` custom op per kernel, with a fake
impl for ``torch.compile``, the interpreter on CPU and the C++ launcher on CUDA).
Both launch through ``ffi_plan`` (the plan contract) and ``ffi_bridge`` (the extension).
Nothing here is imported until used.
"""
