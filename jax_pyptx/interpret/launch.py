"""``launch``: run any PTX entry on NumPy arrays the way a driver launch would."""
from __future__ import annotations

import hashlib
import time
import weakref

import numpy as np

from ..errors import InterpreterError
from ..ir.nodes import Module
from .state import memory as M
from .sanitizer import roles as R
from .state import shadow
from .machine.cluster import launch_shape
from .machine.program import Program
from .scheduler.handlers import decode_program
from .scheduler.schedule import EAGER, make_schedule, name_schedule
from .sanitizer.severity import sanitize_mode
from .scheduler.context import Context
from .scheduler.progress import DEFAULT_TIMEOUT
from .machine.mbarrier import check_balanced
from .stats import Stats
from .timeline import Timeline, TracedContext, check_path

MAX_SHARED = 232448          # 227 KB: the largest dynamic shared memory of sm_90 / sm_100
# shared memory one CTA may use (static + dynamic, with the opt-in), by SM version: CUDA C++
# Programming Guide, "Technical Specifications per Compute Capability"
SHARED_LIMITS = {50: 49152, 52: 49152, 53: 49152, 60: 49152, 61: 49152, 62: 49152, 70: 98304,
                 72: 98304, 75: 65536, 80: 166912, 86: 101376, 87: 166912, 89: 101376,
                 90: 232448, 100: 232448, 101: 232448, 103: 232448, 110: 232448, 120: 101376,
                 121: 101376}


def shared_limit(target) -> tuple:
    """``(bytes, arch)``: the shared memory one CTA may use on ``target`` (``"sm_90a"``, a
    module's ``.target`` tuple; ``MAX_SHARED`` for one this table does not know).

    Examples:
        >>> from jax_pyptx.interpret.launch import shared_limit
        >>> shared_limit("sm_80"), shared_limit(("sm_90a",))
        ((166912, 'sm_80'), (232448, 'sm_90a'))
    """
    names = (target,) if isinstance(target, str) else tuple(target or ())
    for name in names:
        digits = "".join(c for c in str(name).removeprefix("sm_") if c.isdigit())
        if str(name).startswith("sm_") and digits and int(digits) in SHARED_LIMITS:
            return SHARED_LIMITS[int(digits)], str(name)
    return MAX_SHARED, (names[0] if names else "sm_90a")
MAX_BATCH_SLOTS = 16384      # threads interpreted together (whole CTAs / clusters)
DEFAULT_MAX_STEPS = 50_000_000   # instructions dispatched per batch before InterpreterLimitError

_parse_cache: dict = {}
_prog_cache: dict = {}


def _dim3(v, what):
    if isinstance(v, (int, np.integer)):
        t = (int(v), 1, 1)
    else:
        t = tuple(int(x) for x in v) + (1,) * (3 - len(tuple(v)))
    if len(t) != 3 or any(x < 1 for x in t):
        raise InterpreterError(f"{what} must be a positive int or a tuple of up to 3 positive ints, got {v!r}")
    return t


def get_module(ptx) -> Module:
    if isinstance(ptx, Module):
        return ptx
    if not isinstance(ptx, str):
        raise InterpreterError(f"launch takes PTX text or a Module, got {type(ptx).__name__}")
    key = hashlib.sha1(ptx.encode()).hexdigest()
    m = _parse_cache.get(key)
    if m is None:
        from ..text.parser import parse
        m = parse(ptx)
        if len(_parse_cache) > 64:
            _parse_cache.clear()
        _parse_cache[key] = m
    return m


def get_program(module: Module, entry: str) -> Program:
    key = (id(module), entry)
    hit = _prog_cache.get(key)
    if hit is not None and hit[0]() is module:
        return hit[1]
    prog = Program(module, entry)
    decode_program(prog)
    if len(_prog_cache) > 128:
        _prog_cache.clear()
    _prog_cache[key] = (weakref.ref(module), prog)
    return prog


class LaunchMemory:
    def __init__(self, prog: Program):
        self.gspace = M.FlatSpace("global", M.GLOBAL_BASE)
        self.cspace = M.FlatSpace("const", M.CONST_BASE)
        self.pspace = M.FlatSpace("param", M.PARAM_BASE)
        for v in prog.global_vars:
            decl, data = v.decl
            a = self.gspace.add(data, f"global variable {v.name!r}", align=max(decl.align, decl.type.nbytes, 16))
            assert a.base == v.addr
        for v in prog.const_vars:
            decl, data = v.decl
            a = self.cspace.add(data, f"const variable {v.name!r}", align=max(decl.align, decl.type.nbytes, 16),
                                readonly=True)
            assert a.base == v.addr


