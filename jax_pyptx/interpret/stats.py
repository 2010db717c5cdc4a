"""Opt-in counters of an interpreted launch: global-memory bytes and tensor-core FLOPs.

    from jax_pyptx.interpret import Stats, launch
    st = Stats()
    launch(ptx, "gemm", [a, b, c], grid=(2, 2), block=256, stats=st)
    st.global_load_bytes, st.global_store_bytes   # bytes the kernel's accesses requested
    st.unique_bytes                               # distinct bytes read + distinct bytes written
    st.buffers                                    # per allocation: {"param 'A' ...": BufferStats}
    st.flops                                      # {("mma.sync", "bf16"): 2*M*N*K, ...}
    st.bytes_by_op                                # {"cp.async": [load, store, atomic], ...}

Counting costs nothing unless a ``Stats`` is passed: the hooks are one ``is not None`` test.
``launch(..., stats={})`` (a dict) keeps its older meaning: it receives the run's instruction
and CTA counts only.

*Requested* bytes are what the loads and stores ask for (the traffic into the L1/L2); the
*unique* bytes of a buffer are the distinct bytes read and the distinct bytes written (the
traffic to DRAM if the caches kept everything: the compulsory traffic). A GEMM requests its
A and B panels once per CTA; it reads each element of A and B at least once.

What is counted, and where (for authors of interpreter handlers):

* **Global memory**: every access that reaches the global ``FlatSpace`` of the launch
  (``memory.FlatSpace.load`` / ``store`` / ``locate``) calls ``Stats.global_access(kind,
  nbytes, parts, size)`` with ``kind`` "load", "store" or "atomic" (read-modify-write,
  counted once as requested bytes, as read and written for the unique ones) and ``parts``,
  the resolved ``[(allocation, positions, offsets)]`` of ``size`` bytes each. So
  ``ld``/``st``/``atom``/``red`` in the global or generic space, ``cp.async`` (the source
  bytes it actually reads: a zero-filled tail reads fewer) and anything a new handler reads
  or writes through ``ctx.mem.gspace`` is counted with no extra code; the bytes are also
  attributed to the opcode of the instruction executing (``bytes_by_op``). A handler that
  moves global bytes some other way (a TMA model copying through its own view of an
  allocation, say) calls ``ctx.stats.global_access("load", n, parts, size)`` itself when
  ``ctx.stats is not None`` (``parts`` may be None: then the bytes count as requested only).
* **Tensor-core FLOPs**: a matrix handler calls ``ctx.stats.add_flops(op, input_type,
  flops)`` when ``ctx.stats is not None``; one FLOP is one multiply or one add, so an
  ``m x n x k`` product is ``2*m*n*k``. ``mma.sync`` and ``wmma.mma`` do (per warp);
  ``wgmma.mma_async`` should count ``2*m*n*k`` per warpgroup and ``tcgen05.mma`` per issued
  instruction, with the input type name (``"bf16"``, ``"e4m3"``, ...) as ``input_type``.

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.example_kernels import twice
    >>> from jax_pyptx.interpret import Stats, launch
    >>> x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    >>> st = Stats()
    >>> launch(twice("N").ptx(N=64), "twice", [x, y], grid=(2, 1, 1), block=32, stats=st)
    >>> st.global_load_bytes, st.global_store_bytes, st.ctas
    (256, 256, 2)
"""
from __future__ import annotations

import numpy as np

__all__ = ["Stats", "BufferStats"]

_KINDS = {"load": 0, "store": 1, "atomic": 2}


class BufferStats:
    """Traffic of one global allocation: requested ``load`` / ``store`` / ``atomic`` bytes and
    the distinct bytes read (``unique_read``) and written (``unique_written``).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.interpret import Stats, launch
        >>> x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
        >>> st = Stats()
        >>> launch(twice("N").ptx(N=64), "twice", [x, y], grid=(2, 1, 1), block=32, stats=st)
        >>> [(b.load, b.store, b.unique_read, b.unique_written) for b in st.buffers.values()]
        [(256, 0, 256, 0), (0, 256, 0, 256)]
    """

    __slots__ = ("name", "index", "load", "store", "atomic", "_read", "_written")

    def __init__(self, name: str, index: int, size: int):
        self.name, self.index = name, index
        self.load = self.store = self.atomic = 0
        self._read = np.zeros(size, bool)
        self._written = np.zeros(size, bool)

    @property
    def unique_read(self) -> int:
        """Distinct bytes read (by loads and atomics).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.interpret import Stats, launch
            >>> x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
            >>> st = Stats()
            >>> launch(twice("N").ptx(N=64), "twice", [x, y], grid=(2, 1, 1), block=32, stats=st)
            >>> [b.unique_read for b in st.buffers.values()]
            [256, 0]
        """
        return int(self._read.sum())

    @property
    def unique_written(self) -> int:
        """Distinct bytes written (by stores and atomics).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.interpret import Stats, launch
            >>> x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
            >>> st = Stats()
            >>> launch(twice("N").ptx(N=64), "twice", [x, y], grid=(2, 1, 1), block=32, stats=st)
            >>> [b.unique_written for b in st.buffers.values()]
            [0, 256]
        """
        return int(self._written.sum())

    def __repr__(self):
        return (f"BufferStats({self.name}: load={self.load}B store={self.store}B "
                f"atomic={self.atomic}B unique read={self.unique_read}B "
                f"written={self.unique_written}B)")


