"""Compatibility with pyptx 0.1.1: what exists only for pyptx's documented spelling.

The ``pyptx`` package (``pyptx/__init__.py``) is an alias: ``pyptx.<name>`` is the module that
:data:`MODULES` names, else ``jax_pyptx.<name>``; its attributes are ``jax_pyptx``'s. This
package holds the pieces that serve that spelling alone; the core (every other module of
``jax_pyptx``) never imports it (``tests/test_layers.py``, ``pyproject.toml``), and it may
import any of the core.

The map (pyptx name -> module here; ``shared/pyptx_api.md`` is the surface they keep):

=====================  =============================  =============================================
``pyptx.``             module                         what
=====================  =============================  =============================================
``jax_support``        :mod:`.jax_support`            handles of PTX text (``compile_ptx_to_cubin``),
                                                      launch configuration, scalars, stand-alone
                                                      tensor maps, ``call_kernel_via_ffi``
(its records)          :mod:`.cubin_registry`         ``CubinRecord`` / ``CubinRegistry``, tensor
                                                      maps encoded by the launcher's driver table
(its launches)         :mod:`.record_kernel`          a record's launch as a kernel of the runtime:
                                                      ``call_kernel_via_ffi`` binds the
                                                      ``pyptx_call`` primitive with it
``torch_support``      :mod:`.torch_support`          ``call_kernel_via_torch(_compile)`` and the
                                                      names pyptx exports there
(its launches)         :mod:`.torch_handles`          handles on tensors, one ``torch.library`` op
                                                      per launch description
``cache``              :mod:`.cache`                  ``CubinCache``, ``CacheKey``, ``CacheEntry``
``codegen``            :mod:`.codegen`                ``ptx_to_python`` and its command line
``spec``               :mod:`.spec`                   ``dsl.validation`` under pyptx's names, plus
                                                      ``get_specs`` and ``register_overload``
``specs``              :mod:`.specs`                  ``Tile``, ``Layout``, ``Dim``, ``unify_envs``;
                                                      pyptx's ``Tile`` methods (:data:`TILE_METHODS`
                                                      there), attached by the alias
=====================  =============================  =============================================

The rest of :data:`MODULES` maps pyptx names to core modules that serve both spellings:
``ptx``, ``reg``, ``smem``, ``intrinsic``, ``wgmma_layout`` (``dsl/``; ``smem.wgmma_tile``
uses the layout picker), ``_trace`` (``dsl/trace_scope.py``, the bare trace every DSL
docstring uses), ``parser`` and ``emitter`` (``text/``). The keyword forms of the wgmma,
tcgen05 and matrix wrappers (``dsl/ptx/*_kw.py``) stay in the DSL: ``ptx.wgmma.mma_async``
and its siblings take both spellings under one name, and ``pyptx.ptx`` *is* the DSL's ``ptx``.

Importing this package imports nothing else.
"""

__all__ = ["MODULES", "SHADOWED", "ALL"]

# pyptx.<name> -> the module that implements it (any other pyptx.<name> is jax_pyptx.<name>)
MODULES = {
    "kernel": "jax_pyptx.kernel_def",
    "ptx": "jax_pyptx.dsl.ptx",
    "reg": "jax_pyptx.dsl.reg",
    "smem": "jax_pyptx.dsl.smem",
    "intrinsic": "jax_pyptx.dsl.intrinsic",
    "wgmma_layout": "jax_pyptx.dsl.wgmma_layout",
    "_trace": "jax_pyptx.dsl.trace_scope",
    "parser": "jax_pyptx.text.parser",
    "emitter": "jax_pyptx.text.printer",
    "specs": "jax_pyptx.compat.specs",
    "spec": "jax_pyptx.compat.spec",
    "codegen": "jax_pyptx.compat.codegen",
    "cache": "jax_pyptx.compat.cache",
    "jax_support": "jax_pyptx.compat.jax_support",
    "torch_support": "jax_pyptx.compat.torch_support",
}

# package attributes that are functions named like a submodule (``pyptx.kernel`` is the
# decorator; ``from pyptx.kernel import Kernel`` still reads the module)
SHADOWED = ("kernel", "intrinsic")

# pyptx's ``__all__`` (``from pyptx import *``)
ALL = ["kernel", "reg", "smem", "ptx", "intrinsic", "Tile", "Layout"]
