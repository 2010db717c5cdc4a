"""Which typed DSL wrapper may reproduce an instruction, and with which arguments: found from
the instruction's decoded form (:func:`jax_pyptx.isa.decode`) and the wrappers' own names and
signatures. The transpiler keeps no opcode or modifier list of its own.

Candidates. A wrapper ``ptx.<family>.<fn>`` (a function defined in a family module of
``jax_pyptx.dsl.ptx`` and listed in its ``__all__``) is a candidate for an instruction when
its dotted name, ``family.fn`` or ``fn`` alone, read with ``_`` for ``.`` or ``::`` (and a
trailing ``_`` that escapes a Python keyword dropped), spells the instruction's name followed
by none or some of its leading modifiers: ``ptx.wgmma.wait_group`` for
``wgmma.wait_group.sync.aligned``, ``ptx.fence.proxy_async`` for
``fence.proxy.async.shared::cta``, ``ptx.fence.membar`` for ``membar.gl``,
``ptx.tcgen05.wait_ld`` for ``tcgen05.wait::ld.sync.aligned``. Shorter spellings are tried
first. Wrappers that take ``*args``/``**kwargs`` (the operator-style families) or allocate
their result (an ``out=`` parameter) are not candidates: the transpiled code names the
source's own registers, which ``ptx.inst`` does directly.

Arguments (:func:`calls`). A parameter with a default, named after one of the form's modifier
groups, takes the chosen option without its dot (``level="gl"`` for ``.gl``); an option spelled
``.<group>::<value>`` gives ``value`` (``cta_group=2`` for ``.cta_group::2``, an ``int``
where the parameter's default is one); a group whose single option is its own name is a flag
(``aligned=True``, or ``False`` when the optional group is absent). The instruction's operands
fill the remaining positional parameters in order; operands left over fill, in order,
keyword-only parameters with an integer or ``None`` default (``scale_d=``, ``scale_a=``...;
each choice of those parameters is tried). A boolean parameter named after an option of the
form (``satfinite`` for ``.satfinite``) is True when the instruction has it. An integer
immediate given to a parameter with an ``int`` default is a Python int.

Every candidate call is checked by the caller: emitted into a scratch trace, it must give
exactly the source instruction.
"""
from __future__ import annotations

import inspect
import itertools
import re

from ..ir.nodes import Imm

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
_DEC = re.compile(r"^-?\d+$")


def key(dotted: str) -> str:
    """``"fence.proxy_async"`` / ``"fence.proxy.async"`` -> ``"fence_proxy_async"``;
    ``"tcgen05.wait::ld"`` -> ``"tcgen05_wait_ld"``; ``"bits.and_"`` -> ``"bits_and"``."""
    return "_".join(p.rstrip("_") for p in dotted.replace("::", ".").split("."))


class Wrapper:
    """One typed wrapper: its printed path, the function, and its signature."""

    __slots__ = ("path", "fn", "params", "pred")

    def __init__(self, path: str, fn, params: list, pred: bool):
        self.path, self.fn, self.params, self.pred = path, fn, params, pred

    @classmethod
    def of(cls, path: str, fn):
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        params = list(sig.parameters.values())
        if "out" in sig.parameters or any(p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
                                          for p in params):
            return None
        return cls(path, fn, [p for p in params if p.name != "pred"], "pred" in sig.parameters)


_INDEX: dict | None = None           # key -> [Wrapper]
_FOR: dict = {}                      # (opcode, modifiers) -> [Wrapper], longest spelling first


def _index() -> dict:
    global _INDEX
    if _INDEX is None:
        from ..dsl import ptx

        index: dict = {}
        for fam in sorted(vars(ptx)):
            mod = getattr(ptx, fam)
            if not inspect.ismodule(mod) or not mod.__name__.startswith(ptx.__name__ + "."):
                continue
            for name in getattr(mod, "__all__", ()):
                fn = getattr(mod, name, None)
                if not inspect.isfunction(fn) or fn.__module__ != mod.__name__:
                    continue
                w = Wrapper.of(f"ptx.{fam}.{name}", fn)
                if w is None:
                    continue
                for k in dict.fromkeys((key(f"{fam}.{name}"), key(name))):
                    index.setdefault(k, []).append(w)
        _INDEX = index
    return _INDEX


