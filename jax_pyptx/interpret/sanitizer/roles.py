"""What the launch's array arguments are, for the sanitizer: outputs, inputs, vmap items.

* Outputs (``launch(..., outputs=)``) start uninitialized, as a fresh buffer on a GPU does: a
  read of a byte nothing wrote is reported where it happens (``memory.FlatSpace``), and the
  elements no thread wrote by the end of the launch are reported then
  (``UnwrittenOutputError``), unless the output is named in ``partial_outputs=``.
* Inputs (``inputs=``) refuse stores and atomics (``InputWriteError``): under ``jax.jit`` on a
  GPU they are buffers XLA owns.
* ``batch_items=`` splits a buffer into the items of a ``jax.vmap`` batched on the grid, with
  the item each ``%ctaid.z`` works on (``provenance``).
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError, UnwrittenOutputError

MAX_RANGES = 4               # unwritten element ranges a report lists
_NOUN = {"outputs": "an output", "partial_outputs": "an output", "inputs": "an input",
         "batch_items": "split into batch items"}


def is_tensor_map(a) -> bool:
    if isinstance(a, (np.ndarray, np.generic, int, float)) or a is None:
        return False
    from ..state.tensormap import TensorMap
    return isinstance(a, TensorMap) or (isinstance(a, (list, tuple)) and bool(a)
                                        and all(isinstance(x, TensorMap) for x in a))


def arg_indices(what, sel, args, params, entry):
    """The argument indices ``sel`` names (indices or parameter names), checked: each must be
    an array (or a tensor map over one) passed to a pointer parameter. ``what``: the keyword."""
    if sel is None:
        return []
    if isinstance(sel, (int, str, np.integer)):
        sel = [sel]
    names = [p.name for p, _, _ in params]
    out = []
    for o in sel:
        if isinstance(o, str):
            if o not in names:
                raise InterpreterError(f"{what} names parameter {o!r}, but kernel {entry!r} has parameters "
                                       f"{', '.join(map(repr, names)) or 'none'}")
            i = names.index(o)
        elif isinstance(o, (int, np.integer)) and not isinstance(o, bool) and 0 <= int(o) < len(args):
            i = int(o)
        else:
            raise InterpreterError(f"{what} takes argument indices (0 to {len(args) - 1}) or parameter "
                                   f"names of kernel {entry!r}, got {o!r}")
        a = args[i]
        if not (isinstance(a, np.ndarray) and a.ndim > 0) and not is_tensor_map(a):
            raise InterpreterError(f"{what} names argument {i} (param {names[i]!r}), which is "
                                   f"{type(a).__name__}: only an array (or a tensor map over one) passed "
                                   f"to a pointer parameter can be {_NOUN.get(what, what)}")
        if i not in out:
            out.append(i)
    return out


def regions(i, args, placed, homes):
    """[(array, allocation, first byte, end)] of argument ``i``: its own allocation for an
    array (``homes``: argument index -> allocation), the bytes of the arrays its tensor maps
    describe for a tensor map."""
    a = args[i]
    if not is_tensor_map(a):
        al = homes.get(i)
        return [] if al is None else [(a, al, 0, al.size)]
    out = []
    for tm in ([a] if not isinstance(a, (list, tuple)) else a):
        arr = tm.array
        start = arr.__array_interface__["data"][0]
        for lo, hi, al in placed:
            if lo <= start and start + arr.nbytes <= hi:
                out.append((arr, al, start - lo, start - lo + arr.nbytes))
                break
    return out


class OutputRecord:
    """An output buffer whose unwritten elements the end of the launch reports."""

    __slots__ = ("arg", "name", "shape", "dtype", "alloc", "lo", "hi")

    def __init__(self, arg, name, arr, alloc, lo, hi):
        self.arg, self.name = arg, name
        self.shape, self.dtype = arr.shape, arr.dtype
        self.alloc, self.lo, self.hi = alloc, lo, hi


def start_outputs(mem, args, out_idx, partial_idx, params, placed, homes) -> list:
    """The output arrays' bytes start uninitialized; the records of those to check at the end
    (every output not named in ``partial_idx``)."""
    records, seen = [], set()
    for i in out_idx:
        for arr, al, lo, hi in regions(i, args, placed, homes):
            al.start_uninitialized(lo, hi)
            if i not in partial_idx and (al.index, lo, hi) not in seen:
                seen.add((al.index, lo, hi))
                records.append(OutputRecord(i, params[i][0].name, arr, al, lo, hi))
    mem.gspace.tracks_init = True
    return records


def mark_inputs(args, in_idx, params, placed, homes):
    """Stores and atomics into the input arrays are reported (``Allocation.input``)."""
    for i in in_idx:
        for _, al, _, _ in regions(i, args, placed, homes):
            al.input = f"param {params[i][0].name!r}"


def mark_items(mem, batch_items, args, params, entry, grid, homes):
    """Split the buffers of ``batch_items`` (argument -> item per ``%ctaid.z``) into items."""
    if not batch_items:
        return
    if not isinstance(batch_items, dict):
        raise InterpreterError(f"batch_items takes a dict {{argument (index or parameter name): the batch item "
                               f"of each %ctaid.z}}, got {type(batch_items).__name__}")
    gs = mem.gspace
    for sel, z in batch_items.items():
        i = arg_indices("batch_items", [sel], args, params, entry)[0]
        name = params[i][0].name
        al = homes.get(i)
        if al is None:
            raise InterpreterError(f"batch_items names param {name!r}: only an array passed to a pointer "
                                   f"parameter can be split into batch items")
        z = np.asarray(z, np.int64).reshape(-1)
        if len(z) != grid[2] or (z < 0).any():
            raise InterpreterError(f"batch_items[{sel!r}] must give a batch item (>= 0) for each of the "
                                   f"{grid[2]} values of %ctaid.z, got {len(z)} values")
        n = int(z.max()) + 1
        if al.size % n:
            raise InterpreterError(f"batch_items[{sel!r}] names {n} items, but param {name!r} has "
                                   f"{al.size} bytes, not a multiple of {n}")
        al.items = (al.size // n, z)
        if gs.item_mask is None:
            gs.item_mask = np.zeros(len(gs.allocs), bool)
        gs.item_mask[al.index] = True


def check_written(records, entry):
    """Raise ``UnwrittenOutputError`` for the first output with elements no thread wrote."""
    bad = []
    for r in records:
        if not r.alloc.unwritten_in(r.lo, r.hi):      # every byte written: the intervals or one pass
            continue
        b = r.alloc.init[r.lo:r.hi]
        isz = max(r.dtype.itemsize, 1)
        n = len(b) // isz
        un = (b[:n * isz].reshape(n, isz) == 0).any(axis=1)
        if un.any():
            bad.append((r, np.flatnonzero(un), n))
    if not bad:
        return
    r, idx, n = bad[0]
    brk = np.flatnonzero(np.diff(idx) != 1)
    starts = np.concatenate([[idx[0]], idx[brk + 1]])
    ends = np.concatenate([idx[brk], [idx[-1]]])
    ranges = [f"{int(s)}" if s == e else f"{int(s)}-{int(e)}" for s, e in zip(starts[:MAX_RANGES], ends[:MAX_RANGES])]
    more = f" and {len(starts) - MAX_RANGES} more ranges" if len(starts) > MAX_RANGES else ""
    first = np.unravel_index(int(idx[0]), r.shape) if r.shape else ()
    first_s = ", ".join(str(int(x)) for x in first)
    d = r.alloc.last_store
    last = ""
    loc = None
    if d is not None:
        loc = getattr(d.ins, "loc", None)
        last = f"; the last store traced to it: {d.text} [{d.where()}]"
    others = ""
    if len(bad) > 1:
        others = "; unwritten elements too in " + ", ".join(
            f"output {o.name!r} ({len(ix)} of {m})" for o, ix, m in bad[1:])
    msg = (f"kernel {entry!r} left {len(idx)} of the {n} elements of output {r.name!r} (argument {r.arg}, "
           f"{r.dtype}{list(r.shape)}) unwritten: flat elements {', '.join(ranges)}{more}, the first "
           f"{r.name}[{first_s}]{last}{others}. On a GPU they hold whatever the buffer held before (here "
           f"a buffer passed to launch comes back unchanged; a fresh output of kernel.interpret, jax.jit "
           f"and the PyTorch op reads 0xFF bytes, NaN in the float types): write every element (is the "
           f"grid one block short?), or declare the output written in part: launch(..., "
           f"partial_outputs=[{r.name!r}]), kernel.interpret(..., partial_outputs=[{r.name!r}]) or "
           f"Tile(..., partial=True)")
    raise UnwrittenOutputError(msg, loc=loc)