_CTA_ORDERS: dict = {}              # (grid, cluster) -> LaunchState.cta_order's answer


class LaunchState:
    def __init__(self, grid, block, cluster, smem, mem, max_steps, explicit_cluster=False, timeout=None):
        self.grid, self.block, self.cluster, self.smem = grid, block, cluster, smem
        self.mem = mem
        self.max_steps = max_steps
        self.timeout = timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.explicit_cluster = explicit_cluster
        gx, gy, gz = grid
        cx, cy, cz = cluster
        self._ncx, self._ncy = gx // cx, gy // cy
        csize = cx * cy * cz
        self.order = self.cta_order()
        self._csize = csize                # cluster k: order[k * csize:(k + 1) * csize]
        self._nclusters = len(self.order) // csize
        self.special_cache = {}            # (name, slots) -> special register (Context.special)
        self._next = 0                     # clusters before this one have started or are cancelled
        self.cancelled = 0
        self.warned = set()                # (error class, instruction) a SanitizerWarning named
        self.schedule = EAGER              # schedule.Schedule of the launch
        self.global_races = False          # global_races.GlobalRaces, None, or False: not decided
        self.pt_one = {}                   # (threads, tag) -> shared pointer tags, and pointer
        #                                    value -> its allocation's tag (provenance)

    def start_clusters(self, n: int) -> tuple:
        """The CTA ids of the next ``n`` clusters to start (fewer at the end of the grid)."""
        k = min(n, self._nclusters - self._next)
        take = self.order[self._next * self._csize:(self._next + k) * self._csize]
        self._next += k
        return take

    def try_cancel(self):
        """Cancel the launch of the next cluster that has not started: the ctaid ``(x, y, z)`` of
        its first CTA, or None when every cluster of the grid has started (or was cancelled)."""
        if self._next >= self._nclusters:
            return None
        first = self.order[self._next * self._csize]
        self._next += 1
        self.cancelled += 1
        gx, gy, _ = self.grid
        return first % gx, (first // gx) % gy, first // (gx * gy)

    def cluster_rank(self, cta_ids) -> np.ndarray:
        """Each CTA's rank in its cluster (``cta_ids``: their linear ids), int64; a few CTAs'
        worked out on Python ints."""
        gx, gy, _ = self.grid
        cx, cy, cz = self.cluster
        if len(cta_ids) <= 64:
            return np.array([(c % gx) % cx + cx * ((c // gx) % gy % cy + cy * (c // (gx * gy) % cz))
                             for c in map(int, cta_ids)], np.int64)
        c = np.asarray(cta_ids, np.int64)
        x, y, z = c % gx, (c // gx) % gy, c // (gx * gy)
        return (x % cx) + cx * ((y % cy) + cy * (z % cz))

    def cta_order(self):
        """CTA linear ids ordered cluster by cluster (ranks contiguous): a tuple, made once
        per grid and cluster shape."""
        key = (tuple(self.grid), tuple(self.cluster))
        got = _CTA_ORDERS.get(key)
        if got is None:
            if len(_CTA_ORDERS) > 256:
                _CTA_ORDERS.clear()
            got = _CTA_ORDERS[key] = tuple(self._cta_order())
        return got

    def _cta_order(self):
        gx, gy, gz = self.grid
        cx, cy, cz = self.cluster
        # nested loops kz, ky, kx (clusters) then rz, ry, rx (ranks), innermost last
        kz, ky, kx, rz, ry, rx = np.meshgrid(np.arange(gz // cz), np.arange(gy // cy), np.arange(gx // cx),
                                             np.arange(cz), np.arange(cy), np.arange(cx), indexing="ij",
                                             sparse=True)
        x, y, z = kx * cx + rx, ky * cy + ry, kz * cz + rz
        return (x + gx * (y + gy * z)).reshape(-1).tolist()


def _scalar_bytes(value, p):
    """The bytes of ``value`` for scalar parameter ``p``: a number converted only when nothing
    is lost (``jax_pyptx.scalars``: an integer type takes an exact integer in range, a
    ``.bN`` either signedness, a float type any real number within its range, never a
    string); a typed NumPy float for a ``.bN`` of its width passes its bits."""
    t = p.type
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise InterpreterError(
            f"param {p.name!r} is a .{t.name} scalar but got an array of shape {value.shape}; "
            f"arrays go to .u64/.b64 pointer params")
    from .state.operands import np_dtype
    dt = np_dtype(t)
    v = np.asarray(value) if isinstance(value, (np.generic, np.ndarray)) else None
    if t.kind == "bits" and isinstance(value, np.generic) and v.dtype.kind not in "uib" \
            and v.dtype.itemsize == dt.itemsize:
        # a typed float scalar (np.float16, ml_dtypes.bfloat16, np.float32, ...) for a .bN
        # param: its bits, as a kernel that moves halves in .b16 registers expects
        return v.tobytes()
    if t.bits == 64 and t.kind in ("unsigned", "signed", "bits") and \
            isinstance(value, (float, np.floating)):
        raise InterpreterError(
            f"param {p.name!r} (.{t.name}) got {value!r} ({type(value).__name__}): a 64-bit "
            f"integer parameter takes a pointer (a NumPy array, whose address it gets; None "
            f"for a null pointer) or an integer, never a float")
    from ..scalars import scalar_value
    try:
        got = scalar_value(t, value, f"param {p.name!r}", InterpreterError)
    except InterpreterError as e:
        if t.kind == "bits" and isinstance(value, (float, np.floating)):
            raise InterpreterError(
                f"{e.message}, or a typed NumPy float of {t.bits} bits (np.float16, "
                f"ml_dtypes.bfloat16, np.float32, ...) whose bits it gets") from None
        raise
    if t.kind == "pred":
        return np.array([bool(got)], np.uint8).tobytes()
    if isinstance(got, int):                   # .b128: no NumPy type
        return got.to_bytes(t.bits // 8, "little")
    if t.is_float:                             # its own bytes (tf32: an f32's)
        return np.asarray(got).tobytes()
    return np.asarray(got).astype(dt, copy=False).tobytes()


def _array_param_bytes(a, p, size: int) -> bytes:
    """The bytes of argument ``a`` for the byte-array parameter ``p`` (``.param .b8 name[N]``
    and other ``.param .T name[N]``, ``size`` bytes in all): ``bytes`` / ``bytearray`` /
    ``memoryview``, or any NumPy scalar (``np.float16``, ``ml_dtypes.bfloat16``, ``np.uint16``,
    ...) or array (C order) whose bytes fill the parameter exactly. Triton passes an fp16 / bf16
    scalar as ``.param .b8 name[2]``, so ``np.float16(x)`` is the natural argument for it.

    A Python ``int`` / ``float`` / ``bool`` (or a list) has no width of its own, so which bytes
    it stands for is ambiguous (``1.5`` as f16, bf16 or f32?): it is refused, as is anything
    whose byte count differs from the parameter's, with the parameter, its size and what was
    given named."""
    name = f"param {p.name!r}"
    eg = {1: "np.uint8(x)", 2: "np.float16(x), ml_dtypes.bfloat16(x), np.uint16(x)",
          4: "np.float32(x), np.uint32(x)", 8: "np.float64(x), np.uint64(x)"}.get(
              size, f"a uint8 array of {size}")
    tm_hint = ", or a tensor map (jax_pyptx.interpret.tensor_map)" if size == 128 else ""
    allowed = (f"a .{p.type.name}[{p.array}] param takes a NumPy scalar or array of exactly {size} "
               f"bytes (e.g. {eg}) or bytes of length {size}{tm_hint}")
    if isinstance(a, (bytes, bytearray, memoryview)):
        b, what = bytes(a), type(a).__name__
    elif isinstance(a, (np.ndarray, np.generic)):
        if a.dtype.kind in "OU":
            raise InterpreterError(f"{name} takes {size} bytes, got NumPy data of dtype {a.dtype}, which "
                                   f"has no fixed byte image; {allowed}")
        b = a.tobytes()                 # C order for an array of any layout
        what = (f"a {a.dtype} array of shape {a.shape}" if isinstance(a, np.ndarray)
                else f"a {a.dtype} scalar")
    elif isinstance(a, (bool, int, float, complex)):
        raise InterpreterError(f"{name} takes {size} bytes, got the Python {type(a).__name__} {a!r}, "
                               f"which has no width of its own; {allowed}")
    else:
        raise InterpreterError(f"{name} takes {size} bytes, got {type(a).__name__}; {allowed}")
    if len(b) != size:
        raise InterpreterError(f"{name} takes {size} bytes, got {len(b)} ({what}); {allowed}")
    return b


_is_tensor_map = R.is_tensor_map


def _place(mem, arr, desc, placed, copy_back):
    """Give ``arr`` a device address (its memory is the allocation, written in place; a
    non-contiguous or read-only array is copied, and a writable one copied back after)."""
    if arr.flags.c_contiguous and arr.flags.writeable:
        data = arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)
    else:
        data = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).copy()
        if arr.flags.writeable:
            copy_back.append((arr, data))
    if not arr.flags.writeable:
        # stores could not reach the caller's array: refuse them (an input may be read-only;
        # a kernel that writes it is told so instead of losing the result)
        desc += ", a read-only array: pass a writable array to receive the results"
    al = mem.gspace.add(data, desc, readonly=not arr.flags.writeable)
    if arr.flags.c_contiguous and arr.flags.writeable and arr.size:
        start = arr.__array_interface__["data"][0]
        placed.append((start, start + arr.nbytes, al))
    return al


def _tensor_map_param(mem, p, size, a, placed, copy_back) -> bytes:
    """The parameter bytes for tensor map(s) ``a``: the 128-byte map itself for a ``.b8[128]``
    parameter, or the address of the maps laid out in global memory for a 64-bit one."""
    maps = [a] if not isinstance(a, (list, tuple)) else list(a)
    raw = []
    for tm in maps:
        arr = tm.array
        start = arr.__array_interface__["data"][0]
        base = None
        for lo, hi, al in placed:
            if lo <= start and start + arr.nbytes <= hi:
                base = al.base + (start - lo)
                break
        if base is None:
            al = _place(mem, arr, f"tensor of param {p.name!r} ({arr.dtype}{list(arr.shape)})", placed,
                        copy_back)
            base = al.base
        raw.append(tm.encode(base))
    if p.array is not None:
        if size != 128 or len(raw) != 1:
            raise InterpreterError(f"param {p.name!r} is .b8[{p.array}]: a tensor map by value is a "
                                   f".b8[128] parameter holding one map")
        return raw[0]
    if p.type.bits != 64:
        raise InterpreterError(f"param {p.name!r} is .{p.type.name}: tensor maps go to a .b8[128] "
                               f"parameter (by value) or a 64-bit pointer parameter (in global memory)")
    data = np.frombuffer(b"".join(raw), np.uint8).copy()
    al = mem.gspace.add(data, f"tensor map{'s' if len(raw) > 1 else ''} of param {p.name!r}", align=128)
    return np.uint64(al.base).tobytes()


def _counting_program(module, entry, ops: dict) -> Program:
    """A private (uncached) program of ``entry`` whose non-control instructions add the
    number of threads executing them to ``ops[opcode]`` (``Stats(count_ops=True)``)."""
    from .machine.registry import K_OP

    prog = Program(module, entry)
    decode_program(prog)

    def counted(fn, key):
        def run(ctx, sub):
            ops[key] = ops.get(key, 0) + sub.n
            return fn(ctx, sub)
        return run

    for d in prog.code:
        d.seg = d.irun = None           # every instruction counted: none runs in a batch
        if d.kind == K_OP and d.fn is not None:
            d.fn = counted(d.fn, d.ins.full_opcode)
    return prog


def _run_batch(ctx):
    """Run one batch of CTAs and the checks made when it has finished."""
    ctx.run()
    if ctx.bulk_late:                   # bulk stores never waited for land as the CTAs exit
        from .sanitizer.bulk_groups import run_bulk
        run_bulk(ctx)
    for check in ctx.at_exit:
        check(ctx)
    if ctx.mbar:
        check_balanced(ctx)
    if ctx.cp_pending:
        from .scheduler.context import Group
        from .ops.load_store import cp_complete
        cp_complete(ctx, Group(np.arange(ctx.N), 0, ctx.N), None)


def launch(ptx_or_module, entry: str, args, *, grid=(1, 1, 1), block=(1, 1, 1), cluster=None,
           smem: int = 0, sanitize: bool | str = True, max_steps: int | None = None, timeout: float | None = None,
           stats: dict | None = None, timeline=None, outputs=None, partial_outputs=None, inputs=None,
           batch_items=None, schedule: str = "eager", seed: int | None = None) -> None:
    """Run kernel ``entry`` of ``ptx_or_module`` (PTX text or a ``Module``) on the CPU.

    ``args`` follow the entry's parameters in order: a NumPy array for a ``.u64``/``.b64``
    pointer parameter (it receives the array's device address; stores write into the array in
    place), a NumPy or Python scalar for a scalar parameter (converted to its type), for a
    byte-array parameter (``.b8 name[N]``, how Triton passes an fp16 / bf16 scalar) ``bytes`` or
    any NumPy scalar or array whose bytes fill it exactly (``np.float16(x)`` for ``.b8 h[2]``; a
    Python number, having no width, is refused), ``None`` for a null pointer. ``smem`` is the
    dynamic shared memory size for ``.extern .shared`` arrays. ``sanitize``: ``True`` (the
    default) raises an ``InterpreterError`` subclass for what would be wrong or undefined on a
    GPU and warns (``SanitizerWarning``, once per instruction) for PTX that breaks the letter of
    the ISA while hardware gives the defined result; ``"strict"`` raises for those too;
    ``False`` turns every check off (memory outside every allocation, unknown instructions and
    what cannot be executed still raise; ``severity``). ``cluster``: the cluster shape (None:
    the kernel's ``.reqnctapercluster``, else
    no clusters); all CTAs of a cluster run together. ``max_steps`` (default
    ``DEFAULT_MAX_STEPS``) bounds the instructions dispatched per batch of CTAs and ``timeout``
    (seconds, default ``progress.DEFAULT_TIMEOUT``, 300; ``math.inf`` for none) the wall time
    of the launch: either raises ``InterpreterLimitError`` naming where every warp is and how
    to raise the limit. A launch running longer than a few seconds prints a progress line on
    stderr now and then (instructions, rate, CTAs done; ``progress.PROGRESS_AFTER``). Warps
    spinning forever in a loop that only reads memory while the others are parked are reported
    as a ``DeadlockError`` as soon as that is certain (``progress``). ``stats``, when given,
    receives counters of the run: a dict gets the instruction and CTA counts; a
    ``jax_pyptx.interpret.Stats`` also counts the global-memory bytes and tensor-core FLOPs
    (``interpret/stats.py``). ``timeline``, a file
    path (str or ``os.PathLike``), writes a Chrome / Perfetto trace of the run there (open it
    in https://ui.perfetto.dev or chrome://tracing): a process per CTA, a track per warp with
    its instruction runs and barrier / mbarrier waits, and tracks of asynchronous operations
    (TMA copies, wgmma, tcgen05.mma, cp.async) from issue to completion. Its clock is
    abstract: one unit is one warp instruction issued by the scheduler
    (``interpret/timeline.py``). The file is written atomically when the launch ends, also
    when the kernel fails (up to the failure, the error in ``otherData``); None (the default)
    records nothing and costs nothing.

    ``schedule`` chooses when asynchronous work completes and which warps run next:
    ``"eager"`` (the default: as early as allowed), ``"late"`` (a TMA / bulk copy lands when a
    wait needs its mbarrier phase, a wgmma reads its operands at its wait_group, a tcgen05.mma
    runs when its commit arrives) or
    ``"random"`` (either, and warps in random order, reproducibly from ``seed``): a kernel
    missing a wait computes right under one and wrong under another (``interpret/scheduler/schedule.py``).
    A report under ``"late"`` or ``"random"`` names the schedule and seed that showed it.

    ``outputs`` names the arguments that are output buffers, by index into ``args`` or by
    parameter name (an int, a name, or a sequence of them). On a GPU an output buffer holds
    whatever was there before, so with the sanitizer on an output starts *uninitialized*: a
    load or atomic of a byte of it that no thread of the launch has written is an
    ``UninitializedReadError`` naming the instruction (a kernel doing ``out[i] += x`` without
    writing ``out[i]`` first). The array's contents are not changed; bytes the kernel never
    writes come back as they were. Arguments not named (inputs, and buffers updated in place,
    like an input-output alias) keep their contents as defined values. A tensor map argument
    named in ``outputs`` makes the array it describes an output. When the launch ends, the
    elements of an output that no thread wrote are an ``UnwrittenOutputError`` (the first
    ranges, their count, the first element's index): on a GPU they would hold garbage.
    ``partial_outputs`` (the same spelling, a subset of ``outputs``) names the outputs a kernel
    means to write only in part; they are not reported.

    ``inputs`` names the arguments that are inputs only (a buffer XLA owns, under ``jax.jit``
    on a GPU): a store or atomic into one is an ``InputWriteError`` naming the instruction and
    the thread. ``batch_items`` splits array arguments into the items of a ``jax.vmap``
    batched on the grid: ``{argument: item_of_z}``, ``item_of_z`` the item (0, 1, ...) each
    value of ``%ctaid.z`` works on; the array is that many equal items, and an access through
    a pointer of it that leaves the CTA's item is a ``ProvenanceError``. Every access through
    a pointer loaded from a parameter is checked against the buffer the pointer came from: an
    address computed from ``X`` that lands in ``W`` is a ``ProvenanceError`` naming both
    (``interpret/sanitizer/provenance.py``). With ``sanitize=False``, ``outputs``,
    ``partial_outputs``, ``inputs`` and ``batch_items`` have no effect.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.interpret import launch
        >>> ptx_text = '''
        ... .version 8.5
        ... .target sm_90a
        ... .address_size 64
        ... .visible .entry k(.param .u64 Y)
        ... {
        ...     .reg .b32 %r<2>;
        ...     .reg .b64 %rd<3>;
        ...     ld.param.u64 %rd0, [Y];
        ...     cvta.to.global.u64 %rd0, %rd0;
        ...     mov.u32 %r0, %tid.x;
        ...     mul.wide.u32 %rd1, %r0, 4;
        ...     add.u64 %rd2, %rd0, %rd1;
        ...     st.global.u32 [%rd2], %r0;
        ...     ret;
        ... }
        ... '''
        >>> y = np.zeros(32, np.uint32)
        >>> launch(ptx_text, "k", [y], grid=1, block=32, timeout=10.0, outputs=[0])
        >>> y[:5]
        array([0, 1, 2, 3, 4], dtype=uint32)
    """
    t0 = time.perf_counter()
    sanitize = sanitize_mode(sanitize)
    shadow.settle_allocator()
    sched = make_schedule(schedule, seed)
    tl_path = check_path(timeline)
    max_steps, timeout = _limits(max_steps, timeout)
    module = get_module(ptx_or_module)
    if isinstance(stats, Stats) and stats.count_ops:
        prog = _counting_program(module, entry, stats.thread_ops)
    else:
        prog = get_program(module, entry)
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    cluster, explicit, smem = _check_shape(module, prog, entry, grid, block, cluster, smem)
    args = list(args)
    params = prog.param_layout
    out_idx, partial_idx, in_idx = _roles(entry, params, args, outputs, partial_outputs, inputs)

    mem = LaunchMemory(prog)
    placed, homes, copy_back = _pass_arguments(mem, prog, entry, params, args, out_idx)
    unwritten = []             # outputs whose unwritten elements the end of the launch reports
    if sanitize:
        if out_idx:
            unwritten = R.start_outputs(mem, args, out_idx, partial_idx, params, placed, homes)
        R.mark_inputs(args, in_idx, params, placed, homes)
        R.mark_items(mem, batch_items, args, params, entry, grid, homes)

    counters = stats if isinstance(stats, Stats) else None
    if counters is not None:
        mem.gspace.counter = counters.global_access
    state = LaunchState(grid, block, cluster, smem, mem, max_steps, explicit, timeout)
    state.schedule = sched
    tl = None if tl_path is None else Timeline(tl_path, prog, state)
    steps, tsteps, batches = _run_batches(prog, state, sanitize, tl, counters)
    if tl is not None:
        tl.write()
    for arr, data in copy_back:
        arr[...] = data.view(arr.dtype).reshape(arr.shape)
    if stats is not None:
        csize = cluster[0] * cluster[1] * cluster[2]
        stats.update(instructions=steps, thread_instructions=tsteps,
                     ctas=len(state.order) - state.cancelled * csize,    # cancelled clusters never ran
                     batches=batches, seconds=time.perf_counter() - t0)
    if unwritten:
        R.check_written(unwritten, entry)
    _recycle(mem, state)
    return None


def _recycle(mem, state):
    """The sanitizer's large arrays of a launch that ended go to the next one (``shadow``)."""
    if state.global_races:
        state.global_races.recycle()
    for al in mem.gspace.allocs:
        buf = al.release_init()
        if buf is not None:
            shadow.recycle(buf)


def _end_batch(ctx):
    """A batch that ended: its shared, local and tensor memory and their sanitizer arrays go to
    the next batch or launch (``shadow``: mapped pages, refilled with one ``memset``, where a
    fresh array would take a page fault per page it touches), and what refers back to the
    context lets go of it (the launch's budget, the race tracker's warning hook), so that its
    arrays are freed now, not by a later garbage collection: a launch leaves no cycle."""
    budget = ctx.launch.__dict__.get("budget")
    if budget is not None and budget.ctx is ctx:
        budget.end()
    sh = ctx.shared
    if sh.race is not None:
        sh.race.warn = None
        sh.race.recycle()
    if ctx.async_proxy is not None:
        ctx.async_proxy.recycle()
    sh.recycle()
    shadow.recycle(*ctx.store_units.values())
    ctx.local.recycle()
    if ctx.tmem is not None:
        ctx.tmem.recycle()


def _limits(max_steps, timeout) -> tuple:
    """``launch``'s ``max_steps`` and ``timeout`` with their defaults, checked."""
    max_steps = DEFAULT_MAX_STEPS if max_steps is None else int(max_steps)
    if max_steps < 1:
        raise InterpreterError(f"max_steps must be a positive number of instructions, got {max_steps}")
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    if not timeout > 0:
        raise InterpreterError(f"timeout must be a positive number of seconds (math.inf for none), got {timeout!r}")
    return max_steps, timeout


def _check_shape(module, prog, entry, grid, block, cluster, smem) -> tuple:
    """The CTA's thread count, the cluster shape (``launch_shape``) and the shared memory
    against the architecture's limits; returns ``(cluster, explicit, smem)``, kept with the
    program for the launch shape (a kernel launched again: one look-up)."""
    known = prog.launch_shapes
    try:
        key = (grid, block, cluster, smem)
        got = known.get(key)
    except TypeError:               # (a cluster or smem given as a list: checked every time)
        key = got = None
    if got is not None:
        return got
    got = _shape_checked(module, prog, entry, grid, block, cluster, smem)
    if key is not None and len(known) < 64:
        known[key] = got
    return got


def _shape_checked(module, prog, entry, grid, block, cluster, smem) -> tuple:
    nthreads = block[0] * block[1] * block[2]
    if nthreads > 1024:
        raise InterpreterError(f"a CTA has at most 1024 threads, block={block} has {nthreads}")
    cluster, explicit = launch_shape(cluster, grid, prog.entry.directives)
    smem = int(smem)
    if smem < 0:
        raise InterpreterError(f"smem must be >= 0, got {smem}")
    # dynamic shared memory nobody declares is unused, but the driver refuses a launch whose
    # static + dynamic size passes the architecture's limit all the same
    total_shared = (prog.dynamic_shared_offset if prog.extern_shared else
                    prog.static_shared_size) + smem
    limit, arch = shared_limit(module.target)
    if total_shared > limit:
        raise InterpreterError(
            f"kernel {entry!r} needs {total_shared} bytes of shared memory "
            f"({prog.static_shared_size} static + {smem} dynamic); {arch} allows at most "
            f"{limit} bytes per CTA, so no GPU could launch it")
    return cluster, explicit, smem


def _roles(entry, params, args, outputs, partial_outputs, inputs) -> tuple:
    """The argument count checked; the indices of ``outputs``, ``partial_outputs`` and
    ``inputs`` (``roles.arg_indices``), consistent with each other."""
    if len(args) != len(params):
        names = ", ".join(f"{p.name} (.{p.type.name}{f'[{p.array}]' if p.array else ''})" for p, _, _ in params)
        raise InterpreterError(f"kernel {entry!r} takes {len(params)} arguments ({names}), got {len(args)}")
    out_idx = R.arg_indices("outputs", outputs, args, params, entry)
    partial_idx = R.arg_indices("partial_outputs", partial_outputs, args, params, entry)
    in_idx = R.arg_indices("inputs", inputs, args, params, entry)
    for i in partial_idx:
        if i not in out_idx:
            raise InterpreterError(f"partial_outputs names argument {i} (param {params[i][0].name!r}), "
                                   f"which is not in outputs: only an output can be written in part")
    for i in in_idx:
        if i in out_idx:
            raise InterpreterError(f"argument {i} (param {params[i][0].name!r}) is named in both inputs "
                                   f"and outputs")
    return out_idx, partial_idx, in_idx


def _pass_arguments(mem, prog, entry, params, args, out_idx) -> tuple:
    """Write the kernel's parameter buffer: arrays placed in global memory (their device
    address passed), scalars, byte arrays, null pointers and tensor maps. Returns
    ``(placed, homes, copy_back)``: (first byte, end, allocation) of each placed array, the
    allocation of each array argument by index, and (array, data) pairs to copy back."""
    pbuf = np.zeros(max(prog.param_size, 1), np.uint8)
    copy_back = []
    placed = []                 # (first byte, end, allocation) of arrays given device addresses
    homes = {}                  # argument index -> the allocation of its array
    maps = []
    for i, ((p, off, size), a) in enumerate(zip(params, args)):
        if _is_tensor_map(a):
            maps.append((p, off, size, a))
            continue
        if p.array is not None:
            pbuf[off:off + size] = np.frombuffer(_array_param_bytes(a, p, size), np.uint8)
            continue
        if a is None:
            pbuf[off:off + size] = 0
            continue
        if not isinstance(a, np.ndarray) and hasattr(a, "__array__") and not np.isscalar(a):
            a = np.array(a)
        if isinstance(a, np.ndarray) and a.ndim > 0:
            if p.type.bits != 64:
                raise InterpreterError(
                    f"param {p.name!r} is .{p.type.name}: an array can only be passed to a 64-bit pointer "
                    f"param (.u64/.b64)")
            desc = f"param {p.name!r} ({a.dtype}{list(a.shape)}{', an output' if i in out_idx else ''})"
            al = _place(mem, a, desc, placed, copy_back)
            homes[i] = al
            pbuf[off:off + 8] = np.frombuffer(np.uint64(al.base).tobytes(), np.uint8)
            continue
        pbuf[off:off + size] = np.frombuffer(_scalar_bytes(a, p), np.uint8)
    for p, off, size, a in maps:
        pbuf[off:off + size] = np.frombuffer(_tensor_map_param(mem, p, size, a, placed, copy_back), np.uint8)
    mem.pspace.add(pbuf, f"kernel params of {entry!r}", readonly=True)
    return placed, homes, copy_back


def _run_batches(prog, state, sanitize, tl, counters) -> tuple:
    """Run every cluster of the launch, batch by batch; returns (instructions, thread
    instructions, batches). A failure names the schedule and ends the timeline with it."""
    cluster, block = state.cluster, state.block
    csize = cluster[0] * cluster[1] * cluster[2]
    slots_per_cta = -(-(block[0] * block[1] * block[2]) // 32) * 32
    per_batch = max(csize, (MAX_BATCH_SLOTS // max(slots_per_cta, 1)) // csize * csize)
    steps = tsteps = batches = 0
    with np.errstate(all="ignore"):
        # clusters start batch by batch, in order; one not started yet may be cancelled
        # (clusterlaunchcontrol.try_cancel: LaunchState.try_cancel) and then never runs
        while True:
            ctas = state.start_clusters(per_batch // csize)
            if not ctas:
                break
            batches += 1
            if tl is None:
                ctx = Context(prog, state, ctas, sanitize=sanitize)
            else:
                ctx = TracedContext(prog, state, ctas, sanitize=sanitize, timeline=tl)
            if counters is not None:
                ctx.stats = counters
                counters._ctx = ctx
            try:
                _run_batch(ctx)
            except InterpreterError as e:
                name_schedule(e, state.schedule)
                if tl is not None:      # the trace up to the failure, then the error
                    tl.end_batch(ctx)
                    tl.error = f"{type(e).__name__}: {e}"
                    tl.write()
                raise
            if tl is not None:
                tl.end_batch(ctx)
            steps += ctx.steps
            tsteps += ctx.tsteps
            _end_batch(ctx)
    return steps, tsteps, batches
