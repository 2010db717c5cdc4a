"""The documented spelling: ``from pyptx import kernel, reg, ptx``.

``pyptx`` and every ``pyptx.<sub>`` module *are* the ``jax_pyptx`` modules (same objects),
so ``pyptx.types.f32 is jax_pyptx.types.f32``.
"""
import importlib
import importlib.abc
import importlib.util
import sys

import jax_pyptx as _impl


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``pyptx.X`` to the already-importable ``jax_pyptx.X`` module object."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("pyptx."):
            return None
        real = "jax_pyptx." + fullname[len("pyptx."):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module("jax_pyptx." + spec.name[len("pyptx."):])
        spec.loader_state = module.__spec__  # the import system overwrites __spec__; put it back
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

sys.modules[__name__] = _impl
