"""JAX and PyTorch runtimes (``docs/runtime.md``). Nothing here is imported until used.

No JAX (shared by both runtimes): ``callspec`` (``CallSpec``: one call's static description,
its shape / grid arithmetic and checks), ``options`` (``configure``), ``shard_plan`` (the one
sharding decision), ``host`` (a call on the CPU interpreter), ``launch_plan`` (the C++
launcher's plan and the cubin cache), ``ffi_plan`` (the plan contract), ``ffi_bridge`` (the
extension).

JAX: ``call`` (``kernel(*arrays)``, ``ptx_call``), ``primitive`` (declares ``pyptx_call`` and
registers every rule in one block), the rules it registers -- ``lowering`` (the per-platform
dispatcher over ``lowering_cuda``, the FFI custom call, and ``lowering_host``, the interpreter
callback), ``batching`` (vmap on the grid), ``sharding`` (partitioning under ``jit``), ``ad``
(no JVP; forward/backward pairs) -- and ``autodiff`` (``with_backward``).

PyTorch: ``torch_op`` (``to_torch``: a ``torch.library`` custom op per kernel, with a fake
impl for ``torch.compile``, the interpreter on CPU and the C++ launcher on CUDA).
"""
