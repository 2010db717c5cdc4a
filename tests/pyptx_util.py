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
