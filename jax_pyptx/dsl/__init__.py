"""The tracing DSL: ``reg``, ``smem`` and ``ptx`` namespaces and the trace context."""

from . import operators  # noqa: F401 - installs Register's operators (see dsl/operators.py)
