"""The documented spelling: ``from pyptx import kernel, reg, ptx``.

``pyptx`` is an alias of ``jax_pyptx``: ``pyptx.<name>`` (attribute or submodule) is the object
``jax_pyptx`` has under that name, except the pyptx-only names of
``jax_pyptx.compat.MODULES`` (``pyptx.spec``, ``pyptx.specs``, ``pyptx.codegen``,
``pyptx.cache``, ``pyptx.jax_support``, ``pyptx.torch_support``, ``pyptx.parser``,
``pyptx.emitter``, ``pyptx._trace``, ...), which resolve to their modules there; so
``pyptx.types.f32 is jax_pyptx.types.f32`` and ``pyptx.ptx is jax_pyptx.ptx``. The table and the
pyptx-only pieces live in ``jax_pyptx.compat`` (its docstring is the map); this file only wires
them in. It also attaches pyptx's ``Tile`` methods (``resolve_shape``, ``extract_env``,
``matches``: ``jax_pyptx.compat.specs``) to ``Tile``.

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
from jax_pyptx import Layout, Tile, intrinsic, kernel, ptx, reg, smem  # noqa: F401
from jax_pyptx.compat import ALL as __all__  # noqa: F401
from jax_pyptx.compat import MODULES as _MODULES
from jax_pyptx.compat import SHADOWED as _SHADOWED

__version__ = _impl.__version__


def _real_name(fullname: str) -> str:
    rest = fullname[len("pyptx."):]
    head, dot, tail = rest.partition(".")
    if head in _MODULES:
        return _MODULES[head] + dot + tail
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


def _attach_tile_methods():
    from jax_pyptx.compat.specs import TILE_METHODS

    for name, fn in TILE_METHODS.items():
        setattr(Tile, name, fn)


_attach_tile_methods()


def __getattr__(name):
    # pyptx's own modules load on first use; every other name is jax_pyptx's
    if name in _MODULES and name not in _SHADOWED:
        return importlib.import_module("pyptx." + name)
    if name.startswith("__"):
        raise AttributeError(f"module 'pyptx' has no attribute {name!r}")
    try:
        return getattr(_impl, name)
    except AttributeError:
        raise AttributeError(f"module 'pyptx' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(_impl.__all__) | set(_MODULES))
