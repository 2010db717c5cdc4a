"""The one host launch: run a traced specialization on the CPU interpreter on host arrays.

TMA descriptor parameters get the interpreter's tensor maps (``interpret.tensor_map``), derived
from the Tile specs by ``specialize.tma.tma_spec`` exactly as the CUDA launch plan derives the
maps the C++ launcher encodes.

``kernel.interpret`` and ``perf.counts.measure`` (through :func:`run_on_host`), the JAX
runtime's CPU lowering (a host callback) and the PyTorch CPU impl all come here. Arrays are in
their logical layout: a ``Layout.COL`` tensor's buffer is its last two dims swapped in memory
(``docs/runtime.md``), so inputs are laid out that way before the launch and outputs read back
from it; every path gives the same answer.

Outputs that alias no input are ``launch(..., outputs=...)`` buffers: under the sanitizer they
start uninitialized, as XLA's and PyTorch's fresh output buffers are on a GPU, so a kernel that
reads one before writing it is reported, and so are the elements it never wrote when the launch
ends (``UnwrittenOutputError``) unless the output's ``Tile`` says ``partial=True`` or the call
names it in ``partial``; an input-output alias keeps the input's contents. Bytes a kernel never
writes read back as ``UNWRITTEN_BYTE`` (NaN in the float types: ``unwritten_output``). Tensor inputs that alias no output (and runtime scalars passed by
pointer) are ``launch(..., inputs=...)``: a store into one is an ``InputWriteError``, as it
would write a buffer XLA owns. A call batched on the grid by ``jax.vmap`` passes
``batch_items``: each batch item of a tensor is its own buffer to the sanitizer.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np

from ..errors import DeadlockError, InterpreterError, SpecializationError
from ..specs import Layout, memory_shape
from ..types import PtxType
from .binding import check_inputs, unknown_argument
from .dims import check_cluster_grid
from .empty import empty_outputs
from .options import (DEFAULT, CallOptions, check_options, merge_options, option_names,
                      split_options)
from ..scalars import scalar_value
from .tensor_maps import tma_spec

__all__ = ["HostLaunch", "run_on_host", "interpreter_stats", "to_memory", "from_memory"]

# launches run and seconds spent inside the interpreter (benchmarks subtract it)
interpreter_stats = {"launches": 0, "seconds": 0.0}
_stats_lock = threading.Lock()


def to_memory(a: np.ndarray, layout) -> np.ndarray:
    """A fresh C-order buffer the kernel may write: ``a`` as laid out in memory (COL: the
    last two dims swapped)."""
    if layout is Layout.COL and a.ndim >= 2:
        return np.array(np.swapaxes(a, -1, -2), order="C", copy=True)
    return np.array(a, order="C", copy=True)


UNWRITTEN_BYTE = 0xFF    # what an output holds where the kernel never writes it


def unwritten_output(shape, dtype) -> np.ndarray:
    """A fresh output buffer, every byte ``UNWRITTEN_BYTE``: NaN in the float types that have
    one (f64 to fp8), all ones in the integer types. On a GPU an output holds whatever was in
    its memory: an element the kernel never writes reads as NaN here, never as a zero that a
    reference could agree with."""
    dtype = np.dtype(dtype)
    raw = np.full(math.prod(shape) * dtype.itemsize, UNWRITTEN_BYTE, np.uint8)
    return raw.view(dtype).reshape(shape)


def from_memory(buf: np.ndarray, layout) -> np.ndarray:
    """The logical array of a buffer (COL: the last two dims swapped back, C order)."""
    if layout is Layout.COL and buf.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(buf, -1, -2))
    return buf


def clamped_boxes(traced) -> list:
    """Notes on the TMA descriptors of ``traced`` whose explicit ``tma_box`` was clamped to a
    smaller tensor (``specs.Tile.tma_box_shape``): a kernel that waits for the bytes of the
    box it asked for (``mbarrier.expect_tx``) waits forever, so a deadlock report names
    them."""
    tensors = list(traced.inputs) + list(traced.outputs)
    env = {**{k: v for k, v in traced.template.items() if isinstance(v, int)}, **traced.env}
    out = []
    for h in traced.tma:
        spec = tensors[h.index] if h.index < len(tensors) else None
        tile = getattr(spec, "tile", None)
        if tile is None or tile.tma_box is None or tile.tma_rank != 2:
            continue
        try:
            want = tuple(env[b] if isinstance(b, str) else b for b in tile.tma_box)
        except KeyError:
            continue
        if len(want) == len(h.box) and tuple(h.box) != want:
            nbytes = lambda box: math.prod(box) * h.dtype.nbytes
            out.append(f"TMA descriptor {h.param!r}: tma_box={want} was clamped to "
                       f"{tuple(h.box)} by the tensor's shape {tuple(h.shape)}, so each load "
                       f"brings {nbytes(h.box)} bytes, not {nbytes(want)}: an mbarrier "
                       f"expecting {nbytes(want)} (expect_tx) never completes; expect the "
                       f"clamped box's bytes or pass a tensor at least as large as the box")
    return out


class _TmaSource:
    """What ``tma_spec`` reads of a call, from a trace: label, tensor layouts, batch."""

    def __init__(self, label, traced):
        self.label = label
        self.tensor_tiles = list(traced.inputs) + list(traced.outputs)
        abi = traced.abi
        self.batch = abi.batch if abi is not None else ()
        self._abi = abi

    def mask(self, t: int) -> tuple:
        return self._abi.mask(t) if self.batch else ()


class HostLaunch:
    """One specialization ready to run on host arrays (what can be, computed once).

    ``grid``: the launch grid (default: the trace's); ``aliases``: ((tensor input index,
    output index), ...) pairs whose output is written in place of the input's buffer, as on
    the GPU; ``label``: the name errors use; ``out_shapes``: the outputs' logical shapes
    (default: the trace's; a call batched on the grid has its batch dims in front).
    """

    __slots__ = ("traced", "grid", "label", "_out_src", "_params", "_in_layouts",
                 "_out_layouts", "_out_bufs", "_aliased", "_partial", "_items", "_maps")

    def __init__(self, traced, grid=None, aliases=(), label=None, out_shapes=None):
        self.traced = t = traced
        self.grid = tuple(grid) if grid is not None else t.grid
        self.label = label or t.name
        check_cluster_grid(self.label, self.grid, t.cluster)
        alias = {o: i for i, o in aliases}
        self._in_layouts = [s.layout for s in t.inputs]
        self._out_layouts = [s.layout for s in t.outputs]
        self._out_src = [alias.get(j) for j in range(len(t.outputs))]
        self._aliased = set(alias.values())           # tensor inputs written as outputs
        self._partial = {j for j, o in enumerate(t.outputs) if getattr(o.tile, "partial", False)}
        self._items = _batch_items(t, self.grid)
        self._maps = {}           # TmaSpec -> (buffer signature, maps' fields): ``tensor_maps``
        shapes = out_shapes if out_shapes is not None else [o.shape for o in t.outputs]
        self._out_bufs = [(memory_shape(tuple(shape), o.layout), o.dtype.np_dtype)
                          for shape, o in zip(shapes, t.outputs)]
        scalar_at = {info.name: n for n, info in enumerate(t.scalars)}
        self._params = []
        for info in t.params:
            if info.kind == "tensor":
                self._params.append(("tensor", info.index, info))
            elif info.kind in ("scalar", "scalar_ptr"):
                self._params.append((info.kind, scalar_at[info.name], info))
            elif info.kind == "tma":
                handle = next(h for h in t.tma if h.param == info.name)
                self._params.append(("tma", tma_spec(_TmaSource(self.label, t), handle), info))
            else:
                self._params.append(("raw", info.name, info))

    def __call__(self, tensors, scalars=(), raw=None, options: CallOptions = DEFAULT,
                 stats=None) -> tuple:
        """Outputs (NumPy, logical layout) of one launch on ``tensors`` (the tensor inputs,
        in order), ``scalars`` (the runtime scalars, in order) and ``raw`` (raw_params
        values by name). ``options``: the interpreter's (``sanitize``, ``max_steps``,
        ``timeout``, ``timeline``, ``schedule``, ``seed``: ``interpret.launch``) and
        ``partial_outputs`` (indices of outputs the kernel may write only in part: with those
        whose Tile says ``partial=True``, never reported unwritten); ``stats`` (an
        ``interpret.Stats``) counts the launch's global bytes and tensor-core FLOPs."""
        from ..interpret import launch

        t = self.traced
        n_in = len(t.inputs)
        partial = self._partial | set(options.partial_outputs)
        bufs = [to_memory(np.asarray(a), lay) for a, lay in zip(tensors, self._in_layouts)]
        outs = []
        fresh = set()             # buffer indices of outputs that alias no input
        for (shape, dtype), src in zip(self._out_bufs, self._out_src):
            buf = bufs[src] if src is not None else unwritten_output(shape, dtype)
            if src is None:
                fresh.add(len(bufs))
            bufs.append(buf)
            outs.append(buf)
        args = []
        out_args = []             # launch(outputs=): they start uninitialized, as on a GPU
        part_args = []            # launch(partial_outputs=)
        in_args = []              # launch(inputs=): buffers XLA owns
        items = {}                # launch(batch_items=)
        for kind, where, info in self._params:
            buf = where if kind == "tensor" else where.operand if kind == "tma" else None
            if buf in fresh:
                out_args.append(len(args))
                if buf - n_in in partial:
                    part_args.append(len(args))
            elif (buf is not None and buf < n_in and buf not in self._aliased) or kind == "scalar_ptr":
                in_args.append(len(args))
            if kind == "tensor" and where in self._items:
                items[len(args)] = self._items[where]
            if kind == "tensor":
                args.append(bufs[where])
            elif kind == "scalar":
                args.append(self._scalar(scalars[where], info))
            elif kind == "scalar_ptr":
                args.append(np.asarray([self._scalar(scalars[where], info)],
                                       dtype=info.type.np_dtype))
            elif kind == "tma":
                try:
                    args.append(self.tensor_maps(where, bufs))
                except InterpreterError as e:
                    raise type(e)(f"kernel {self.label!r}: TMA descriptor {info.name!r}: "
                                  f"{e.message.removeprefix('tensor_map: ')} (the driver's "
                                  f"cuTensorMapEncodeTiled rejects it too)") from None
            elif raw is not None and where in raw:
                args.append(raw[where])
            else:
                raise SpecializationError(
                    f"kernel {self.label!r}: raw parameter {where!r} has no value; pass it "
                    f"by keyword (kernel(..., {where}=...), kernel.interpret(..., {where}=...))"
                    f" or name it like a shape variable or template parameter")
        t0 = time.perf_counter()
        try:
            launch(t.module, t.name, args, grid=self.grid, block=t.block, cluster=t.cluster,
                   smem=t.dynamic_smem, stats=stats, outputs=out_args, partial_outputs=part_args,
                   inputs=in_args, batch_items=items or None, **options.interpreter_kw())
        except DeadlockError as e:
            notes = clamped_boxes(t)
            if notes:                  # the likely cause: a kernel expecting the full box
                e.message += "; " + "; ".join(notes)
                e.args = ((f"{e.loc}: " if e.loc is not None else "") + e.message,)
            raise
        dt = time.perf_counter() - t0
        with _stats_lock:
            interpreter_stats["launches"] += 1
            interpreter_stats["seconds"] += dt
        return tuple(from_memory(o, lay) for o, lay in zip(outs, self._out_layouts))

    def _scalar(self, v, info):
        """Runtime scalar ``info`` as a NumPy scalar of its type (``jax_pyptx.scalars``:
        refused when it would be truncated, wrapped or overflow)."""
        return scalar_value(info.type, v, f"kernel {self.label!r}: runtime scalar {info.name}")

    def tensor_maps(self, ts, bufs):
        """The interpreter's tensor map(s) of ``TmaSpec`` ``ts`` over the operand's buffer (as
        the C++ launcher encodes them: one per batch item for a batched global-mode map). A
        map's fields depend on the buffer's shape, strides, dtype and contiguity only (its
        address is encoded at the launch): they are kept for the last such buffer."""
        from ..interpret import tensor_map
        from ..interpret.state.tensormap import TensorMap

        buf = bufs[ts.operand]
        sig = (buf.shape, buf.strides, buf.dtype, buf.flags.c_contiguous)
        got = self._maps.get(ts)
        if got is not None and got[0] == sig:
            maps = [TensorMap(buf, off, f) for off, f in got[1]]
        else:
            maps = [tensor_map(buf, box=ts.box, dtype=ts.data_type, dims=ts.global_dims,
                               strides=ts.global_strides, element_strides=ts.element_strides,
                               interleave=ts.interleave, swizzle=ts.swizzle,
                               l2_promotion=ts.l2_promotion, oob_fill=ts.oob_fill,
                               offset=i * ts.batch_stride)
                    for i in range(ts.batch)]
            self._maps[ts] = (sig, [(m.offset, m.fields) for m in maps])
        return maps[0] if ts.mode == "by_value" else maps


