"""The Hopper / Blackwell corpus: real compiler PTX the interpreter must run.

* ``triton/``: Triton 3.9 sm_90a kernels written for this project (``kernels.py``) and their
  PTX, with each compiled kernel's launch metadata (``<name>.json``);
* ``cuda/``: CUDA sources with inline wgmma / TMA / mbarrier / cluster / tcgen05 asm and the
  PTX nvcc 13.0 makes of them (``<stem>.<tag>.ptx``);
* ``cases.py``: how to launch every entry (grid, block, cluster, dynamic shared memory, each
  param, host tensor maps as ``cuTensorMapEncodeTiled`` arguments) and its NumPy reference;
* ``regenerate.py``: rebuilds the PTX and metadata (needs Triton and nvcc; the tests do not).

``tests/test_corpus_hopper.py`` checks the files without running them.
"""
