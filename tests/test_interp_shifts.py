"""``shl`` / ``shr``: a constant shift amount (an immediate, handled by its own path) gives what
the same amount in a register gives, and both match the ISA: amounts past the width clamp
(``shl`` and unsigned ``shr`` give 0, signed ``shr`` fills with the sign bit)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret import launch

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"
AMOUNTS = [0, 1, 7, 15, 31, 32, 33, 63, 64, 100, 0xFFFFFFFF]
TYPES = {"b16": np.uint16, "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "s16": np.int16,
         "b64": np.uint64, "u64": np.uint64, "s64": np.int64}


def _reference(op, x, n, dt):
    bits = 8 * dt().itemsize
    if n >= bits:
        if op == "shr" and np.dtype(dt).kind == "i":
            return np.where(x < 0, dt(-1), dt(0)).astype(dt)
        return np.zeros_like(x)
    return (x << dt(n)) if op == "shl" else (x >> dt(n))


@pytest.mark.parametrize("op,ty", [("shl", t) for t in TYPES if t[0] == "b"] + [("shr", t) for t in TYPES])
def test_constant_and_register_amounts_agree_with_the_isa(op, ty):
    dt = TYPES[ty]
    reg = {16: "%h", 32: "%r", 64: "%d"}[8 * dt().itemsize]
    bits = 8 * dt().itemsize
    body = []
    for j, n in enumerate(AMOUNTS):
        body += [f"    {op}.{ty} {reg}1, {reg}0, {n};",
                 f"    st.global.{ty} [%b+{2 * j * dt().itemsize}], {reg}1;",
                 f"    mov.u32 %n, {n};",
                 f"    {op}.{ty} {reg}1, {reg}0, %n;",
                 f"    st.global.{ty} [%b+{(2 * j + 1) * dt().itemsize}], {reg}1;"]
    text = HDR + f"""
.visible .entry k(.param .u64 x, .param .u64 y)
{{
    .reg .b{bits} {reg}<2>; .reg .u32 %n; .reg .u64 %a, %b, %t;
    .reg .u32 %i;
    ld.param.u64 %a, [x];
    ld.param.u64 %b, [y];
    mov.u32 %i, %tid.x;
    mul.wide.u32 %t, %i, {dt().itemsize};
    add.u64 %a, %a, %t;
    ld.global.{ty} {reg}0, [%a];
    mul.wide.u32 %t, %i, {2 * len(AMOUNTS) * dt().itemsize};
    add.u64 %b, %b, %t;
{chr(10).join(body)}
    ret;
}}
"""
    rng = np.random.default_rng(1)
    x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, 32, dtype=dt, endpoint=True)
    x[:2] = [np.iinfo(dt).min, -1 if np.dtype(dt).kind == "i" else np.iinfo(dt).max]
    y = np.zeros((32, len(AMOUNTS), 2), dt)
    launch(text, "k", [x, y], block=(32, 1, 1))
    np.testing.assert_array_equal(y[:, :, 0], y[:, :, 1])
    for j, n in enumerate(AMOUNTS):
        np.testing.assert_array_equal(y[:, j, 0], _reference(op, x, n, dt), err_msg=f"{op}.{ty} by {n}")
