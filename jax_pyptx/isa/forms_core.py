"""Core forms: data movement (mov, pack/unpack) and control flow (bra, ret, exit). The other
families (arithmetic, logic, cvt, memory, ...) live in their own ``forms_*`` modules; the DSL's
operators emit forms from forms_arith, forms_logic, forms_cvt and forms_memory."""
from __future__ import annotations

from .model import Form, G, R

FORMS = [
    Form("mov", (R("type", ".pred", ".b16", ".b32", ".b64", ".u16", ".u32", ".u64", ".s16",
                   ".s32", ".s64", ".f32", ".f64", ".b128",
                   gate={".b128": (70, (8, 3))}),),
         ("d:type", "s:type"), family="data", doc="mov.type d, a"),
    Form("bra", (G("uni", ".uni"),), ("l",), family="control"),
    Form("ret", (G("uni", ".uni"),), (), family="control"),
    Form("exit", (), (), family="control"),
    Form("brx", (R("idx", ".idx", order="pin"), G("uni", ".uni")), ("r:u32", "l"), min_sm=30,
         min_ptx=(6, 0),
         family="control", doc="brx.idx{.uni} index, tlist (a .branchtargets label)"),
]
# call (PTX ISA "call"): func; func, (params); (ret), func, (params); and the indirect forms
# through a function pointer, with a .callprototype or .calltargets label last
for _ops in (("l",), ("l", "a"), ("a", "l", "a"), ("r:u64", "l"), ("r:u64", "a", "l"),
             ("a", "r:u64", "a", "l")):
    FORMS.append(Form("call", (G("uni", ".uni"),), _ops, family="control",
                      doc="call{.uni} " + ", ".join({"l": "func", "a": "(args)", "r:u64": "fptr"}[o]
                                                     for o in _ops)
                      + (" (indirect: the last is a prototype or .calltargets)"
                         if "r:u64" in _ops else "")))
# pack / unpack: a vector of two halves or four quarters of the type (PTX ISA "mov"); the
# elements are typed by their width (ptxas: "Arguments mismatch" for other widths)
for _t, _e, _n in ((".b16", "b8", 2), (".b32", "b16", 2), (".b32", "b8", 4), (".b64", "b32", 2),
                   (".b64", "b16", 4), (".b128", "b64", 2), (".b128", "b32", 4)):
    _g = (R("type", _t, gate={".b128": (70, (8, 3))} if _t == ".b128" else None),)
    FORMS += [Form("mov", _g, ("d:type", f"v{_n}:{_e}"), family="data",
                   doc=f"mov{_t} d, {{{_n} x .{_e}}} (pack)"),
              Form("mov", _g, (f"v{_n}:{_e}", "r:type"), family="data",
                   doc=f"mov{_t} {{{_n} x .{_e}}}, a (unpack)")]
