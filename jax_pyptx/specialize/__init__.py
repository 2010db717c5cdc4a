"""Specialization: what a trace produces and how parameters reach the kernel.

``trace`` runs a kernel body for one (template parameters, shape variables, parameter ABI)
and gives a ``Traced``; ``abi`` is the parameter ABI (plain pointer, scalar by pointer,
batched on the grid) and emits the prologue; ``dims`` resolves block / cluster / grid;
``binding`` is ``Kernel.bind`` (arrays against specs); ``options`` is a call's options
(``CallOptions``); ``host`` runs a traced specialization on the CPU interpreter on host
arrays. No JAX here.
"""
from .abi import PLAIN, ParamAbi  # noqa: F401
from .binding import Binding  # noqa: F401
from .dims import dim3, parse_version, resolve_grid  # noqa: F401
from .traced import ParamInfo, Traced  # noqa: F401
