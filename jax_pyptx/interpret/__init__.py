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

The map. The package is grouped by concern; a group imports only the groups below it (the
interpreter's layers contract in ``pyproject.toml``, checked by ``tests/test_layers.py``):

* this package: the entry points and tools. ``launch`` (argument marshalling, CTA batches:
  clusters start batch by batch, and one not started yet can be cancelled by
  ``clusterlaunchcontrol.try_cancel``; the caches of parsed modules and decoded programs),
  ``snippet`` (``run_snippet``: a few instructions on per-thread inputs), ``coverage`` (the ISA
  table's interpreter column), ``timeline`` (the Chrome / Perfetto trace of a launch:
  ``launch(..., timeline="run.json")``: the recorder, the hooks the asynchronous instructions
  call, and ``GroupRun``, which the scheduling loop calls only when a launch records one),
  ``stats`` (``Stats``, opt-in counters of
  global-memory bytes and tensor-core FLOPs; how handlers count their own ops is in its
  docstring);
* ``scheduler``: ``context`` (a batch of CTAs run group by group: warps, groups of threads at
  one PC, divergence, reconvergence, round robin; one loop with or without a timeline),
  ``specials`` (special registers and the slot geometry of a batch, cached per launch),
  ``register_blocks`` (a register block written at once: a delivered wgmma accumulator), ``handlers`` (each instruction decoded once
  by the ISA table into the closure its family registered), ``segments`` (straight-line
  register arithmetic run in batches, one NumPy operation for many instructions), ``native``
  (a segment's batches compiled into blocks run in native loops), ``schedule`` (when asynchronous
  work completes, which warps run next), ``progress`` (no-progress detection: spin loops that
  can never exit; ``max_steps``, ``timeout`` (default 300 s), the progress line on stderr);
* ``ops``: the instruction families, one module each. ``integer``, ``bits``, ``floating``,
  ``convert``, ``load_store``, ``warp``, ``control`` (bra, call, ``vprintf``, ...), ``alloca``,
  ``setmaxnreg`` (per-warp register counts, the CTA's pool), ``mbarrier_ops``, ``cluster_ops``
  (mapa, getctarank, barrier.cluster, st.async, red.async), ``launch_control``
  (clusterlaunchcontrol.try_cancel / query_cancel), ``bulk`` (bulk copies, tensormap
  instructions), ``tma`` (the TMA's tensor copies and the tensor maps they read) with
  ``tma_boxes`` (the elements a box covers, swizzle, out-of-bound fill),
  ``mma`` (mma.sync, ldmatrix, stmatrix, movmatrix), ``mma_sparse``, ``wmma``, ``wgmma``
  (wgmma.mma_async{.sp}, commit_group, wait_group), ``tcgen05`` and ``tcgen05_mma`` (alloc,
  ld / st, cp, shift, commit, mma), with ``smem_matrix`` (matrix descriptors and the swizzled
  canonical operand layouts);
* ``sanitizer``: ``smem_races`` (shared-memory races between warps, and between lanes of one
  warp; ``race_ranges``: a copy's whole ranges, the boxes of one TMA instruction at once;
  ``warp_cover``: which warps accessed which blocks in the epoch, so that an access clear of
  the others skips the per-chunk checks),
  ``global_races`` (plain accesses of one global element by different CTAs),
  ``definedness`` (bit-level definedness of registers, as memcheck keeps it), ``provenance``
  (the buffer each 64-bit register's pointer came from, checked at every global access),
  ``roles`` (outputs that start uninitialized and are checked for unwritten elements at the
  end, inputs that refuse stores, ``jax.vmap`` batch items), ``async_proxy`` (proxy fences,
  in-flight copies; ``bulk_groups``: bulk async-groups, tensor-map fences), ``wgfence`` (the ``wgmma.fence`` rule), ``severity`` (errors,
  ``SanitizerWarning`` and ``sanitize="strict"``);
* ``machine``: the machine model. ``group`` (threads of a batch at one PC), ``cluster`` (the
  cluster shape, distributed shared memory addresses), ``barriers`` (CTA barriers with ids and
  thread counts, deadlock reports), ``mbarrier`` (the mbarrier object model: phases, arrivals,
  tx-count, and its plain functions), ``asyncregs`` (registers owned by an asynchronous
  instruction until its wait), ``program`` (a PTX function and the functions it calls laid out
  flat: block scopes, variable layouts, calls), ``registry`` (the handlers, keyed by the ISA
  table's names);
* ``state``: memory and values. ``memory`` (global / const / param allocation tables, per-CTA
  shared and per-thread local memory, generic address windows, bounds / alignment /
  initialization checks), ``nests`` (an access's addresses as an affine nest: slices instead
  of gathers), ``stack`` (the per-thread alloca stack), ``tmem`` (Tensor Memory and
  its allocation checks), ``operands`` (immediates, typed register views, special registers,
  vectors), ``fp`` (exact rounding to every floating-point format and mode), ``tensormap``
  (the 128-byte tensor-map encoding and ``tensor_map``), ``shadow`` (the sanitizer's large
  per-launch arrays, recycled from one launch to the next), ``arith`` (the compiled element
  loops, tensor-core data moves and wgmma products, ``ffi/interp/arith.cc``, ``ex2.cc``,
  ``matrix.cc`` and ``mma.cc``, or None where not built).

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
from .state.tensormap import TensorMap, tensor_map

__all__ = ["launch", "tensor_map", "TensorMap", "Stats", "BufferStats", "SanitizerWarning"]
