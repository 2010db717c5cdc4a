"""CUDA-core and SFU work from the interpreter's per-opcode thread counts.

``interpret.Stats(count_ops=True)`` counts, per full opcode (``fma.rn.f32``), the threads
that executed it. :func:`core_ops` turns those counts into operations per pipe class:

* ``fp32``, ``fp16`` (``.f16`` / ``.bf16``, the ``x2`` forms counting two lanes), ``fp64``:
  FLOPs, one per ``add`` / ``sub`` / ``mul`` / ``min`` / ``max`` / ``neg`` / ``abs`` /
  ``setp``, two per ``fma`` / ``mad``;
* ``int``: integer operations on ``.s`` / ``.u`` / ``.b`` types (``add``, ``mul``, ``mad``
  (two), shifts, logic, ``lop3``, ``prmt``, ``bfe``, ``setp``, ``selp``, ...; a 64-bit one
  counts twice: the hardware does it in two 32-bit instructions);
* ``sfu``: special-function unit operations (``ex2`` / ``lg2`` / ``rcp`` / ``rsqrt`` /
  ``sqrt`` / ``sin`` / ``cos`` / ``tanh`` ``.approx``, and the ``rcp``/``sqrt``/``div`` IEEE
  forms, which start from one), one per thread.

Loads, stores, moves, conversions, barriers and tensor-core instructions are not counted here
(memory and tensor work have their own terms in the roofline).

Examples:
    >>> from jax_pyptx.perf.ops import core_ops
    >>> core_ops({"fma.rn.f32": 32, "add.s32": 32, "ex2.approx.f32": 32, "ld.global.f32": 32})
    {'fp32': 64, 'int': 32, 'sfu': 32}
"""
from __future__ import annotations

__all__ = ["core_ops", "CORE_CLASSES"]

CORE_CLASSES = ("fp32", "fp16", "fp64", "int", "sfu")

_SFU = {"ex2", "lg2", "rcp", "rsqrt", "sqrt", "sin", "cos", "tanh", "div"}
_FLOAT_OPS = {"add": 1, "sub": 1, "mul": 1, "min": 1, "max": 1, "neg": 1, "abs": 1,
              "fma": 2, "mad": 2, "setp": 1, "set": 1, "testp": 1, "copysign": 1}
_INT_OPS = {"add": 1, "sub": 1, "mul": 1, "mad": 2, "mul24": 1, "mad24": 2, "min": 1,
            "max": 1, "abs": 1, "neg": 1, "and": 1, "or": 1, "xor": 1, "not": 1, "cnot": 1,
            "shl": 1, "shr": 1, "shf": 1, "lop3": 1, "prmt": 1, "bfe": 1, "bfi": 1,
            "brev": 1, "popc": 1, "clz": 1, "bfind": 1, "fns": 1, "setp": 1, "set": 1,
            "selp": 1, "slct": 1, "sad": 2, "dp4a": 8, "dp2a": 4, "rem": 1, "div": 1,
            "addc": 1, "subc": 1, "madc": 2, "szext": 1}
_FP = {"f32": ("fp32", 1), "ftz": None, "f16": ("fp16", 1), "bf16": ("fp16", 1),
       "f16x2": ("fp16", 2), "bf16x2": ("fp16", 2), "f64": ("fp64", 1)}
_INT_BITS = {"s8": 32, "u8": 32, "b8": 32, "s16": 32, "u16": 32, "b16": 32, "s32": 32,
             "u32": 32, "b32": 32, "s64": 64, "u64": 64, "b64": 64}


def classify(opcode: str):
    """``(class, operations per thread)`` of one full opcode, or None when it is not
    CUDA-core or SFU arithmetic.

    Examples:
        >>> from jax_pyptx.perf.ops import classify
        >>> classify("fma.rn.f16x2"), classify("mad.lo.s64"), classify("rcp.approx.ftz.f32")
        (('fp16', 4), ('int', 4), ('sfu', 1))
    """
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    if base in ("cvt", "mov", "ld", "st", "cvta") or not mods:
        return None
    ftype = next((m for m in reversed(mods) if m in _FP and _FP[m] is not None), None)
    if base in _SFU and ftype is not None and (
            "approx" in mods or base in ("rcp", "sqrt", "div")):
        return ("sfu", 1)
    if ftype is not None:
        n = _FLOAT_OPS.get(base)
        if n is None:
            return None
        cls, lanes = _FP[ftype]
        return (cls, n * lanes)
    itype = next((m for m in reversed(mods) if m in _INT_BITS), None)
    n = _INT_OPS.get(base)
    if itype is None or n is None:
        return None
    wide = 2 if _INT_BITS[itype] == 64 or "wide" in mods else 1
    return ("int", n * wide)


def core_ops(thread_ops: dict) -> dict:
    """Operations per class (``CORE_CLASSES``) of per-opcode thread counts; classes with
    none are left out.

    Examples:
        >>> from jax_pyptx.perf.ops import core_ops
        >>> core_ops({"fma.rn.f16x2": 32, "mad.lo.s32": 32})
        {'fp16': 128, 'int': 64}
    """
    out: dict = {}
    for opcode, threads in thread_ops.items():
        c = classify(opcode)
        if c is not None:
            out[c[0]] = out.get(c[0], 0) + c[1] * threads
    return {k: out[k] for k in CORE_CLASSES if out.get(k)}
