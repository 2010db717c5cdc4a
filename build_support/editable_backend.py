"""PEP 517 backend: scikit-build-core, with an editable install that exposes only the packages.

scikit-build-core's editable wheel has a ``.pth`` that imports its finder (which knows the
packages, ``jax_pyptx`` and ``pyptx``, and where they live) and then lists each package's
parent directory for ``sys.path``. Here that parent is the repository root, so ``import tests``,
``import examples`` and ``import benchmarks`` would resolve from any directory of any process of
the environment. ``build_editable`` keeps the finder's ``import`` line and drops the directory
lines (the finder resolves the packages without them); every other hook is scikit-build-core's.
A ``.pth`` without an ``import`` line (a finder-less editable) is left as it is.
"""
from __future__ import annotations

import os

from pth_filter import strip_editable_paths
from scikit_build_core import build as _skb
from scikit_build_core.build import *  # noqa: F403  (the other PEP 517 hooks)

__all__ = list(_skb.__all__)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _skb.build_editable(wheel_directory, config_settings, metadata_directory)
    strip_editable_paths(os.path.join(wheel_directory, name))
    return name
