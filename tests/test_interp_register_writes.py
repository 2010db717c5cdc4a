"""A register write by part of a batch: the new values land in the register's old array itself
where nothing else can see it (``register_blocks.sole``: it owns its memory and only the
registers' dict holds it), else in a copy, so a value read earlier never changes; the native
moves that write a block's rows into its registers, and the one that reads each warpgroup's
uniform value, give NumPy's values (a tile's: ``test_interp_native``)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret.launch import LaunchMemory, LaunchState, get_module, get_program
from jax_pyptx.interpret.machine.group import Group
from jax_pyptx.interpret.scheduler import native
from jax_pyptx.interpret.scheduler.context import Context
from jax_pyptx.interpret.scheduler.register_blocks import targets

TEXT = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<4>;
    mov.u32 %r1, %tid.x;
    ret;
}
"""

needs_native = pytest.mark.skipif(native.ARITH is None, reason="the native core is not built")


def _context(sanitize=True):
    prog = get_program(get_module(TEXT), "k")
    return Context(prog, LaunchState((1, 1, 1), (64, 1, 1), (1, 1, 1), 0, LaunchMemory(prog), 1000), [0],
                   sanitize=sanitize)


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_partial_write_lands_in_place_only_where_nothing_else_holds_the_array(sanitize):
    ctx = _context(sanitize)
    key = next(iter(ctx.prog.regs))
    half = Group(np.arange(32, dtype=np.int64), 0, ctx.N)
    given = np.arange(64, dtype=np.uint32)
    ctx.write(key, Group(np.arange(64, dtype=np.int64), 0, ctx.N), given)     # a full write keeps the array
    ctx.write(key, half, np.full(32, 7, np.uint32))         # the caller still holds it: a copy
    assert ctx.regs[key] is not given and (given[:32] == np.arange(32)).all()
    del given
    first = id(ctx.regs[key])
    ctx.write(key, half, np.full(32, 8, np.uint32))         # only the registers hold it: in place
    assert id(ctx.regs[key]) == first
    held = ctx.regs[key]
    ctx.write(key, half, np.full(32, 9, np.uint32))         # held above: a copy, the held values kept
    assert ctx.regs[key] is not held and (held[:32] == 8).all()
    del held
    view = ctx.regs[key][:4]
    ctx.write(key, half, np.full(32, 10, np.uint32))        # a view holds it too
    assert (view == 9).all()
    np.testing.assert_array_equal(ctx.regs[key], np.r_[np.full(32, 10), np.arange(32, 64)])


def test_a_block_writes_in_place_the_old_arrays_only_the_registers_hold():
    regs = {"a": np.arange(8, dtype=np.uint32), "b": np.arange(8, dtype=np.uint32),
            "c": np.arange(16, dtype=np.uint32)[::2].copy()}
    regs["d"] = regs["c"]                 # one array under two names
    held = regs["b"]
    olds = [regs.get(k) for k in ("a", "b", "c", "e")]
    new = targets(olds, 8, np.uint32)
    assert new[0] is regs["a"]
    assert new[1] is not held and new[2] is not regs["c"]
    np.testing.assert_array_equal(new[1], held)
    np.testing.assert_array_equal(new[2], regs["c"])
    assert new[3].dtype == np.uint32 and not new[3].any()
    block = np.zeros((2, 8), np.uint32)
    regs = {"v": block[0], "f": np.zeros(8, np.uint32)}      # a row of a block: not its own memory
    regs["f"].flags.writeable = False
    new = targets([regs.get(k) for k in ("v", "f")], 8, np.uint32)
    assert new[0] is not regs["v"] and new[1] is not regs["f"]
    new[0][:] = 1
    assert not block.any()


