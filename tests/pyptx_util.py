"""Helpers of the pyptx-surface tests: a kernel's body and declarations as normalized lines."""


def body(k, **kw):
    """Instruction, label, scope and directive lines of a kernel body (no declarations), each
    with runs of whitespace collapsed to one space."""
    text = k.ptx(**kw)
    inner = text[text.index("{\n") + 2:text.rindex("}")]
    return [" ".join(line.split()) for line in inner.splitlines()
            if line.strip() and not line.strip().startswith((".reg", ".shared", ".local"))]


def decls(k, **kw):
    """The declaration lines (``.reg``, ``.shared``, ``.local``) of a kernel, normalized."""
    text = k.ptx(**kw)
    inner = text[text.index("{\n") + 2:text.rindex("}")]
    return [" ".join(line.split()) for line in inner.splitlines()
            if line.strip().startswith((".reg", ".shared", ".local"))]


def header(k, **kw):
    """The module text before the kernel body's ``{`` (version, target, params, directives)."""
    text = k.ptx(**kw)
    return text[:text.index("{\n")]


def assert_gemm_close(c, a, b, *, transpose_b=False):
    """``c`` is ``a @ b`` (``a @ b.T`` with ``transpose_b``) of bf16 (or other narrow float)
    inputs accumulated in f32: each element within the f32 accumulation bound
    ``K * 2**-23 * (|a| @ |b|)`` of the exact (float64) product. Products of two bf16 are
    exact in f32, so only the K additions round (the tensor cores' f32 accumulation, which
    may truncate rather than round, stays inside the same bound)."""
    import numpy as np

    a64 = np.asarray(a).astype(np.float64)
    b64 = np.asarray(b).astype(np.float64)
    if transpose_b:
        b64 = b64.T
    ref = a64 @ b64
    bound = a64.shape[1] * 2.0 ** -23 * (np.abs(a64) @ np.abs(b64)) + 1e-30
    c = np.asarray(c, dtype=np.float64)
    assert c.shape == ref.shape, (c.shape, ref.shape)
    ratio = np.abs(c - ref) / bound
    worst = np.unravel_index(np.argmax(ratio), ratio.shape)
    assert ratio.max() <= 1.0, (f"c{list(worst)} = {c[worst]!r}, exact {ref[worst]!r}: off by "
                                f"{ratio[worst]:.3g}x the f32 accumulation bound")
