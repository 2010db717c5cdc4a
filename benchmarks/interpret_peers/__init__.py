"""The peer comparison of ``benchmarks/interpret.py --peers`` (issue 24's table): ``spec`` (the
workloads, NumPy only), ``ours`` (jax_pyptx kernels), ``pallas_peer`` (Pallas
``interpret=True``), ``triton_peer`` (Triton's interpreter, run as a subprocess), ``table``
(measuring, printing, ``--json``)."""
