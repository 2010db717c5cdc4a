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
    Form("mov", (R("type", ".b32", ".b64", ".b128", gate={".b128": (70, (8, 3))}),),
         ("d:type", "v"), family="data", doc="mov.b64 d, {a, b} (pack)"),
    Form("mov", (R("type", ".b32", ".b64", ".b128", gate={".b128": (70, (8, 3))}),),
         ("v", "r:type"), family="data", doc="mov.b64 {a, b}, d (unpack)"),
    Form("bra", (G("uni", ".uni"),), ("l",), family="control"),
    Form("ret", (G("uni", ".uni"),), (), family="control"),
    Form("exit", (), (), family="control"),
]
