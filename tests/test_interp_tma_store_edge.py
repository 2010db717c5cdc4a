"""Issue 22, a TMA store whose box runs past the tensor: a Hopper GEMM epilogue keeps 72-element
rows in shared memory (64 values and 8 of padding it never writes) and stores them with a
72-wide box over a 64-wide tensor. The ISA drops the box elements outside the tensor, so their
shared bytes are never read: the store (and the reduction) runs clean and writes the 64 values;
an unwritten byte of an element that lands inside the tensor is still an uninitialized read."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import UninitializedReadError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.toolchain import ptxas_check

STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
REDUCE = "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"


def epilogue(op):
    """128 threads: thread t writes float(t) to row t / 64, column t % 64 of a tile of 72-float
    rows (not thread ``skip``); thread 0 stores the tile with the tensor map at (c0, c1)."""
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry epi(.param .align 64 .b8 tm[128], .param .u32 skip, .param .s32 c0, .param .s32 c1)
{{
    .reg .u32 %r<10>; .reg .f32 %f1; .reg .u64 %rd1; .reg .pred %p<3>;
    .shared .align 128 .b8 tile[576];
    ld.param.u32 %r8, [skip];
    ld.param.u32 %r6, [c0];
    ld.param.u32 %r7, [c1];
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 6;
    and.b32 %r3, %r1, 63;
    mad.lo.u32 %r4, %r2, 72, %r3;
    shl.b32 %r4, %r4, 2;
    mov.u32 %r5, tile;
    add.u32 %r5, %r5, %r4;
    cvt.rn.f32.u32 %f1, %r1;
    setp.ne.u32 %p2, %r1, %r8;
    @%p2 st.shared.f32 [%r5], %f1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r9, tile;
    @%p1 {op} [%rd1, {{%r6, %r7}}], [%r9];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    ret;
}}
"""


def run(Y, op=STORE, skip=999, at=(0, 0)):
    launch(epilogue(op), "epi", [tensor_map(Y, box=(72, 2)), np.uint32(skip), np.int32(at[0]),
                                 np.int32(at[1])], block=128)


VALUES = np.arange(128, dtype=np.float32).reshape(2, 64)


@pytest.mark.parametrize("op", [STORE, REDUCE])
def test_the_kernels_are_real_ptx(op):
    try:
        ptxas_check(epilogue(op), "sm_90a")
    except Exception as e:          # no ptxas on this machine: nothing to check
        if "not found" not in str(e) and "no ptxas" not in str(e).lower():
            raise


def test_a_72_wide_box_over_a_64_wide_tensor_stores_the_64_values_clean():
    Y = np.full((2, 64), -1, np.float32)
    run(Y)
    np.testing.assert_array_equal(Y, VALUES)


def test_the_reduction_form_adds_the_64_values_clean():
    Y = np.ones((2, 64), np.float32)
    run(Y, REDUCE)
    np.testing.assert_array_equal(Y, VALUES + 1)


def test_rows_below_the_tensor_are_dropped_too():
    Y = np.full((3, 64), -1, np.float32)
    run(Y, at=(0, 2))                     # box rows 2, 3: row 3 is outside, tile row 1 unread
    np.testing.assert_array_equal(Y[2], VALUES[0])
    assert (Y[:2] == -1).all()
    Y = np.full((3, 64), -1, np.float32)
    run(Y, skip=70, at=(0, 2))            # the unwritten value is in the dropped tile row
    np.testing.assert_array_equal(Y[2], VALUES[0])


def test_the_padding_inside_a_72_wide_tensor_is_an_uninitialized_read():
    Y = np.zeros((2, 72), np.float32)
    with pytest.raises(UninitializedReadError, match=r"the TMA store reads shared address 0x100 "
                                                     r"'tile' \(\+256\) before any thread of this CTA "
                                                     r"wrote it"):
        run(Y)


@pytest.mark.parametrize("op, noun", [(STORE, "store"), (REDUCE, "reduction")])
def test_an_unwritten_value_inside_the_tensor_is_an_uninitialized_read(op, noun):
    Y = np.zeros((2, 64), np.float32)
    with pytest.raises(UninitializedReadError, match=rf"the TMA {noun} reads shared address 0x138 "
                                                     rf"'tile' \(\+312\) before any thread"):
        run(Y, op, skip=70)                # row 1, column 6: byte (72 + 6) * 4


def run_overwrite(off):
    """The tile stored at (2, 0) (box columns 62..71 dropped, so of row 0's 16-byte chunk at
    bytes 240..255 only bytes 240..247 are read), then thread 0 stores to ``tile + off`` before
    the bulk group is retired."""
    text = epilogue(STORE).replace(
        "    @%p1 cp.async.bulk.wait_group.read 0;\n",
        f"    @%p1 st.shared.f32 [%r9+{off}], %f1;\n    @%p1 cp.async.bulk.wait_group.read 0;\n")
    Y = np.full((2, 64), -1, np.float32)
    launch(text, "epi", [tensor_map(Y, box=(72, 2)), np.uint32(999), np.int32(2), np.int32(0)], block=128)
    return Y


def test_a_store_to_a_dropped_byte_of_a_chunk_the_store_reads_in_part_is_clean():
    # the bulk reads are counted per 16-byte chunk; a chunk read only in part is resolved to
    # the bytes the TMA store reads
    Y = run_overwrite(248)
    np.testing.assert_array_equal(Y[:, 2:], VALUES[:, :62])
    assert (Y[:, :2] == -1).all()


def test_a_store_to_a_read_byte_of_that_chunk_is_reported():
    from jax_pyptx.errors import AsyncProxyError

    with pytest.raises(AsyncProxyError, match=r"the store overwrites shared address 0xf4 'tile' "
                                              r"\(\+244\) that `@%p1 cp.async.bulk.tensor.2d"):
        run_overwrite(244)
