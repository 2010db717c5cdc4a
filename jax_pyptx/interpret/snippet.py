"""Run a few PTX instructions on per-thread inputs: a quick way to check an instruction's
semantics (the interpreter's own tests use it).

>>> import numpy as np
>>> out = run_snippet("add.s32 %d, %a, %b;", {"a": ("s32", np.arange(4)), "b": ("s32", 5)}, {"d": "s32"}, n=4)
>>> out["d"].tolist()
[5, 6, 7, 8]

Inputs are ``name -> (ptx type, array or scalar)``, loaded into a register ``%name`` of that
type (one element per thread); outputs are ``name -> ptx type`` registers stored after the
snippet. Extra register declarations go in ``decls``.
"""
from __future__ import annotations

import numpy as np

from ..types import by_name
from .launch import launch
from .state.operands import np_dtype

_REGT = {"pred": "pred"}


def _reg_type(t):
    tt = by_name(t)
    if tt.kind == "pred":
        return ".pred"
    if tt.kind == "packed" or tt.name in ("bf16", "tf32") or tt.bits < 16:
        return f".b{max(tt.bits, 16) if tt.bits < 16 else tt.bits}"
    return "." + tt.name


def _mem_type(t):
    tt = by_name(t)
    if tt.kind == "pred":
        return "u8"
    if tt.kind == "packed" or tt.name in ("bf16", "tf32", "f16"):
        return f"b{tt.bits}"
    if tt.bits == 8:
        return tt.name
    return tt.name


def run_snippet(body: str, inputs: dict, outputs: dict, n: int = 32, decls: str = "", block=None,
                grid=1, sanitize=True, preamble: str = "", target: str = "sm_90a", version="8.5"):
    names_in = list(inputs)
    names_out = list(outputs)
    params = [f".param .u64 p_{k}" for k in names_in + names_out]
    lines = [f".version {version}", f".target {target}", ".address_size 64", preamble,
             ".visible .entry snippet(" + ", ".join(params) + ")", "{",
             ".reg .u64 %addr<4>;", ".reg .u32 %tid_;", ".reg .u16 %tmp16;", ".reg .pred %ptmp;"]
    for k, t in list(inputs.items()):
        t = t[0]
        lines.append(f".reg {_reg_type(t)} %{k};")
    for k, t in outputs.items():
        if k not in inputs:
            lines.append(f".reg {_reg_type(t)} %{k};")
    lines.append(decls)
    lines.append("mov.u32 %tid_, %tid.x;")
    arrays = []
    for k, (t, v) in inputs.items():
        tt = by_name(t)
        mt = _mem_type(t)
        dt = np_dtype(by_name(mt)) if tt.kind != "pred" else np.dtype(np.uint8)
        arr = np.zeros(n, dt)
        if isinstance(v, (list, tuple, int)) and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                                     for x in np.atleast_1d(np.asarray(v, dtype=object)).tolist()):
            bits = dt.itemsize * 8
            v = np.array([int(x) % (1 << bits) for x in np.atleast_1d(np.asarray(v, dtype=object)).tolist()],
                         dtype=f"u{dt.itemsize}").view(dt)
        src = np.asarray(v)
        if src.dtype != dt and src.dtype.itemsize == dt.itemsize and src.dtype.kind != dt.kind and \
                (tt.kind in ("packed", "float") or src.dtype.kind == "f"):
            src = src.view(dt) if src.ndim else np.array(src).view(dt)
        arr[:] = np.broadcast_to(src.astype(dt) if src.dtype != dt else src, (n,))
        arrays.append(arr)
        lines.append(f"ld.param.u64 %addr0, [p_{k}];")
        lines.append(f"mul.wide.u32 %addr1, %tid_, {dt.itemsize};")
        lines.append("add.u64 %addr0, %addr0, %addr1;")
        if tt.kind == "pred":
            lines.append("ld.global.u8 %tmp16, [%addr0];")
            lines.append(f"setp.ne.u16 %{k}, %tmp16, 0;")
        else:
            lines.append(f"ld.global.{mt} %{k}, [%addr0];")
    lines.append(body)
    outs = []
    for k, t in outputs.items():
        tt = by_name(t)
        mt = _mem_type(t)
        dt = np_dtype(by_name(mt)) if tt.kind != "pred" else np.dtype(np.uint8)
        arr = np.zeros(n, dt)
        outs.append(arr)
        lines.append(f"ld.param.u64 %addr0, [p_{k}];")
        lines.append(f"mul.wide.u32 %addr1, %tid_, {dt.itemsize};")
        lines.append("add.u64 %addr0, %addr0, %addr1;")
        if tt.kind == "pred":
            lines.append(f"selp.u16 %tmp16, 1, 0, %{k};")
            lines.append("st.global.u8 [%addr0], %tmp16;")
        else:
            lines.append(f"st.global.{mt} [%addr0], %{k};")
    lines += ["ret;", "}"]
    text = "\n".join(lines)
    launch(text, "snippet", arrays + outs, grid=grid, block=block or n, sanitize=sanitize)
    res = {}
    for (k, t), arr in zip(outputs.items(), outs):
        tt = by_name(t)
        if tt.kind == "pred":
            res[k] = arr.astype(bool)
        elif tt.name in ("bf16", "f16") or tt.kind == "float" and tt.np_dtype is not None and tt.bits in (16,):
            res[k] = arr.view(tt.np_dtype)
        else:
            res[k] = arr
    return res
