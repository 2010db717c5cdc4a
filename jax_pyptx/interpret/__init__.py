"""CPU interpreter for PTX with a sanitizer.

``launch(ptx_or_module, entry, args, grid=, block=, cluster=, smem=, sanitize=True)`` runs any
PTX entry the parser reads on NumPy arrays: arrays stand for pointer params and are written in
place, scalars for scalar params. See ``machine`` for the execution model.
"""
from .launch import launch  # noqa: F401

__all__ = ["launch"]
