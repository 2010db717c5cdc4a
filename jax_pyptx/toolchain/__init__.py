"""ptxas / nvdisasm: find them, compile PTX to cubin with a disk cache, read resource reports.

Search order for each tool: $PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, and
the ``nvidia-cuda-nvcc`` / ``nvidia-cuda-nvdisasm`` wheels; the newest version wins.

Examples:
    >>> from jax_pyptx import kernel, ptx
    >>> from jax_pyptx.toolchain import compile_ptx, find_tool
    >>> @kernel
    ... def k():
    ...     ptx.ret()
    >>> find_tool("ptxas").name                      # needs ptxas
    'ptxas'
    >>> compile_ptx(k.ptx(), "sm_90a").report.spill_stores   # needs ptxas
    0
"""
from .find import Tool, find_tool, toolchain_info  # noqa: F401
from .cubin import (  # noqa: F401
    CompileResult, cache_dir, compile, compile_ptx, disassemble, ptxas_check, publish_cubin,
    read_cubin,
)
from .report import ResourceReport, parse_report  # noqa: F401