@needs_native
@pytest.mark.parametrize("dtype", [np.bool_, np.uint32, np.uint64])
@pytest.mark.parametrize("runs", [True, False])
def test_rows_land_in_their_registers_at_the_slots(dtype, runs):
    A = native.ARITH
    rng = np.random.default_rng(3)
    N, k = 300, 5
    slots = (np.r_[10:74, 100:164, 200:264] if runs else rng.choice(N, 150, replace=False)).astype(np.int64)
    rows = rng.integers(0, 2 if dtype is np.bool_ else 2**31, (k, len(slots))).astype(dtype)
    regs = [rng.integers(0, 2, N).astype(dtype) for _ in range(k)]
    want = [r.copy() for r in regs]
    for j in range(k):
        want[j][slots] = rows[j]
    A.rows_to_regs(rows, slots, regs)
    for got, w in zip(regs, want):
        np.testing.assert_array_equal(got, w)


@needs_native
def test_rows_to_regs_says_what_it_cannot_take():
    A = native.ARITH
    rows = np.ones((2, 4), np.uint32)
    slots = np.arange(4, dtype=np.int64)
    regs = [np.zeros(8, np.uint32), np.zeros(8, np.uint32)]
    with pytest.raises(ValueError, match="rows_to_regs: a slot lies outside the registers"):
        A.rows_to_regs(rows, slots, [regs[0][:3].copy(), regs[1]])
    with pytest.raises(ValueError, match="rows_to_regs: a slot lies outside the registers"):
        A.rows_to_regs(rows, slots - 1, regs)
    with pytest.raises(ValueError, match="rows_to_regs: register 1 is not 1-D of 4-byte elements"):
        A.rows_to_regs(rows, slots, [regs[0], regs[1].astype(np.uint64)])
    frozen = np.zeros(8, np.uint32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="rows_to_regs: register 0 is not a contiguous writable buffer"):
        A.rows_to_regs(rows, slots, [frozen, regs[1]])
    with pytest.raises(ValueError, match=r"rows_to_regs: rows must be \(len\(regs\), len\(slots\)\)"):
        A.rows_to_regs(rows, slots[:3], regs)
    with pytest.raises(ValueError, match="rows_to_regs: rows must be of 1-, 4- or 8-byte elements"):
        A.rows_to_regs(rows.astype(np.uint16), slots, regs)
    assert not regs[0].any() and not regs[1].any()          # (nothing written by a call that fails)


@needs_native
@pytest.mark.parametrize("dtype", [np.bool_, np.uint32, np.uint64])
def test_take_uniform_gives_each_groups_first_value_and_whether_all_agree(dtype):
    A = native.ARITH
    rng = np.random.default_rng(7)
    N, k, group = 600, 3, 128
    slots = np.r_[64:320, 400:528].astype(np.int64)          # three groups of 128 slots
    regs = [np.zeros(N, dtype) for _ in range(k)]
    for j, r in enumerate(regs):
        for w in range(3):
            r[slots[w * group:(w + 1) * group]] = rng.integers(0, 2 if dtype is np.bool_ else 2**31)
    out = np.empty((k, 3), dtype)
    assert A.take_uniform(regs, slots, group, out)
    np.testing.assert_array_equal(out, np.stack([r[slots[::group]] for r in regs]))
    regs[2][slots[group + 77]] = ~regs[2][slots[group + 77]]        # one thread of group 1 differs
    assert not A.take_uniform(regs, slots, group, out)
    np.testing.assert_array_equal(out, np.stack([r[slots[::group]] for r in regs]))
    with pytest.raises(ValueError, match=r"take_uniform: out must be \(len\(regs\), len\(slots\) / group\)"):
        A.take_uniform(regs, slots[:200], group, out)
    with pytest.raises(ValueError, match="take_uniform: a slot lies outside the registers"):
        A.take_uniform([r[:500].copy() for r in regs], slots, group, out)
    with pytest.raises(ValueError, match="take_uniform: register 0 is not 1-D of"):
        A.take_uniform([regs[0].astype(np.uint16)] + regs[1:], slots, group, out)
