"""Kernel parameters by name: ``ptx.param("n")`` (the symbol), ``ptx.param_value("n")``
(a register loaded with ``ld.param`` once per trace)."""
from __future__ import annotations

from ...errors import TraceError
from ...ir.nodes import Addr, Sym
from .. import context
from ..context import user_loc
from ..values import Register


def _find(tr, name):
    for p in tr.params:
        if p.name == name:
            return p
    have = ", ".join(p.name for p in tr.params) or "none"
    raise TraceError(f"kernel {tr.name!r} has no parameter {name!r}; parameters: {have}",
                     loc=user_loc(3))


def param(*args, dst=None):
    """``ptx.param("n")``: the parameter symbol (use as ``ptx.addr(ptx.param("n"))``).

    ``ptx.param(dtype, "n", dst=None)`` (the documented form) loads it here:
    ``ld.param.<type> r, [n];`` (a byte-array parameter, ``.b8 n[128]``, gives its address:
    ``mov.<type> r, n;``); returns the register (``dst`` or a fresh one).

    Examples:
        >>> from jax_pyptx import kernel, ptx
        >>> from jax_pyptx.types import u32
        >>> @kernel(raw_params=[("n", u32)])
        ... def k():
        ...     n = ptx.param(u32, "n")
        ...     ptx.ret()
        >>> [" ".join(line.split()) for line in k.ptx().splitlines() if "param" in line]
        ['.param .u32 n', 'ld.param.u32 %r0, [n];']
    """
    tr = context.current("ptx.param")
    if len(args) == 1 and dst is None:
        _find(tr, args[0])
        return Sym(args[0])
    if len(args) != 2:
        raise TraceError(f"ptx.param takes a name, or (dtype, name); got {args!r}",
                         loc=user_loc())
    from ..reg import _type
    from ..values import as_operand

    t, name = _type(args[0]), args[1]
    p = _find(tr, name)
    r = dst if dst is not None else Register(tr.new_reg(t), tr)
    mt = f".b{t.bits}" if t.kind == "float" and t.bits < 32 else t.ptx
    if p.array is not None:
        tr.emit("mov", (mt,), (as_operand(r), Sym(name)), loc=user_loc())
    else:
        tr.emit("ld", (".param", mt), (as_operand(r), Addr(Sym(name))), loc=user_loc())
    return r


def param_value(name: str) -> Register:
    """The parameter's value in a register (``ld.param`` emitted once, at the kernel's start).

    Examples:
        >>> from jax_pyptx import kernel, ptx
        >>> from jax_pyptx.types import u32
        >>> @kernel(raw_params=[("n", u32)])
        ... def k():
        ...     a, b = ptx.param_value("n"), ptx.param_value("n")   # loaded once
        ...     ptx.ret()
        >>> sum("ld.param" in line for line in k.ptx().splitlines())
        1
    """
    tr = context.current("ptx.param_value")
    p = _find(tr, name)
    if name in tr.param_loads:
        return tr.param_loads[name]
    if p.array is not None:
        raise TraceError(f"parameter {name!r} is a byte array; use ptx.param({name!r})",
                         loc=user_loc())
    r = Register(tr.new_reg(p.type), tr)
    tr.emit("ld", (".param", p.type.ptx), (r.ir, Addr(Sym(name))), loc=user_loc(), prologue=True)
    tr.param_loads[name] = r
    return r


def global_ptrs(*params) -> tuple:
    """The global addresses of pointer parameters, one u64 register each (always a tuple:
    ``(px,) = ptx.global_ptrs(X)``). A tensor parameter gives ``X.ptr()`` (loaded once per
    trace); a name (or anything with ``.name``) naming a 64-bit ``.param`` emits
    ``ld.param.u64 r, [name];`` ``cvta.to.global.u64 g, r;`` (once per trace).

    Examples:
        >>> from jax_pyptx import Tile, kernel, ptx
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),))
        ... def k(X, Y):
        ...     px, py = ptx.global_ptrs(X, Y)
        ...     ptx.ret()
        >>> sum("cvta.to.global.u64" in line for line in k.ptx().splitlines())
        2
    """
    if not params:
        return ()
    tr = context.current("ptx.global_ptrs")
    out = []
    for p in params:
        if hasattr(p, "ptr") and getattr(p, "_access", None) is not None:
            out.append(p.ptr())
            continue
        name = p if isinstance(p, str) else getattr(p, "name", None)
        if not isinstance(name, str):
            raise TraceError(f"ptx.global_ptrs: expected a tensor parameter or a parameter "
                             f"name, got {p!r}", loc=user_loc())
        info = _find(tr, name)
        if info.array is not None or info.type.bits != 64:
            raise TraceError(f"ptx.global_ptrs: parameter {name!r} is .{info.type.name}"
                             f"{'[]' if info.array is not None else ''}; a global pointer is "
                             f"a 64-bit parameter", loc=user_loc())
        key = ("global_ptr", name)
        got = tr.param_loads.get(key)
        if got is None:
            from ..tensor_access import global_pointer

            got, _ = global_pointer(tr, name, loc=user_loc())
            tr.param_loads[key] = got
        out.append(got)
    return tuple(out)
