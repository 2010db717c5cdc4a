"""Runtime scalar values: a number for a PTX-typed parameter, converted only when nothing
is lost.

Every path that passes a number to a scalar parameter comes here: ``kernel.interpret``, the
JAX runtime (eager and under ``jit``), the PyTorch op, raw parameters and
``interpret.launch``. The rules (one per kind of PTX type):

- integer types (``.uN``, ``.sN``): any numeric value that is exactly an integer in the
  type's range (``7``, ``7.0``, ``np.float32(2.0)``, ``True``); ``.bN`` takes either
  signedness (``-1`` is all ones). ``3.7``, ``np.float32(2.5)``, ``np.int64(-1)`` for a
  ``.u32`` and ``2**32`` are refused.
- float types: any real number, rounded to the type as a cast would; a finite value past the
  type's largest (``1e40`` for ``.f32``) is refused instead of becoming ``inf``.
- ``.pred``: ``True`` / ``False`` or a number equal to 0 or 1.
- strings, bytes, ``None``, complex numbers and arrays with elements: never.

A value known only when the kernel runs (a JAX tracer, a CUDA tensor) is checked by dtype
(:func:`check_dtype`): a float value for an integer or ``.pred`` parameter is refused; the
fix is an explicit cast.

Errors name the parameter, its PTX type, the value given and what the type takes.

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.scalars import scalar_value
    >>> from jax_pyptx.types import u32, f32
    >>> scalar_value(u32, 7.0, "runtime scalar n")
    np.uint32(7)
    >>> try:
    ...     scalar_value(u32, np.int64(-1), "runtime scalar n")
    ... except Exception as e:
    ...     print(e)
    runtime scalar n (.u32) got np.int64(-1) (int64): out of range; a .u32 takes an integer in [0, 4294967295]
"""
from __future__ import annotations

import math

from .errors import SpecializationError

__all__ = ["scalar_value", "number_value", "check_dtype", "allowed_text"]

# float types: (largest finite value, mantissa bits); a value rounds to inf (or NaN) from
# max + half an ulp of max on
_FLOATS = {"f16": (65504.0, 10), "bf16": (3.3895313892515355e38, 7),
           "tf32": (3.4028234663852886e38, 23), "f32": (3.4028234663852886e38, 23),
           "f64": (1.7976931348623157e308, 52), "e4m3": (448.0, 3), "e5m2": (57344.0, 2),
           "e2m3": (7.5, 3), "e3m2": (28.0, 2), "e2m1": (6.0, 1), "ue8m0": (2.0 ** 127, 0)}


def _range(t) -> tuple:
    bits = t.bits
    lo = -(2 ** (bits - 1)) if t.kind in ("signed", "bits", "packed") else 0
    hi = 2 ** (bits - 1) - 1 if t.kind == "signed" else 2 ** bits - 1
    return lo, hi


def _overflows(t, fv: float) -> bool:
    top, mbits = _FLOATS.get(t.name, (None, 0))
    if top is None or not math.isfinite(fv):
        return False
    return abs(fv) >= top + math.ldexp(1.0, math.frexp(top)[1] - 1 - mbits - 1)


def allowed_text(t) -> str:
    """What a scalar of PTX type ``t`` takes, in words."""
    if t.kind == "pred":
        return "a .pred takes True / False (or a number equal to 0 or 1)"
    if t.is_float:
        top = _FLOATS.get(t.name, (None,))[0]
        return (f"a .{t.name} takes a real number of magnitude at most {top:.6g} (rounded)"
                if top is not None else f"a .{t.name} takes a real number")
    lo, hi = _range(t)
    either = " (either signedness: its bits are passed)" if t.kind in ("bits", "packed") else ""
    return f"a .{t.name} takes an integer in [{lo}, {hi}]{either}"


def _describe(v) -> str:
    return f"{v!r} ({getattr(v, 'dtype', None) or type(v).__name__})"


