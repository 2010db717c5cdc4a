"""The one host launch: run a traced specialization on the CPU interpreter on host arrays.

``kernel.interpret``, the JAX runtime's CPU lowering (a host callback) and the PyTorch CPU
impl all come here. Arrays are in their logical layout: a ``Layout.COL`` tensor's buffer is
its last two dims swapped in memory (``docs/runtime.md``), so inputs are laid out that way
before the launch and outputs read back from it; every path gives the same answer.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ..errors import InterpreterError, SpecializationError
from ..specs import Layout, memory_shape

__all__ = ["HostLaunch", "interpreter_stats", "to_memory", "from_memory", "tensor_maps"]

# launches run and seconds spent inside the interpreter (benchmarks subtract it)
interpreter_stats = {"launches": 0, "seconds": 0.0}
_stats_lock = threading.Lock()


def to_memory(a: np.ndarray, layout) -> np.ndarray:
    """A fresh C-order buffer the kernel may write: ``a`` as laid out in memory (COL: the
    last two dims swapped)."""
    if layout is Layout.COL and a.ndim >= 2:
        return np.array(np.swapaxes(a, -1, -2), order="C", copy=True)
    return np.array(a, order="C", copy=True)


def from_memory(buf: np.ndarray, layout) -> np.ndarray:
    """The logical array of a buffer (COL: the last two dims swapped back, C order)."""
    if layout is Layout.COL and buf.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(buf, -1, -2))
    return buf


def tensor_maps(handle, layout, buf: np.ndarray, abi=None):
    """The interpreter's tensor map(s) for TMA descriptor ``handle`` over ``buf`` (the
    tensor's memory buffer), as the CUDA launcher encodes them: dims, box and element strides
    of the memory layout (``Layout.COL``: the last two swapped), innermost first. A tensor
    batched on the grid (``abi``) gets one map per batch item, laid out consecutively (the
    kernel adds ``%ctaid.z * 128`` to the descriptor address)."""
    from ..interpret.tensormap import tensor_map

    mem = memory_shape(tuple(handle.shape), layout)
    box = memory_shape(tuple(handle.box), layout)
    estr = memory_shape(tuple(handle.element_strides or (1,) * len(mem)), layout)
    kw = dict(box=tuple(reversed(box)), dtype=handle.dtype.name, dims=tuple(reversed(mem)),
              element_strides=tuple(reversed(estr)), interleave=handle.interleave,
              swizzle=handle.swizzle, l2_promotion=handle.l2_promotion,
              oob_fill=handle.oob_fill)
    es = handle.dtype.nbytes
    strides, acc = [], es
    for d in kw["dims"][:-1]:
        acc *= d
        strides.append(acc)
    kw["strides"] = tuple(strides)
    batched = abi is not None and abi.batch and any(abi.mask(handle.index))
    if not batched:
        return tensor_map(buf, **kw)
    item = int(np.prod(mem)) * es
    return [tensor_map(buf, offset=i * item, **kw) for i in range(abi.batch_size)]


class HostLaunch:
    """One specialization ready to run on host arrays (what can be, computed once).

    ``grid``: the launch grid (default: the trace's); ``aliases``: ((tensor input index,
    output index), ...) pairs whose output is written in place of the input's buffer, as on
    the GPU; ``label``: the name errors use; ``out_shapes``: the outputs' logical shapes
    (default: the trace's; a call batched on the grid has its batch dims in front).
    """

    __slots__ = ("traced", "grid", "label", "_out_src", "_params", "_in_layouts",
                 "_out_layouts", "_out_bufs")

    def __init__(self, traced, grid=None, aliases=(), label=None, out_shapes=None):
        self.traced = t = traced
        self.grid = tuple(grid) if grid is not None else t.grid
        self.label = label or t.name
        alias = {o: i for i, o in aliases}
        self._in_layouts = [s.layout for s in t.inputs]
        self._out_layouts = [s.layout for s in t.outputs]
        self._out_src = [alias.get(j) for j in range(len(t.outputs))]
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
                self._params.append(("tma", None, info))
            else:
                self._params.append(("raw", info.name, info))

    def __call__(self, tensors, scalars=(), raw=None, sanitize: bool = True, max_steps=None,
                 timeout=None, stats=None) -> tuple:
        """Outputs (NumPy, logical layout) of one launch on ``tensors`` (the tensor inputs,
        in order), ``scalars`` (the runtime scalars, in order) and ``raw`` (raw_params
        values by name). ``max_steps`` / ``timeout``: the interpreter's limits (None: its
        defaults); ``stats`` (an ``interpret.Stats``) counts the launch's global bytes and
        tensor-core FLOPs."""
        from ..interpret import launch

        t = self.traced
        bufs = [to_memory(np.asarray(a), lay) for a, lay in zip(tensors, self._in_layouts)]
        outs = []
        for (shape, dtype), src in zip(self._out_bufs, self._out_src):
            buf = bufs[src] if src is not None else np.zeros(shape, dtype=dtype)
            bufs.append(buf)
            outs.append(buf)
        args = []
        for kind, where, info in self._params:
            if kind == "tensor":
                args.append(bufs[where])
            elif kind == "scalar":
                args.append(np.asarray(scalars[where], dtype=info.type.np_dtype)[()])
            elif kind == "scalar_ptr":
                args.append(np.asarray([scalars[where]], dtype=info.type.np_dtype))
            elif kind == "tma":
                handle = next(h for h in t.tma if h.param == info.name)
                n_in = len(t.inputs)
                spec = t.inputs[handle.index] if handle.index < n_in else \
                    t.outputs[handle.index - n_in]
                try:
                    args.append(tensor_maps(handle, spec.layout, bufs[handle.index], t.abi))
                except InterpreterError as e:
                    raise InterpreterError(f"kernel {self.label!r}: TMA descriptor "
                                           f"{info.name!r}: {e}") from None
            elif raw is not None and where in raw:
                args.append(raw[where])
            else:
                raise SpecializationError(
                    f"kernel {self.label!r}: raw parameter {where!r} has no value; raw_params "
                    f"are given by keyword to kernel.interpret(..., {where}=...) or to a hand "
                    f"launch (jax_pyptx.interpret.launch); JAX and PyTorch calls have none")
        t0 = time.perf_counter()
        launch(t.module, t.name, args, grid=self.grid, block=t.block, cluster=t.cluster,
               smem=t.dynamic_smem, sanitize=sanitize, max_steps=max_steps, timeout=timeout,
               stats=stats)
        dt = time.perf_counter() - t0
        with _stats_lock:
            interpreter_stats["launches"] += 1
            interpreter_stats["seconds"] += dt
        return tuple(from_memory(o, lay) for o, lay in zip(outs, self._out_layouts))
