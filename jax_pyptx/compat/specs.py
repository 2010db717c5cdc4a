"""``pyptx.specs``: ``Tile``, ``Layout`` and ``Dim`` (the package's own, :mod:`jax_pyptx.specs`),
plus pyptx's shape helpers.

``resolve_shape``, ``extract_env`` and ``matches`` are pyptx's ``Tile`` methods: the ``pyptx``
package attaches them to ``Tile`` (:data:`TILE_METHODS`), so ``Tile("M", f32).extract_env(
(8,))`` works once ``pyptx`` is imported. ``unify_envs`` merges the bindings of several
arrays. Kernels never need them: ``Kernel.bind`` binds shapes to specs for every call.

Examples:
    >>> import pyptx
    >>> from pyptx.specs import Tile, unify_envs
    >>> from pyptx.types import f32
    >>> t = Tile("M", 4, f32)
    >>> t.extract_env((16, 4)), t.resolve_shape({"M": 2})
    ({'M': 16}, (2, 4))
    >>> unify_envs([t.extract_env((16, 4)), {"N": 3}])
    {'M': 16, 'N': 3}
"""
from __future__ import annotations

from ..errors import PtxValueError
from ..specs import Dim, Layout, TensorSpec, Tile, TmaDescriptorHandle  # noqa: F401
from ..types import PtxType, by_name, from_numpy, is_type_name

__all__ = ["Tile", "Layout", "unify_envs", "resolve_shape", "extract_env", "matches"]


def resolve_shape(tile: Tile, env: dict) -> tuple:
    """``tile.resolve_shape(env)``: the shape with every symbol looked up in ``env``
    (``KeyError`` for an unbound one).

    Examples:
        >>> import pyptx
        >>> from pyptx.specs import Tile
        >>> from pyptx.types import f32
        >>> Tile("M", "N", f32).resolve_shape({"M": 2, "N": 3})
        (2, 3)
    """
    return tile.resolve(env)


def extract_env(tile: Tile, array_shape) -> dict:
    """``tile.extract_env(shape)``: ``{symbol: size}`` bound by an array of shape
    ``array_shape`` (``ValueError`` on a rank or fixed-dimension mismatch, or one symbol bound
    to two sizes).

    Examples:
        >>> import pyptx
        >>> from pyptx.specs import Tile
        >>> from pyptx.types import f32
        >>> Tile("M", 4, f32).extract_env((16, 4))
        {'M': 16}
    """
    shape = tuple(array_shape)
    if len(shape) != len(tile.shape):
        raise PtxValueError(f"{tile}: expects rank {len(tile.shape)}, got shape {shape}")
    env: dict = {}
    for axis, (d, n) in enumerate(zip(tile.shape, shape)):
        if isinstance(d, str):
            if env.setdefault(d, int(n)) != int(n):
                raise PtxValueError(f"{tile}: {d} bound to {env[d]} and {n} in shape {shape}")
        elif d != n:
            raise PtxValueError(f"{tile}: dim {axis} must be {d}, got shape {shape}")
    return env


def matches(tile: Tile, shape, dtype_name) -> bool:
    """``tile.matches(shape, dtype)``: whether an array of ``shape`` and dtype ``dtype_name``
    (a PTX type name such as ``"f32"``, a PtxType, or a NumPy dtype) fits ``tile``.

    Examples:
        >>> import pyptx
        >>> from pyptx.specs import Tile
        >>> from pyptx.types import f32
        >>> t = Tile("M", 4, f32)
        >>> t.matches((16, 4), "f32"), t.matches((16, 5), "f32"), t.matches((16, 4), "f16")
        (True, False, False)
    """
    try:
        extract_env(tile, shape)
    except ValueError:
        return False
    if isinstance(dtype_name, PtxType):
        return dtype_name is tile.dtype
    if isinstance(dtype_name, str) and is_type_name(dtype_name):
        return by_name(dtype_name) is tile.dtype
    try:
        return from_numpy(dtype_name) is tile.dtype
    except (TypeError, ValueError):
        return False


def unify_envs(envs) -> dict:
    """Merge shape-variable bindings; a symbol bound to two sizes raises ``ValueError``.

    Examples:
        >>> from pyptx.specs import unify_envs
        >>> unify_envs([{"M": 4}, {"M": 4, "N": 2}])
        {'M': 4, 'N': 2}
    """
    out: dict = {}
    for env in envs:
        for k, v in env.items():
            if out.setdefault(k, v) != v:
                raise PtxValueError(f"shape variable {k} bound to {out[k]} and {v}")
    return out


# pyptx's Tile methods, attached to Tile by the ``pyptx`` package (pyptx/__init__.py)
TILE_METHODS = {"resolve_shape": resolve_shape, "extract_env": extract_env, "matches": matches}
