"""CPU interpreter for PTX, with a sanitizer.

``launch(ptx_or_module, entry, args, grid=, block=, cluster=, smem=, sanitize=True, max_steps=,
timeout=, stats=, timeline=, outputs=, partial_outputs=, inputs=, batch_items=)`` runs any
PTX entry the parser reads on NumPy arrays the way a driver launch would: arrays stand for
pointer params and are written in place, NumPy/Python scalars for scalar params, ``bytes`` or a
NumPy scalar / array whose bytes fill it exactly for ``.b8 name[N]`` by-value params (Triton's
fp16 / bf16 scalars: ``np.float16(x)``), and ``tensor_map(array, box=...)`` for TMA descriptor params
(a ``.b8[128]`` param by value or a ``.u64`` pointer to it). ``kernel.interpret(...)`` and the
JAX / torch CPU paths run on it. Its sanitizer also checks the async proxy (``async_proxy``):
generic writes read by TMA / wgmma / tcgen05 without ``fence.proxy.async``, copy destinations
read before their mbarrier phase completed, bulk-store sources overwritten too early, and
expect_tx byte counts that never balance.

Modules:

* ``roles``: what the array arguments are to the sanitizer (outputs that start uninitialized
  and are checked for unwritten elements at the end, inputs that refuse stores, ``jax.vmap``
  batch items); ``provenance``: the buffer each 64-bit register's pointer came from, checked
  at every global access;
* ``launch``: argument marshalling, CTA batches (clusters start batch by batch; one not started
  yet can be cancelled by ``clusterlaunchcontrol.try_cancel``, ``ops_clc``), caches of parsed
  modules and decoded programs;
* ``decode`` / ``dispatch`` / ``operands``: each instruction is decoded once into a closure;
  block scopes, variable layouts, calls (``.func``, ``vprintf``, ``__assertfail``);
* ``machine`` / ``group`` / ``sync``: CTAs, warps, groups of threads at one PC (divergence,
  reconvergence, round robin), barriers, deadlock reports;
* ``cluster``: thread-block clusters (launch shape, distributed shared memory addresses,
  ``barrier.cluster``); ``ops_cluster``: mapa, getctarank, barrier.cluster, st.async,
  red.async; ``ops_clc``: clusterlaunchcontrol.try_cancel / query_cancel (work stealing);
* ``progress``: no-progress detection (spin loops that can never exit), ``max_steps`` and
  ``timeout`` (default 300 s), the progress line on stderr of a long launch;
* ``ops_regs``: setmaxnreg (per-warp register counts, the CTA's register pool);
* ``memory``: global / const / param allocation tables, per-CTA shared and per-thread local
  memory, generic address windows, bounds / alignment / initialization checks; ``stack`` /
  ``ops_stack``: the per-thread alloca stack (alloca, stacksave, stackrestore);
* ``sanitizer``: shared-memory race detection (between warps, and between lanes of one warp);
  ``global_races``: plain accesses of one global element by different CTAs; ``wgfence``: the
  ``wgmma.fence`` rule; ``severity``: errors, ``SanitizerWarning`` and ``sanitize="strict"``;
  ``shadow``: the sanitizer's large per-launch arrays, recycled from one launch to the next;
* ``mbarrier``: the mbarrier object model (phases, arrivals, tx-count) and its plain functions;
* ``tensormap`` / ``tma``: the 128-byte tensor-map encoding and ``tensor_map``; the TMA's boxes,
  swizzle and out-of-bound fill; ``ops_bulk``: the bulk-copy / TMA / tensormap instructions;
* ``async_proxy``: the async proxy's sanitizer rules (proxy fences, in-flight copies);
* ``fp``: exact rounding to every floating-point format and mode;
* ``ops_int``, ``ops_bits``, ``ops_float``, ``ops_cvt``, ``ops_mem``, ``ops_warp``, ``ops_sync``
  (mbarrier), ``ops_mma`` (mma.sync, ldmatrix, stmatrix, movmatrix), ``ops_mma_sp`` (mma.sp
  with sparse A and its metadata), ``ops_wmma``: the instruction families;
* ``ops_wgmma`` (Hopper wgmma.mma_async{.sp} / commit_group / wait_group), ``ops_tcgen05`` and
  ``ops_tcgen05_mma`` (Blackwell tcgen05: alloc, ld / st, cp, shift, commit, mma), ``tmem``
  (Tensor Memory and its allocation checks), ``smem_matrix`` (matrix descriptors and the
  swizzled canonical operand layouts), ``asyncregs`` (registers owned by an asynchronous
  instruction until its wait), ``definedness`` (bit-level definedness of registers, as
  memcheck keeps it);
* ``snippet``: run a few instructions on per-thread inputs (``run_snippet``);
* ``stats``: ``Stats``, opt-in counters of global-memory bytes and tensor-core FLOPs
  (``launch(..., stats=Stats())``; how handlers count their own ops is in its docstring).
* ``timeline`` / ``traced``: the Chrome / Perfetto trace of a launch (``launch(...,
  timeline="run.json")``): the recorder and the hooks the asynchronous instructions call, and
  the batch context whose scheduling loop feeds it (launches without a timeline never touch
  either).

The sanitizer (``sanitize=True``, the default) reports uninitialized bits where they are used
(memcheck's rule, ``definedness``: a store of the bytes holding them, an address, a branch, a
predicate, a collective; reading a never-written register into arithmetic is not itself a bug)
and reads of shared memory nothing wrote, reads (and atomics) of output buffers before the
kernel wrote them (outputs start uninitialized, as on a GPU: ``launch(..., outputs=)``; the JAX,
torch and ``kernel.interpret`` paths mark every output that aliases no input) and output elements
still unwritten when the launch ends (``partial_outputs=`` / ``Tile(..., partial=True)`` opt
out), stores into inputs that alias no output (``inputs=``), accesses through a pointer that
leave the buffer it was derived from (into another buffer, or another ``jax.vmap`` batch item:
``provenance``), shared-memory
races between warps with no barrier between them (read-write, and write-write of different
values) and between lanes of one warp with no ``bar.warp.sync`` between them, plain accesses of
one global element by different CTAs of a launch that cannot order them, values a ``shfl``
reads from a lane that does not execute it, threads exiting without reaching an ``.aligned`` barrier other threads wait at,
divergent ``.sync``/``.aligned`` collectives and deadlocks, wgmma accumulators touched before
their wait, Tensor Memory used after ``tcgen05.dealloc`` or still allocated at exit;
out-of-bounds and misaligned accesses are always errors, and so are warps spinning forever
while the others are parked (``progress``). Every report is an ``InterpreterError`` subclass
naming the instruction, the thread and CTA, and the user's source line when the instruction
carries one. PTX that breaks the ISA's letter while hardware gives the defined result (the same
value stored to a shared byte by two warps, a ``tcgen05.ld`` register read before
``tcgen05.wait::ld``, a missing ``wgmma.fence`` that ptxas repairs, a ``bar.warp.sync`` naming
exited lanes) is a ``SanitizerWarning`` instead, once per instruction; ``sanitize=
"strict"`` raises those too and ``sanitize=False`` gives no verdict (``severity``).
"""
from ..errors import SanitizerWarning
from .launch import launch
from .stats import BufferStats, Stats
from .tensormap import TensorMap, tensor_map

__all__ = ["launch", "tensor_map", "TensorMap", "Stats", "BufferStats", "SanitizerWarning"]