class Stats:
    """Counters of one or more interpreted launches (they accumulate).

    Attributes: ``global_load_bytes``, ``global_store_bytes``, ``global_atomic_bytes``
    (requested); ``buffers`` (allocation name -> ``BufferStats``); ``bytes_by_op`` (opcode ->
    [load, store, atomic] bytes); ``flops`` ((op, input type) -> FLOPs); ``instructions``
    (instructions dispatched to groups of threads), ``thread_instructions``, ``ctas``,
    ``launches``, ``seconds``.

    Examples:
        >>> st = Stats(); st.add_flops("mma.sync", "bf16", 4096); st.tensor_flops
        4096
    """

    __slots__ = ("global_load_bytes", "global_store_bytes", "global_atomic_bytes",
                 "bytes_by_op", "buffers", "flops", "instructions", "thread_instructions",
                 "ctas", "launches", "seconds", "_ctx", "_by_alloc", "count_ops", "thread_ops")

    def __init__(self, count_ops: bool = False):
        self.global_load_bytes = 0
        self.global_store_bytes = 0
        self.global_atomic_bytes = 0
        self.bytes_by_op: dict = {}
        self.buffers: dict = {}
        self.flops: dict = {}
        self.instructions = 0
        self.thread_instructions = 0
        self.ctas = 0
        self.launches = 0
        self.seconds = 0.0
        self._ctx = None            # the batch of CTAs running now (for opcode attribution)
        self._by_alloc: dict = {}   # id(allocation) -> BufferStats, for the current launch
        # count_ops=True: thread_ops counts, per opcode (``fma.rn.f32``), the threads that
        # executed it (guarded-off threads excluded); the launch runs a private copy of the
        # program whose handlers count, so launches without it pay nothing (perf.counts)
        self.count_ops = bool(count_ops)
        self.thread_ops: dict = {}

    # ------------------------------------------------------------------ hooks
    def global_access(self, kind: str, nbytes: int, parts=None, size: int = 0) -> None:
        """Count ``nbytes`` of global traffic of ``kind`` ("load", "store", "atomic") for the
        instruction executing now; ``parts`` (``[(allocation, positions, offsets)]``, each
        access ``size`` bytes) places it in ``buffers``.

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.global_access("load", 128)
            >>> st.global_access("store", 64)
            >>> st.global_load_bytes, st.global_store_bytes, st.global_bytes
            (128, 64, 192)
        """
        k = _KINDS.get(kind)
        if k is None:
            raise ValueError(f"Stats.global_access: kind must be one of load, store, atomic; "
                             f"got {kind!r}")
        nbytes = int(nbytes)
        if k == 0:
            self.global_load_bytes += nbytes
        elif k == 1:
            self.global_store_bytes += nbytes
        else:
            self.global_atomic_bytes += nbytes
        ctx = self._ctx
        cur = ctx.cur if ctx is not None else None
        op = cur.ins.opcode if cur is not None else "?"
        row = self.bytes_by_op.get(op)
        if row is None:
            row = self.bytes_by_op[op] = [0, 0, 0]
        row[k] += nbytes
        if parts:
            span = np.arange(size, dtype=np.int64)
            for al, _pos, off in parts:
                b = self._buffer(al)
                n = len(off) * size
                idx = (np.asarray(off, np.int64)[:, None] + span).ravel()
                idx = idx[idx < len(b._read)]
                if k == 0:
                    b.load += n
                    b._read[idx] = True
                elif k == 1:
                    b.store += n
                    b._written[idx] = True
                else:
                    b.atomic += n
                    b._read[idx] = True
                    b._written[idx] = True

    def _buffer(self, al) -> BufferStats:
        b = self._by_alloc.get(id(al))
        if b is None:
            name = al.name
            if name in self.buffers:            # a later launch: the same parameter again
                old = self.buffers[name]
                if len(old._read) != al.size:
                    name = f"{name} #{al.index}"
            b = self.buffers.get(name)
            if b is None or len(b._read) != al.size:
                b = self.buffers[name] = BufferStats(name, al.index, al.size)
            self._by_alloc[id(al)] = b
        return b

    def add_flops(self, op: str, input_type: str, flops: int) -> None:
        """Count ``flops`` tensor-core FLOPs of instruction ``op`` on ``input_type`` inputs.

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.add_flops("wgmma.mma_async", "bf16", 2 * 64 * 128 * 16)
            >>> st.flops
            {('wgmma.mma_async', 'bf16'): 262144}
        """
        key = (op, input_type)
        self.flops[key] = self.flops.get(key, 0) + int(flops)

    def update(self, instructions=0, thread_instructions=0, ctas=0, batches=0, seconds=0.0):
        """Add a finished launch's run counters (``launch`` calls this).

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.update(instructions=10, thread_instructions=320, ctas=1, seconds=0.5)
            >>> st.instructions, st.ctas, st.launches
            (10, 1, 1)
        """
        self.instructions += instructions
        self.thread_instructions += thread_instructions
        self.ctas += ctas
        self.seconds += seconds
        self.launches += 1
        self._ctx = None
        self._by_alloc = {}

    # ------------------------------------------------------------------ views
    @property
    def global_bytes(self) -> int:
        """All requested global traffic: loads + stores + atomics.

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.global_access("load", 128); st.global_access("atomic", 4)
            >>> st.global_bytes
            132
        """
        return self.global_load_bytes + self.global_store_bytes + self.global_atomic_bytes

    @property
    def unique_bytes(self) -> int:
        """Distinct bytes read plus distinct bytes written, over every buffer.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.interpret import Stats, launch
            >>> st = Stats()
            >>> x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
            >>> for _ in range(2):                      # counters accumulate over launches
            ...     launch(twice("N").ptx(N=64), "twice", [x, y], grid=(2, 1, 1), block=32, stats=st)
            >>> st.global_bytes, st.unique_bytes
            (1024, 512)
        """
        return sum(b.unique_read + b.unique_written for b in self.buffers.values())

    @property
    def tensor_flops(self) -> int:
        """Tensor-core FLOPs of every op and input type.

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.add_flops("mma.sync", "bf16", 4096); st.add_flops("mma.sync", "f16", 4096)
            >>> st.tensor_flops
            8192
        """
        return sum(self.flops.values())

    def flops_by_type(self) -> dict:
        """Input type -> tensor-core FLOPs (summed over ops).

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.add_flops("mma.sync", "bf16", 4096); st.add_flops("wgmma.mma_async", "bf16", 8192)
            >>> st.flops_by_type()
            {'bf16': 12288}
        """
        out: dict = {}
        for (_, t), n in self.flops.items():
            out[t] = out.get(t, 0) + n
        return out

    def as_dict(self) -> dict:
        """Every counter in a plain dict.

        Examples:
            >>> from jax_pyptx.interpret import Stats
            >>> st = Stats()
            >>> st.add_flops("mma.sync", "bf16", 4096)
            >>> d = st.as_dict()
            >>> d["flops"], d["ctas"]
            ({('mma.sync', 'bf16'): 4096}, 0)
        """
        return {"global_load_bytes": self.global_load_bytes,
                "global_store_bytes": self.global_store_bytes,
                "global_atomic_bytes": self.global_atomic_bytes,
                "unique_bytes": self.unique_bytes,
                "buffers": {n: {"load": b.load, "store": b.store, "atomic": b.atomic,
                                "unique_read": b.unique_read,
                                "unique_written": b.unique_written}
                            for n, b in self.buffers.items()},
                "bytes_by_op": {k: list(v) for k, v in self.bytes_by_op.items()},
                "flops": dict(self.flops), "instructions": self.instructions,
                "thread_instructions": self.thread_instructions, "ctas": self.ctas,
                "launches": self.launches}

    def __repr__(self):
        return (f"Stats(load={self.global_load_bytes}B, store={self.global_store_bytes}B, "
                f"atomic={self.global_atomic_bytes}B, unique={self.unique_bytes}B, "
                f"tensor_flops={self.tensor_flops}, ctas={self.ctas})")