def number_value(t, v, what: str, error=SpecializationError):
    """``v`` checked for PTX type ``t`` (module docstring) as a Python ``bool`` / ``int`` /
    ``float``; ``error(message)`` for a value it cannot hold, the message starting with
    ``what`` (``"kernel 'k': runtime scalar n"``). No NumPy for Python numbers (so
    ``torch.compile`` traces it)."""
    given = v
    if type(v) not in (bool, int, float):
        if isinstance(v, (str, bytes)):
            raise error(f"{what} (.{t.name}) got the string {given!r}: strings are never "
                        f"converted; pass a number ({allowed_text(t)})")
        shape = getattr(v, "shape", None)
        if shape is not None and tuple(shape) != ():
            raise error(f"{what} (.{t.name}) is a scalar; got an array of shape "
                        f"{tuple(shape)}")
        if hasattr(v, "item"):          # NumPy scalars, 0-d arrays, JAX / torch scalars
            try:
                v = v.item()
            except Exception:
                raise error(f"{what} (.{t.name}) must be a number known when the kernel is "
                            f"called; got {type(v).__name__} (a value traced by jit?)") from None
        if isinstance(v, bool):
            v = bool(v)
        elif isinstance(v, int):
            v = int(v)
        elif isinstance(v, float):
            v = float(v)
        else:
            raise error(f"{what} (.{t.name}) got {_describe(given)}: not a real number; "
                        f"{allowed_text(t)}")
    if t.kind == "pred":
        if v not in (0, 1):
            raise error(f"{what} (.pred) got {_describe(given)}: not 0 or 1; "
                        f"{allowed_text(t)}")
        return bool(v)
    if t.is_float:
        try:
            fv = float(v)
        except OverflowError:           # an int past every float
            fv = math.inf
        if (math.isinf(fv) and not isinstance(v, float)) or _overflows(t, fv):
            to = (f"{'-' if fv < 0 else ''}inf" if t.name in ("f16", "bf16", "tf32", "f32",
                                                                "f64", "e5m2") else "NaN")
            raise error(f"{what} (.{t.name}) got {_describe(given)}: out of range (it would "
                        f"become {to}); {allowed_text(t)}")
        return fv
    if isinstance(v, float):
        if not v.is_integer():
            raise error(f"{what} (.{t.name}) got {_describe(given)}: not an integer (it "
                        f"would be truncated); {allowed_text(t)}")
    v = int(v)
    lo, hi = _range(t)
    if not lo <= v <= hi:
        raise error(f"{what} (.{t.name}) got {_describe(given)}: out of range; "
                    f"{allowed_text(t)}")
    return v


def scalar_value(t, v, what: str, error=SpecializationError):
    """``v`` as a NumPy scalar of PTX type ``t`` (:func:`number_value`'s checks; a ``.bN``
    holds the bits of a negative value). A ``.b128`` (no NumPy type) gives a Python int."""
    import numpy as np

    n = number_value(t, v, what, error)
    if t.kind == "pred":
        return np.bool_(n)
    if t.is_float:
        dt = t.np_dtype if t.np_dtype is not None and t.name != "tf32" else np.float32
        with np.errstate(all="ignore"):
            return np.dtype(dt).type(n)
    if t.bits > 64:
        return n & (2 ** t.bits - 1)
    if t.kind == "signed":
        return np.dtype(f"i{t.bits // 8}").type(n)
    return np.dtype(f"u{max(t.bits, 8) // 8}").type(n & (2 ** t.bits - 1))


def check_dtype(t, dtype, what: str, error=SpecializationError, fix: str = "",
                noun: str = "value known only when the kernel runs") -> None:
    """A value known only at run time, of NumPy-style ``dtype`` (a dtype or its name), for a
    scalar of PTX type ``t``: a float or complex value for an integer or ``.pred`` parameter
    (it would be truncated), or a complex value for a float one, is refused."""
    name = str(dtype).removeprefix("torch.")
    kind = "c" if name.startswith("complex") else \
        "f" if name.startswith(("float", "bfloat")) else "b" if name == "bool" else "i"
    if kind == "c" or (kind == "f" and not t.is_float):
        raise error(f"{what} (.{t.name}) got a {name} {noun}: "
                    f"it would be {'truncated' if kind == 'f' else 'cut to its real part'}; "
                    f"{allowed_text(t)}{fix}")
