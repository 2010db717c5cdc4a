"""The tracing DSL: ``reg``, ``smem`` and ``ptx`` namespaces and the trace context."""
