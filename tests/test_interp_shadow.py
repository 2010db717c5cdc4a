"""The sanitizer's large arrays are recycled between launches (``interpret/state/shadow.py``, issue
24): a recycled array comes back filled as asked, only whole arrays are kept, and a launch never
sees what the one before it recorded (written bytes, global race tags)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError, UnwrittenOutputError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state import shadow

N = 1 << 18                       # 1 MiB of u32: big enough to be recycled


def test_filled_recycles_whole_arrays_refilled():
    a = shadow.filled(N, np.int32)
    assert a.dtype == np.int32 and a.shape == (N,) and not a.any()
    a[::7] = 5
    shadow.recycle(a)
    b = shadow.filled(N, np.int32)
    assert np.shares_memory(a, b) and not b.any()
    shadow.recycle(b)
    c = shadow.filled(4 * N, np.uint8, 1)             # same bytes, another dtype and value
    assert np.shares_memory(a, c) and c.dtype == np.uint8 and (c == 1).all()
    part = np.zeros(2 * N, np.int32)[:N]                # a view of a larger array: not kept
    shadow.recycle(part)
    d = shadow.filled(N, np.int32)
    assert not np.shares_memory(d, part) and not d.any()
    small = shadow.filled(16, np.int32)                 # small: plain NumPy, never kept
    shadow.recycle(small)
    assert not np.shares_memory(shadow.filled(16, np.int32), small)


KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y, .param .u32 n)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p1;
    ld.param.u64 %rd1, [y];
    ld.param.u32 %r5, [n];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, 256, %r1;
    setp.ge.u32 %p1, %r3, %r5;
    @%p1 bra DONE;
    mul.wide.u32 %rd2, %r3, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    SECOND
DONE:
    ret;
}
"""


def test_a_launch_after_one_that_wrote_everything_starts_fresh():
    y = np.zeros(N, np.uint32)
    k = KERNEL.replace("SECOND", "")
    before = len(shadow._spare.get(N * 4, []))
    for _ in range(2):
        launch(k, "k", [y, np.uint32(N)], grid=N // 256, block=256, outputs=[0])
        assert (y == np.arange(N)).all()
        # contiguous stores, each CTA its own words: the written bytes stay intervals and the
        # race records are never needed per element, so no array is taken from the pool (the
        # arrays of test_per_byte_flags_recycled_too are)
        assert len(shadow._spare.get(N * 4, [])) == before
    with pytest.raises(UnwrittenOutputError, match=r"left 256 of the 262144 elements .* flat elements "
                                                   r"261888-262143"):
        launch(k, "k", [y, np.uint32(N - 256)], grid=N // 256, block=256, outputs=[0])
    # CTA c storing over CTA c + 1's words too: the tags of the launches before are gone, the
    # race is this launch's own
    shifted = KERNEL.replace("SECOND", "st.global.u32 [%rd3+1024], %r1;")
    with pytest.raises(RaceError, match=r"by thread \(0,0,0\) of CTA \(0,0,0\): it stores to global address "
                                        r"0x7f0000000400 .* that CTA \(1,0,0\) also stored earlier in this launch, "
                                        r"a different value"):
        launch(shifted, "k", [y, np.uint32(N - 256)], grid=N // 256, block=256, outputs=[0])


def test_per_byte_flags_recycled_too():
    # every other word, then the words between: a strided store makes the written-byte flags
    # per byte; both launches write everything and hand back flags and tags
    k = KERNEL.replace("mad.lo.u32 %r3, %r2, 256, %r1;", "mad.lo.u32 %r3, %r2, 256, %r1;\n    shl.b32 %r4, %r3, 1;") \
        .replace("mul.wide.u32 %rd2, %r3, 4;", "mul.wide.u32 %rd2, %r4, 4;") \
        .replace("SECOND", "st.global.u32 [%rd3+4], %r3;")
    y = np.zeros(N, np.uint32)
    for _ in range(2):
        launch(k, "k", [y, np.uint32(N // 2)], grid=N // 512, block=256, outputs=[0])
        assert (y == np.repeat(np.arange(N // 2), 2)).all()
        assert len(shadow._spare.get(N * 4, [])) >= 2
    with pytest.raises(UnwrittenOutputError, match=r"left 256 of the 262144 elements .* flat elements "
                                                   r"261888-262143"):
        launch(k, "k", [y, np.uint32(N // 2 - 128)], grid=N // 512, block=256, outputs=[0])
