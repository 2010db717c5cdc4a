"""Shared-memory swizzle modes (PTX ISA "Tensor-map swizzle modes" and the wgmma / tcgen05
matrix-descriptor swizzles): where byte ``addr`` of a swizzled buffer really lives.

A swizzle permutes the 16-byte chunks of each row of a repeating *atom*: the chunk index
(address bits [4:4+k]) is XORed with the row index within the atom (bits [7:7+k]):

=======  ==========  ======================  ==========
mode     atom bytes  bits XORed              rows/atom
=======  ==========  ======================  ==========
32B      256         [4] ^= [7]              2
64B      512         [4:5] ^= [7:8]          4
128B     1024        [4:6] ^= [7:9]          8
=======  ==========  ======================  ==========

The swizzle is a function of the address (which is why swizzled buffers start on an atom
boundary), so it applies to any byte address. The one copy of this fact: the DSL, the
interpreter and ``jax_pyptx.viz`` call :func:`swizzle`.
"""
from __future__ import annotations

__all__ = ["MODES", "ATOM_BYTES", "swizzle", "mode_name"]

# mode -> number of chunk-index bits XORed
_BITS = {None: 0, "32B": 1, "64B": 2, "128B": 3}
MODES = ("32B", "64B", "128B")
ATOM_BYTES = {"32B": 256, "64B": 512, "128B": 1024}


def mode_name(mode) -> str | None:
    """``None``/``"none"`` -> None, ``"128b"`` -> ``"128B"``; anything else is a ValueError."""
    if mode is None:
        return None
    m = str(mode).upper()
    if m == "NONE":
        return None
    if m not in _BITS:
        raise ValueError(f"swizzle mode {mode!r} is not one of None, 'none', '32B', '64B', '128B'")
    return m


def swizzle(addr, mode):
    """The swizzled byte address of ``addr`` (an int or a NumPy integer array) under ``mode``
    (None, "32B", "64B" or "128B"): bits [4:4+k] XOR bits [7:7+k], k = 1, 2, 3."""
    k = _BITS[mode_name(mode)]
    if k == 0:
        return addr
    mask = (1 << k) - 1
    return addr ^ (((addr >> 7) & mask) << 4)
