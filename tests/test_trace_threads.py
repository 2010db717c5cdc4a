"""Tracing is thread-safe: each thread traces on its own stack, so kernels traced at the same
time from several threads come out exactly as when traced alone."""
import sys
import threading

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.dsl import context
from jax_pyptx.errors import TraceError
from jax_pyptx.types import u32


def _make(i: int):
    """A kernel whose body depends on ``i`` (and on its template parameter ``n``)."""
    def body(*, n=4):
        r = reg.from_(ptx.special.tid.x(), u32)
        for k in range(n):
            r = r + (i * 100 + k)
        ptx.ret()
    body.__name__ = f"k{i}"
    return kernel(arch="sm_80")(body)


def test_threads_tracing_together_get_their_own_instructions():
    n_threads, rounds = 6, 15
    sizes = range(40, 40 + rounds)
    kernels = [_make(i) for i in range(n_threads)]
    expected = {(i, n): kernels[i].ptx(n=n) for i in range(n_threads) for n in sizes}
    # fresh kernels: nothing cached, every call traces
    kernels = [_make(i) for i in range(n_threads)]
    got, errors = {}, []
    start = threading.Barrier(n_threads)

    def work(i):
        try:
            start.wait()
            for n in sizes:
                got[(i, n)] = kernels[i].ptx(n=n)
        except Exception as e:  # reported below with the thread's index
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)      # switch threads often, mid-trace
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    wrong = sorted(k for k in expected if got.get(k) != expected[k])
    assert wrong == []


def test_trace_stack_is_per_thread():
    seen = []

    @kernel(arch="sm_80")
    def outer():
        # while this thread traces, another thread has no trace in progress
        def probe():
            try:
                context.current("reg.scalar")
                seen.append("saw a trace")
            except TraceError as e:
                seen.append(e.message.split(" must run")[0])
        t = threading.Thread(target=probe)
        t.start()
        t.join()
        ptx.ret()

    outer.ptx()
    assert seen == ["reg.scalar"]


def test_many_threads_share_one_kernel_and_its_specializations():
    """16 threads trace one kernel object at once: distinct specializations and the same
    ones, each result equal to tracing alone, and one trace per specialization."""
    n_threads, sizes = 16, tuple(range(30, 38))
    expected = {n: _make(7).ptx(n=n) for n in sizes}
    shared = _make(7)
    traced = []
    real = shared.fn

    def counting(*a, **kw):
        traced.append(kw.get("n"))
        return real(*a, **kw)

    shared.fn = counting
    got, errors = {}, []
    start = threading.Barrier(n_threads)

    def work(i):
        try:
            start.wait()
            order = sizes[i % len(sizes):] + sizes[:i % len(sizes)]
            got[i] = [(n, shared.ptx(n=n)) for n in order]
        except Exception as e:  # reported below with the thread's index
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    wrong = sorted((i, n) for i, pairs in got.items() for n, text in pairs
                   if text != expected[n])
    assert wrong == []
    assert sorted(traced) == sorted(sizes)       # each specialization traced exactly once
