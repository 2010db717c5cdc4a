"""Kernels written against the documented pyptx surface (``shared/pyptx_api.md``), in the
style of its examples: each traces unchanged, passes ptxas without spills and matches NumPy on
the interpreter."""
