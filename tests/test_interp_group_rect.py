"""A group that holds the same slots of every CTA of the batch (a warp-specialized role) reads
and writes its registers as strided slices (``machine.group``: ``Group.rect``, ``gather``,
``scatter``), with the values of fancy indexing."""
from __future__ import annotations

import numpy as np

from jax_pyptx.interpret.machine.group import Group, gather, scatter

S, NCTAS = 384, 16
N = S * NCTAS


def _role(lo, hi, ctas=range(NCTAS)):
    return Group(np.concatenate([np.arange(c * S + lo, c * S + hi) for c in ctas]), 0, N)


def test_a_role_of_every_cta_is_a_rect():
    assert _role(128, 384).rect(S, NCTAS) == (NCTAS, S, 128, 384)
    assert _role(0, 128).rect(S, NCTAS) == (NCTAS, S, 0, 128)


def test_other_slot_sets_are_not():
    assert _role(128, 384, ctas=range(15)).rect(S, NCTAS) is False       # not every CTA
    assert _role(0, 64).rect(S, NCTAS) is False                          # too small to gain
    g = _role(128, 384)
    idx = g.idx.copy()
    idx[300] += 1                                                        # a hole and a repeat
    assert Group(np.sort(idx), 0, N).rect(S, NCTAS) is False
    lo = [128] * NCTAS
    lo[2] = 127                                                          # CTA 2's slots moved by one
    moved = np.concatenate([np.arange(c * S + lo[c], c * S + lo[c] + 256) for c in range(NCTAS)])
    assert Group(moved, 0, N).rect(S, NCTAS) is False


def test_gather_and_scatter_agree_with_fancy_indexing():
    rng = np.random.default_rng(0)
    g = _role(128, 384)
    a = rng.integers(0, 1 << 30, N).astype(np.uint32)
    got = gather(a, g, S, NCTAS)
    np.testing.assert_array_equal(got, a[g.idx])
    got[:] = 0                                                           # a copy, not a view
    np.testing.assert_array_equal(gather(a, g, S, NCTAS), a[g.idx])
    v = rng.integers(0, 1 << 30, g.n).astype(np.uint32)
    b, c = a.copy(), a.copy()
    scatter(b, g, v, S, NCTAS)
    c[g.idx] = v
    np.testing.assert_array_equal(b, c)
    small = _role(0, 64)                                                 # fancy indexing
    np.testing.assert_array_equal(gather(a, small, S, NCTAS), a[small.idx])


def test_runs_of_consecutive_slots_and_a_group_narrowed():
    g = _role(128, 384)
    assert g.runs() == [(256 * c, 256 * (c + 1), c * S + 128) for c in range(NCTAS)]
    assert Group(np.arange(0, 64, 2), 0, N).runs() is None                  # 32 runs
    assert g.rect(S, NCTAS) == (NCTAS, S, 128, 384) and len(g.warp_masks()[0]) == 8 * NCTAS
    # released in part at a barrier, the group keeps CTA 1's slots: what was worked out of the
    # old ones is dropped
    g.narrow(g.idx[256:512], N)
    assert (g.n, g.full) == (256, False)
    assert g.runs() == [(0, 256, S + 128)] and g.rect(S, NCTAS) is False
    np.testing.assert_array_equal(g.warp_masks()[0], np.arange(16, 24))


def test_groups_of_the_same_slots_share_what_was_worked_out():
    # a role's group made anew (another divergence, another launch) finds its slots' answers;
    # an answer that depends on the CTA's shape is kept per shape
    a, b = _role(128, 384), _role(128, 384)
    assert a.idx is not b.idx
    assert b.warp_masks() is a.warp_masks() and b.runs() is a.runs()
    assert a.warp_blocks(12) == (NCTAS, 8, [4, 5, 6, 7, 8, 9, 10, 11])
    assert b.warp_blocks(16) is None                  # (CTAs of 16 warps: not one sequence)
    assert _role(0, 128).warp_masks() is not a.warp_masks()
    # found by the slots' content (``slots_content``), whatever integer type holds them; a set
    # of the same length, first and last slot but another slot between keeps its own
    assert Group(a.idx.astype(np.int32), 0, N).facts() is a.facts()
    idx = a.idx.copy()
    idx[300] += 1
    other = Group(idx, 0, N).facts()
    assert other is not a.facts() and Group(idx.copy(), 0, N).facts() is other