def _batch_items(t, grid) -> dict:
    """{tensor index: the batch item of each %ctaid.z} of a trace batched on the grid by
    ``jax.vmap`` (``specialize.abi``: z is the linear batch index, outermost level first; a
    tensor carries the levels of its mask)."""
    abi = t.abi
    if abi is None or not abi.batch or grid[2] != abi.batch_size:
        return {}
    levels = np.unravel_index(np.arange(abi.batch_size), abi.batch)
    out = {}
    for k in range(len(t.inputs) + len(t.outputs)):
        mask = abi.mask(k)
        lv = [lvl for lvl, m in enumerate(mask) if m]
        if not lv:
            continue
        out[k] = np.ravel_multi_index([levels[lvl] for lvl in lv], [abi.batch[lvl] for lvl in lv])
    return out


def run_on_host(kernel, arrays, kw: dict, stats=None) -> tuple:
    """``kernel.interpret(*arrays, **kw)``'s outputs (a tuple; ``perf.counts.measure`` passes
    ``stats``): the inputs counted, ``kw`` split into the interpret options
    (``CallOptions``) and template parameters, shape variables and raw parameter values
    (an unknown name is an error listing the valid ones), the call bound, an empty input
    answered with empty outputs, the specialization traced and launched on host arrays."""
    check_inputs(kernel, len(arrays))
    given, kw = split_options(kw, "interpret")
    unknown_argument(kernel, kw, allowed=[p.name for p in kernel.raw_params],
                     options=option_names("interpret"), what="the interpret options")
    options = merge_options({}, check_options(kernel, given))
    b = kernel.bind(*arrays, **kw)
    empty = empty_outputs(kernel, b.env)        # an empty input: empty outputs, no launch
    if empty is not None:
        return tuple(np.zeros(shape, dtype) for shape, dtype in empty)
    specs = kernel.in_specs
    tensors = [a for a, s in zip(arrays, specs) if not isinstance(s, PtxType)]
    scalars = [a for a, s in zip(arrays, specs) if isinstance(s, PtxType)]
    return _host_launch(b.trace())(tensors, scalars, b.raw_values(host=True), options,
                                   stats=stats)


def _host_launch(traced) -> HostLaunch:
    """The trace's ``HostLaunch`` on its own grid, made once (it only holds what the trace
    says)."""
    hl = traced.__dict__.get("_host_launch")
    if hl is None:
        hl = traced.__dict__["_host_launch"] = HostLaunch(traced)
    return hl
