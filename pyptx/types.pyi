# ``pyptx.types`` is ``jax_pyptx.types`` (pyptx/__init__.py); this stub says so to type checkers.
from jax_pyptx.types import *  # noqa: F403
