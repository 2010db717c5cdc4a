"""ptxas / nvdisasm: find them, compile PTX to cubin with a disk cache, read resource reports.

Search order for each tool: $PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, and
the ``nvidia-cuda-nvcc`` / ``nvidia-cuda-nvdisasm`` wheels; the newest version wins.
"""
from .find import Tool, find_tool, toolchain_info  # noqa: F401
from .cubin import (  # noqa: F401,A004
    CompileResult, cache_dir, compile, compile_ptx, disassemble, ptxas_check, publish_cubin,
    read_cubin,
)
from .report import ResourceReport, parse_report  # noqa: F401
