"""JAX and PyTorch runtimes: the launch-plan contract, the FFI bridge, the primitive."""
