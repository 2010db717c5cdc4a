"""The project's own examples (``examples/``), traced at fixed shapes."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)

from examples.demo import saxpy  # noqa: E402
from examples.hopper.layer_norm import build_layer_norm  # noqa: E402
from examples.hopper.rms_norm import build_rms_norm, build_rms_norm_bwd  # noqa: E402
from examples.hopper.softmax import build_softmax  # noqa: E402
from examples.hopper.swiglu import build_swiglu  # noqa: E402

KERNELS = [
    ("demo_saxpy", saxpy, {"N": 1024}),
    ("layer_norm_4x64", build_layer_norm(4, 64), {"M": 8}),
    ("rms_norm_4x64", build_rms_norm(4, 64), {"M": 8}),
    ("rms_norm_bwd_4x64", build_rms_norm_bwd(4, 64), {"M": 8}),
    ("softmax_4x64", build_softmax(4, 64), {"M": 8}),
    ("swiglu", build_swiglu(), {"M": 16, "N": 256}),
]