def candidates(opcode: str, modifiers: tuple) -> list:
    """The wrappers whose name spells ``opcode`` plus none or some of its leading
    ``modifiers``, shortest spelling first (the wrapper that takes the most as arguments:
    ``ptx.fence.proxy_async("shared::cta")`` before ``ptx.fence.proxy_async_shared_cta()``)."""
    got = _FOR.get((opcode, modifiers))
    if got is None:
        index = _index()
        got = []
        for i in range(len(modifiers) + 1):
            for w in index.get(key(opcode + "".join(modifiers[:i])), ()):
                if w not in got:
                    got.append(w)
        if len(_FOR) < 20000:
            _FOR[(opcode, modifiers)] = got
    return got


def _int_default(p) -> bool:
    return type(p.default) is int


def _option(p, group, chosen):
    """(code, value) for parameter ``p`` named after ``group``, or None to leave it out."""
    if len(group.options) == 1 and group.options[0][1:].lower() == group.name.lower():
        if chosen is None and group.required:
            return None
        return repr(chosen is not None), chosen is not None
    if chosen is None:
        return None
    v = chosen[1:]
    if v.startswith(p.name + "::"):
        v = v[len(p.name) + 2:]
        if _int_default(p) and v.isdigit():
            return v, int(v)
    return repr(v), v


def _operand(p, op):
    """(code, value) passing operand ``op`` (transpiler code, probe value) to ``p``."""
    code, val = op
    if type(val) is Imm and _int_default(p) and _DEC.match(val.text):
        n = int(val.text)
        if str(n) == val.text:
            return val.text, n
    return op


def calls(w: Wrapper, decoding, ops: list):
    """Every argument assignment of ``w`` for the instruction: yields ``{param: (code, value,
    from_option)}``. ``ops``: the operands as ``(code, probe value)``."""
    groups = {g.name: g for g in decoding.form.groups}
    options = {o for g in decoding.form.groups for o in g.options}
    fixed: dict = {}
    for p in w.params:
        g = groups.get(p.name)
        if g is not None and p.default is not _P.empty:
            got = _option(p, g, decoding.chosen.get(g.name))
            if got is not None:
                fixed[p.name] = got + (True,)
        elif type(p.default) is bool and "." + p.name in options:
            v = "." + p.name in decoding.modifiers
            fixed[p.name] = (repr(v), v, True)
    pool = [p for p in w.params if p.kind in _POSITIONAL and p.name not in fixed]
    n = len(ops)
    if any(p.default is _P.empty for p in pool[n:]):
        return
    head = dict(fixed)
    for p, op in zip(pool, ops):
        head[p.name] = _operand(p, op) + (False,)
    extra = ops[len(pool):]
    if not extra:
        yield head
        return
    run = [p for p in w.params if p.kind is _P.KEYWORD_ONLY and p.name not in fixed
           and (p.default is None or _int_default(p))]
    for chosen in itertools.combinations(run, len(extra)):
        got = dict(head)
        for p, op in zip(chosen, extra):
            got[p.name] = _operand(p, op) + (False,)
        yield got


def spell(w: Wrapper, args: dict) -> tuple:
    """(positional codes, [(keyword, code)]) of a call: positional parameters positionally up
    to the first one left out, the rest by keyword; a keyword-only flag at its default
    (``satfinite=False``) is left out."""
    pos, kws = [], []
    gap = False
    for p in w.params:
        got = args.get(p.name)
        if got is None:
            gap = gap or p.kind in _POSITIONAL
            continue
        code, value, from_option = got
        if p.kind in _POSITIONAL and not gap:
            pos.append(code)
        elif from_option and p.kind is _P.KEYWORD_ONLY and type(value) is bool \
                and value is p.default:
            continue
        else:
            kws.append((p.name, code))
    return pos, kws
