"""``tcgen05.mma`` issued by one thread of each of several CTAs (``_Tcgen05Mma.batched``): the
accumulators of every CTA updated at once (``_accumulate_all``) hold the bits the one-thread-
at-a-time path gives, for every accumulator type, negation and input scaling, and the batched
update is what runs; a CTA's accumulator with something to report is left to one by one."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import UninitializedReadError
from jax_pyptx.interpret.ops import tcgen05_mma as TM

from .mma_util import idesc, rand, run_tc, tc_kernel
from .test_interp_tcgen05 import KIND_K, MMA, mma_image


def _run(monkeypatch, batched, issue, pre, img, da, db, z):
    """The TMEM dump of two CTAs running the kernel (unsanitized: both write the same output),
    and how many instructions updated their accumulators at once."""
    seen = [0]
    real = TM._Tcgen05Mma._accumulate_all

    def acc(self, *a):
        ok = batched and real(self, *a)
        seen[0] += ok
        return ok
    monkeypatch.setattr(TM._Tcgen05Mma, "_accumulate_all", acc)
    out = run_tc(tc_kernel(issue=issue, pre=pre), img, da, db, z, grid=2, sanitize=False)
    return out, seen[0]


@pytest.mark.parametrize("kind, dt, at, bt", [
    ("f16", "f32", "bf16", "bf16"), ("f16", "f16", "f16", "f16"), ("i8", "s32", "s8", "u8")])
@pytest.mark.parametrize("neg_b", [0, 1])
def test_accumulators_of_every_cta_updated_at_once_as_one_by_one(monkeypatch, kind, dt, at, bt, neg_b):
    rng = np.random.default_rng(31)
    m, n, k = 128, 32, KIND_K[kind]
    A, B = rand(rng, (m, k), at), rand(rng, (k, n), bt)
    img, da, db = mma_image(A, B, at, bt)
    # D = P; D = +-P + D; D = +-P + D * 2^-2 (the input scaled: kind::f16 only)
    issue = MMA.format(kind=kind, en=0) + "\n" + MMA.format(kind=kind, en=1).replace("%z", "%r12")
    if kind == "f16":
        issue += f"\n  tcgen05.mma.cta_group::1.kind::{kind} [%t], %x, %y, %r12, 1, 2;"
    pre = f"  mov.u32 %r12, {idesc(kind, m, n, dt, at, bt, neg_b=neg_b)};"
    z = idesc(kind, m, n, dt, at, bt)
    fused, at_once = _run(monkeypatch, True, issue, pre, img, da, db, z)
    single, none = _run(monkeypatch, False, issue, pre, img, da, db, z)
    np.testing.assert_array_equal(fused, single)
    assert at_once == issue.count("tcgen05.mma") and none == 0
    assert fused.any() != (kind == "i8" and neg_b == 1)        # (D = P - P: zero)


def test_an_unwritten_accumulator_of_one_cta_is_reported_as_one_by_one(monkeypatch):
    # enable-input-d on TMEM no one wrote (the kernel does not zero it): the batched update
    # finds the cells unwritten and leaves the threads to report one by one, the first CTA's
    rng = np.random.default_rng(32)
    A, B = rand(rng, (128, 16), "bf16"), rand(rng, (16, 32), "bf16")
    img, da, db = mma_image(A, B, "bf16", "bf16")
    z = idesc("f16", 128, 32, "f32", "bf16", "bf16")
    msgs = []
    for fuse in (True, False):
        real = TM._Tcgen05Mma._accumulate_all
        monkeypatch.setattr(TM._Tcgen05Mma, "_accumulate_all", lambda self, *a, r=real, f=fuse: f and r(self, *a))
        with pytest.raises(UninitializedReadError) as e:
            run_tc(tc_kernel(issue=MMA.format(kind="f16", en=1), zero=False), img, da, db, z, grid=2)
        msgs.append(str(e.value))
        monkeypatch.undo()
    assert msgs[0] == msgs[1] and "CTA (0,0,0)" in msgs[0]
