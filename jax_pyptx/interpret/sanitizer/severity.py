"""The sanitizer's two severities (part of the sanitizer).

* **errors** (an ``InterpreterError`` subclass is raised): the outcome on hardware is wrong or
  undefined, e.g. a race between different values, a read of memory no one wrote, a deadlock;
* **warnings** (``SanitizerWarning``, once per PTX instruction and launch): the PTX breaks the
  letter of the ISA but hardware and ptxas give the defined result, e.g. a ``tcgen05.ld``
  destination read before ``tcgen05.wait::ld`` (the register scoreboard waits for it), or two
  warps storing the same value to a shared byte. The run goes on with the hardware's values.

``sanitize`` of ``launch`` and of every path built on it takes ``True`` (errors raise, warnings
warn), ``"strict"`` (warnings raise as the error class they name too) or ``False`` (no
sanitizer verdict at all: only what cannot be executed still raises).
"""
from __future__ import annotations

import warnings

from ...errors import PtxValueError, SanitizerWarning

MODES = (True, False, "strict")


def sanitize_mode(value, param: str = "sanitize"):
    """``value`` as one of ``MODES`` (``np.bool_`` and 0/1 are read as booleans); anything
    else is a ``PtxValueError`` naming ``param``."""
    if isinstance(value, str):
        if value == "strict":
            return value
    elif value in (True, False) and not isinstance(value, float):
        return bool(value)
    raise PtxValueError(f"{param}={value!r} is not a sanitizer mode: use True (errors raise, hardware-"
                        f"forgiven breaches of the ISA warn with SanitizerWarning), 'strict' (those raise "
                        f"too) or False (no checks)")


STRICT_NOTE = " (a SanitizerWarning raised as an error by sanitize='strict'; hardware gives the defined result)"


def warn(ctx, cls, message: str, g=None, lane: int = 0, d=None, whole: bool = False) -> None:
    """Report a breach hardware forgives: under ``sanitize="strict"`` raise ``cls``; else warn
    once per PTX instruction of the launch, naming the instruction, the thread and the user's
    line. ``whole``: ``message`` already names the instruction and the thread."""
    d = d or ctx.cur
    if ctx.strict:
        raise ctx.error(cls, message + STRICT_NOTE, g, lane, d)
    seen = ctx.launch.warned
    key = (cls, None if d is None else (d.func, d.pc))
    if key in seen:
        return
    seen.add(key)
    loc = getattr(d.ins, "loc", None) if d is not None else None
    err = cls(message, loc=loc) if whole else ctx.error(cls, message, g, lane, d)
    w = SanitizerWarning(f"{err} [{cls.__name__} under sanitize='strict']", error_class=cls, loc=loc,
                         instruction="" if d is None else d.text)
    if loc is not None and getattr(loc, "file", None):
        warnings.warn_explicit(w, SanitizerWarning, str(loc.file), int(loc.line or 0))
    else:
        fname = f"<ptx {d.func}>" if d is not None else "<ptx>"
        warnings.warn_explicit(w, SanitizerWarning, fname, 0 if d is None else d.pc)
