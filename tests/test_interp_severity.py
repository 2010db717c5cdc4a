"""The sanitizer's severities (``interpret.severity``): errors for what is wrong or undefined on
a GPU, ``SanitizerWarning`` (once per instruction, naming the PTX line and the user's line) for
PTX that breaks the ISA's letter while hardware gives the defined result, ``sanitize="strict"``
raising those, and ``sanitize=False`` giving no sanitizer verdict at all."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import PtxValueError, RaceError, SanitizerWarning, UninitializedReadError
from jax_pyptx.interpret import SanitizerWarning as ReExported
from jax_pyptx.interpret import launch
from jax_pyptx.types import u32, u64

from .helpers import line_of

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"


@kernel(in_specs=(Tile(64, u32),), out_specs=(Tile(64, u32),), block=(64, 1, 1), grid=(1, 1, 1))
def zero_from_every_warp(X, Y):
    """A histogram's prologue: every warp zeroes the bins, then adds its value."""
    s = smem.alloc(u32, (32,))
    t = reg.from_(ptx.special.tid.x(), u32)
    lane = t & 31
    ptx.inst.st.shared.u32(ptx.addr(s.ptr() + lane * 4), 0)           # ZERO (both warps)
    ptx.bar.sync(0)
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    ptx.inst.red.shared.add.u32(ptx.addr(s.ptr() + lane * 4), v)
    ptx.bar.sync(0)
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + lane * 4))
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


def test_warning_names_the_users_line_once_and_the_run_goes_on():
    x = np.arange(64, dtype=np.uint32)
    with pytest.warns(SanitizerWarning) as rec:
        y = zero_from_every_warp.interpret(x)
    np.testing.assert_array_equal(y, np.tile(x[:32] + x[32:], 2))
    assert len(rec) == 1
    w = rec[0]
    where = line_of(zero_from_every_warp.fn, "# ZERO")
    assert f"{w.filename}:{w.lineno}" == where                  # Python's warning points at the user's line
    assert str(w.message).startswith(f"{where}: race on shared store st.shared.u32 [")
    assert "by warp 0 of CTA (0,0,0): it stores to shared address 0x0" in str(w.message)
    assert w.message.error_class is RaceError and str(w.message.loc) == where
    assert w.message.instruction.startswith("st.shared.u32 [")
    assert ReExported is SanitizerWarning and issubclass(SanitizerWarning, UserWarning)
    # strict: the same report raised
    with pytest.raises(RaceError) as ei:
        zero_from_every_warp.interpret(x, sanitize="strict")
    assert str(ei.value).startswith(f"{where}: race on shared store st.shared.u32 [")
    assert "a data race by the PTX memory model, but every order leaves the same bytes" in str(ei.value)
    # off: nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(zero_from_every_warp.interpret(x, sanitize=False), y)


@pytest.mark.parametrize("bad", ["yes", "Strict", 2, 0.5, None])
def test_sanitize_takes_true_false_or_strict(bad):
    msg = (f"sanitize={bad!r} is not a sanitizer mode: use True (errors raise, hardware-forgiven breaches of "
           f"the ISA warn with SanitizerWarning), 'strict' (those raise too) or False (no checks)")
    with pytest.raises(PtxValueError) as ei:
        launch(HDR + ".visible .entry k()\n{\n ret;\n}", "k", [], sanitize=bad)
    assert str(ei.value) == msg
    with pytest.raises(PtxValueError) as ei:
        zero_from_every_warp.interpret(np.zeros(64, np.uint32), sanitize=bad)
    assert str(ei.value) == msg


# Planted bugs: each is an error with the sanitizer on, and no verdict (nothing raised, nothing
# warned) with it off; only what cannot be executed still raises there.
UNINIT_REG = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<3>; .reg .u64 %rd1;
    ld.param.u64 %rd1, [y];
    add.u32 %r2, %r1, 1;
    st.global.u32 [%rd1], %r2;
    ret;
}"""
UNINIT_SMEM = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<3>; .reg .u64 %rd1;
    .shared .align 4 .b32 s[4];
    ld.param.u64 %rd1, [y];
    ld.shared.u32 %r2, [s+4];
    st.global.u32 [%rd1], %r2;
    ret;
}"""
RACE = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<3>; .reg .u64 %rd1;
    .shared .align 4 .b32 s[4];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    st.shared.u32 [s], %r1;
    ret;
}"""
READ_OUTPUT = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<3>; .reg .u64 %rd1;
    ld.param.u64 %rd1, [y];
    ld.global.u32 %r1, [%rd1];
    add.u32 %r1, %r1, 1;
    st.global.u32 [%rd1], %r1;
    ret;
}"""
DIVERGENT_SHFL = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p1;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
    ret;
}"""


@pytest.mark.parametrize("ptx_text,block,err", [
    (UNINIT_REG, 32, "from uninitialized register %r1 read by"),
    (UNINIT_SMEM, 32, "is read before any thread of this CTA wrote it"),
    (RACE, 64, "a different value, with no barrier between them"),
    (READ_OUTPUT, 1, "uninitialized"),
], ids=["uninit-register", "uninit-shared", "race", "output-read-first"])
def test_sanitize_false_gives_no_verdict(ptx_text, block, err):
    y = np.zeros(4, np.uint32)
    with pytest.raises(Exception, match=err) as ei:
        launch(ptx_text, "k", [y], block=block, outputs=[0])
    assert type(ei.value).__name__.endswith("Error")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launch(ptx_text, "k", [y], block=block, outputs=[0], sanitize=False)


def test_sanitize_false_still_refuses_what_cannot_run():
    oob = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r1; .reg .u64 %rd1;
    ld.param.u64 %rd1, [y];
    ld.global.u32 %r1, [%rd1+4096];
    ret;
}"""
    with pytest.raises(Exception, match="out-of-bounds global load"):
        launch(oob, "k", [np.zeros(4, np.uint32)], sanitize=False)
    # a .sync collective waiting for lanes that never come: it cannot finish, sanitized or not
    with pytest.raises(Exception, match=r"waits for lanes 16-31 of its warp \(they never arrive\)"):
        launch(DIVERGENT_SHFL, "k", [np.zeros(4, np.uint32)], block=32, sanitize=False)


def test_strict_keeps_errors_errors():
    with pytest.raises(UninitializedReadError, match=r"^<ptx>:10: undefined bits of register %r2 \(bits 0-31, from "
                                                     r"uninitialized register %r1 read by <ptx>:9: add.u32"):
        launch(UNINIT_REG, "k", [np.zeros(4, np.uint32)], block=1, sanitize="strict")
