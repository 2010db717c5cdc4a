"""Typed PTX IR: modules, functions, params, declarations and instructions.

Instructions are structured records (opcode, modifiers in canonical order, typed operands,
guard predicate); the printer in ``jax_pyptx.text.printer`` turns any module back into text.
"""
from .nodes import *  # noqa: F403
from .nodes import __all__  # noqa: F401
