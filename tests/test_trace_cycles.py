"""A finished trace holds no reference cycles: a kernel (and its traces) dropped is freed by
reference counting at once, not left for Python's cyclic collector (which took a third of
the time of re-tracing a GEMM when every trace was a cycle)."""
from __future__ import annotations

import collections
import gc

import pytest

from examples.library import get


def _cyclic_garbage(make) -> collections.Counter:
    """Our objects (of this package's or the examples' classes) that only the cyclic
    collector would free once what ``make()`` returns is dropped, by type name. (Other
    libraries' garbage, torch's from earlier tests, is not counted.)"""
    for _ in range(5):               # earlier tests' garbage, finalizers freeing more of it
        if not gc.collect():
            break
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        obj = make()
        del obj
        gc.collect()
        return collections.Counter(
            type(o).__name__ for o in gc.garbage
            if type(o).__module__.startswith(("jax_pyptx", "examples")))
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        if was:
            gc.enable()


@pytest.mark.parametrize("name", ["blackwell/gemm-bf16", "blackwell/persistent_gemm-bf16",
                                  "hopper/gemm-bf16", "hopper/attention-causal-bf16",
                                  "ampere/gemm-bf16", "ampere/layer_norm-f32"])
def test_a_traced_library_kernel_leaves_no_cycles(name):
    e = get(name)

    def make():
        k = e.kernel()
        assert "ret;" in k.ptx(**e.shape) or "exit;" in k.ptx(**e.shape)
        return k

    assert _cyclic_garbage(make) == {}


def test_the_check_sees_a_cycle():
    # the helper is not blind: a trace kept in a cycle with its registers is reported
    from jax_pyptx import reg
    from jax_pyptx.dsl.trace_scope import trace_scope
    from jax_pyptx.types import u32

    def make():
        with trace_scope() as t:
            r = reg.scalar(u32, 1)
        t.keep = r                   # the trace -> its register -> the trace
        return t

    assert _cyclic_garbage(make)["Register"] >= 1


def test_every_field_of_a_trace_is_declared_and_release_clears_the_named_state():
    from jax_pyptx import kernel, ptx, reg
    from jax_pyptx.dsl.context import Trace
    from jax_pyptx.isa.model import parse_target
    from jax_pyptx.types import u32

    tr = Trace("k", parse_target("sm_90a"))
    with pytest.raises(AttributeError):
        tr.named_registers = {}          # a module cannot add state of its own

    def make():
        @kernel
        def k():
            ptx.file_(1, "k.py")
            ptx.var("shared", u32, "flag")
            with ptx.scope():
                reg.scalar(u32, 1, name="tmp")
            reg.alloc(u32)
            ptx.ret()

        lines = [line.strip() for line in k.ptx().splitlines()]
        assert {'.file 1 "k.py"', ".shared .u32 flag;", ".reg .u32 \ttmp;",
                ".reg .u32 \t%au0;"} <= set(lines)
        return k

    assert _cyclic_garbage(make) == {}
