"""Hopper (sm_90a) kernels called from JAX and PyTorch.

* ``gemm.py``: a warp-specialized GEMM (TMA producer, mbarrier ring, ``wgmma`` consumers,
  ``setmaxnreg``, 2-CTA cluster with B multicast, TMA-store epilogue);
* ``grouped_gemm.py``: a persistent grouped (mixture-of-experts) GEMM with tensor maps made
  on the device, one per group;
* ``attention.py``: flash attention forward (online softmax between two ``wgmma``s);
* ``sm90.py``: their shared pieces (stage ring, descriptors, swizzled TMA-store epilogue);
* RMSNorm, softmax, LayerNorm, SwiGLU (``rms_norm.py`` ...), with the helpers below.

``library.py`` registers them for the proofs (``tests/test_kernel_library.py``,
``tests/test_kernels_hopper.py``), ``docs/kernels.md`` and ``benchmarks/kernels.py``; each file
runs as a script (``python examples/hopper/gemm.py``).

Each ``build_*`` returns a ``Kernel``; the row kernels put ``rows`` rows in a block, one warp
per row, each lane holding ``n // 32`` elements of its row in registers (coalesced: element
``lane + 32 * j``). Warp reductions use ``shfl.sync.bfly``. The row count ``M`` is a shape
variable: it binds from the input, is declared independent (sharded ``jit`` splits it with no
all-gather) and must be a multiple of ``rows`` (``covers``).
"""
from jax_pyptx import ptx, reg
from jax_pyptx.types import f32, u32, u64

FULL_MASK = 0xFFFFFFFF


def warp_reduce(v, op: str):
    """All-reduce an f32 register across the warp (``op``: "add" or "max")."""
    for delta in (16, 8, 4, 2, 1):
        other = reg.scalar(f32)
        ptx.inst.shfl.sync.bfly.b32(other, v, delta, 31, FULL_MASK)
        if op == "add":
            v = v + other
        else:
            m = reg.scalar(f32)
            ptx.inst.max.f32(m, v, other)
            v = m
    return v


def row_lane(rows: int):
    """(row index, lane) registers of this thread: block ``b`` owns rows ``b*rows ..``."""
    tid = reg.from_(ptx.special.tid.x(), u32)
    cta = reg.from_(ptx.special.ctaid.x(), u32)
    row = cta * rows + (tid >> 5)
    lane = tid & 31
    return row, lane


def lane_address(ptr, row, lane, n: int):
    """u64 address of this lane's first element of ``row`` (row-major, ``n`` f32 columns);
    its j-th element is at ``+128*j`` bytes. ``row=None``: a length-n vector."""
    i = lane if row is None else row * n + lane
    return ptr + reg.cvt(i, u64) * 4


def load(addr, n: int):
    """This lane's ``n // 32`` f32 elements starting at ``addr`` (stride 32 elements)."""
    vals = []
    for j in range(n // 32):
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(addr, 128 * j))
        vals.append(v)
    return vals


def store(addr, vals):
    for j, v in enumerate(vals):
        ptx.inst.st.global_.f32(ptx.addr(addr, 128 * j), v)


def check_n(n: int, name: str):
    if n % 32 or n <= 0:
        raise ValueError(f"{name}: n must be a positive multiple of 32 (one warp per row), "
                         f"got {n}")
