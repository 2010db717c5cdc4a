"""The documented spelling: ``from pyptx import kernel, reg, ptx``.

``pyptx`` and every ``pyptx.<sub>`` module *are* the ``jax_pyptx`` modules (same objects),
so ``pyptx.types.f32 is jax_pyptx.types.f32``. The documented module map (``pyptx.ptx``,
``pyptx.reg``, ``pyptx.smem``, ``pyptx.wgmma_layout``, ``pyptx.intrinsic``, ``pyptx.parser``,
``pyptx.emitter``, ...) resolves to where each lives here (``jax_pyptx.dsl.ptx``, ...).

Two package attributes are functions that share a submodule's name: ``pyptx.kernel`` (the
decorator; the module ``pyptx.kernel`` holds ``Kernel``, ``TensorSpec``, ...) and
``pyptx.intrinsic`` (the decorator). Importing those submodules must not replace the
functions, so they are registered under their ``pyptx.`` names up front: the import system
then finds them loaded and leaves the package attributes alone.
"""
import importlib
import importlib.abc
import importlib.util
import sys

import jax_pyptx as _impl

# pyptx.<name> -> the module that implements it, where it is not jax_pyptx.<name>
_ALIASES = {
    "ptx": "jax_pyptx.dsl.ptx",
    "reg": "jax_pyptx.dsl.reg",
    "smem": "jax_pyptx.dsl.smem",
    "wgmma_layout": "jax_pyptx.dsl.wgmma_layout",
    "intrinsic": "jax_pyptx.dsl.intrinsic",
    "parser": "jax_pyptx.text.parser",
    "emitter": "jax_pyptx.text.printer",
    "spec": "jax_pyptx.dsl.spec",
    "codegen": "jax_pyptx.transpile.pyptx_codegen",
    "_trace": "jax_pyptx.dsl.trace_scope",
    "cache": "jax_pyptx.toolchain.cubin_cache",
    "jax_support": "jax_pyptx.runtime.jax_support",
    "torch_support": "jax_pyptx.runtime.torch_support",
}
# package attributes that are functions named like a submodule
_SHADOWED = ("kernel", "intrinsic")


def _real_name(fullname: str) -> str:
    rest = fullname[len("pyptx."):]
    head, dot, tail = rest.partition(".")
    if head in _ALIASES:
        return _ALIASES[head] + dot + tail
    return "jax_pyptx." + rest


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``pyptx.X`` to the already-importable ``jax_pyptx`` module object."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("pyptx."):
            return None
        try:
            if importlib.util.find_spec(_real_name(fullname)) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(_real_name(spec.name))
        spec.loader_state = module.__spec__  # the import system overwrites __spec__; put it back
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state

    # ``python -m pyptx.codegen``: runpy runs the real module's code as __main__
    def get_code(self, fullname):
        real = _real_name(fullname)
        return importlib.util.find_spec(real).loader.get_code(real)

    def is_package(self, fullname):
        spec = importlib.util.find_spec(_real_name(fullname))
        return spec is not None and spec.submodule_search_locations is not None


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

for _name in _SHADOWED:
    sys.modules.setdefault("pyptx." + _name, importlib.import_module(_real_name("pyptx." + _name)))

sys.modules[__name__] = _impl
