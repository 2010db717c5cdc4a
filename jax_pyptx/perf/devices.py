"""Peak figures of the GPUs the roofline estimates against.

Every number is NVIDIA's published figure for the named part (dense tensor-core rates: the
datasheets give rates "with sparsity", twice the dense rate, for the tensor formats; the
figures below are halved accordingly):

* **H100 SXM5** (NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 Tensor Core GPU
  Architecture whitepaper): 132 SMs; HBM3 3.35 TB/s; dense tensor TFLOP/s: FP16 / BF16
  989.4, TF32 494.7, FP8 1978.9, INT8 1978.9 TOPS, FP64 66.9; 228 KB shared memory per SM
  (227 KB per CTA); 64K 32-bit registers, 2048 threads, 32 CTAs per SM.
* **H200 SXM** (NVIDIA H200 Tensor Core GPU datasheet): the H100 SXM5's GH100 processor, with
  the same SMs, clocks and tensor-core rates (the datasheet's compute rows equal the H100
  SXM's, FP16 / BF16 1979 TFLOP/s with sparsity), and 141 GB of HBM3e at 4.8 TB/s. What
  one reaches is lower: a device copy moves about 4.3 TB/s and an 8192^3 bf16 product
  through cuBLAS runs at about 790 TFLOP/s (``benchmarks/kernels.py --gpu`` measures both).
* **B200** (NVIDIA HGX B200 / DGX B200 datasheets, per GPU: the 8-GPU figures divided by
  8): 148 SMs; HBM3e 8 TB/s; dense tensor TFLOP/s: FP16 / BF16 2250, TF32 1100, FP8 / FP6
  4500, INT8 4500 TOPS, FP4 9000, FP64 37; per-SM limits as Hopper's (228 KB shared memory,
  64K registers, 2048 threads, 32 CTAs; Blackwell Tuning Guide).
* **A100 SXM4 80GB** (NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU
  Architecture whitepaper): 108 SMs; HBM2e 2.039 TB/s; dense tensor TFLOP/s: FP16 / BF16
  312, TF32 156, INT8 624 TOPS, FP64 19.5; 164 KB shared memory per SM (163 KB per CTA);
  64K registers, 2048 threads, 32 CTAs per SM.

The tensor-core peaks are those of each generation's own MMA path: Hopper reaches its figure
with ``wgmma``, Blackwell with ``tcgen05.mma``; a kernel on ``mma.sync`` (the Ampere path)
runs on those GPUs below them.

Examples:
    >>> from jax_pyptx.perf.devices import DEVICES
    >>> sorted(DEVICES)
    ['A100', 'B200', 'H100', 'H200']
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Device", "DEVICES", "device"]


@dataclass(frozen=True)
class Device:
    """A GPU's peak rates and per-SM limits (``DEVICES``; module docstring for sources).

    ``tensor_tflops`` maps an MMA input type name (``"bf16"``, ``"f16"``, ``"tf32"``,
    ``"e4m3"``, ``"s8"``, ...) to dense tensor-core TFLOP/s.

    Examples:
        >>> from jax_pyptx.perf.devices import Device
        >>> d = Device("my GPU", sms=100, hbm_gbs=2000.0, tensor_tflops={"bf16": 500.0})
        >>> d.peak("bf16"), d.smem_per_sm
        (500.0, 233472)
    """

    name: str
    sms: int
    hbm_gbs: float                          # HBM bandwidth, GB/s (1e9 bytes)
    tensor_tflops: dict = field(default_factory=dict)
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    smem_per_sm: int = 228 * 1024
    smem_per_cta: int = 227 * 1024
    smem_reserved_per_cta: int = 1024       # the driver's per-CTA reservation (sm_80+)
    max_threads_per_sm: int = 2048
    max_ctas_per_sm: int = 32

    def peak(self, input_type: str) -> float:
        """Dense tensor TFLOP/s for MMA inputs of ``input_type``; KeyError naming the types
        this device lists when it has none.

        Examples:
            >>> from jax_pyptx.perf.devices import device
            >>> device("H100").peak("bf16"), device("B200").peak("e4m3")
            (989.4, 4500.0)
        """
        try:
            return self.tensor_tflops[input_type]
        except KeyError:
            raise KeyError(f"{self.name} lists no tensor-core rate for {input_type!r} inputs; "
                           f"it has {', '.join(sorted(self.tensor_tflops))}") from None


_FP8 = ("e4m3", "e5m2")
_INT8 = ("s8", "u8")


def _rates(f16, tf32, fp8=None, int8=None, fp4=None, fp64=None) -> dict:
    r = {"f16": f16, "bf16": f16, "tf32": tf32}
    for names, v in ((_FP8, fp8), (_INT8, int8), (("e2m1",), fp4), (("f64",), fp64)):
        if v is not None:
            r.update({n: v for n in names})
    if fp8 is not None:
        r.update({"e2m3": fp8, "e3m2": fp8})        # fp6: the fp8 rate on Blackwell
    return r


DEVICES = {
    "H100": Device("H100 SXM5", sms=132, hbm_gbs=3350.0,
                   tensor_tflops={k: v for k, v in _rates(989.4, 494.7, fp8=1978.9,
                                                          int8=1978.9, fp64=66.9).items()
                                  if k not in ("e2m3", "e3m2")}),
    "H200": Device("H200 SXM", sms=132, hbm_gbs=4800.0,
                   tensor_tflops={k: v for k, v in _rates(989.4, 494.7, fp8=1978.9,
                                                          int8=1978.9, fp64=66.9).items()
                                  if k not in ("e2m3", "e3m2")}),
    "B200": Device("B200", sms=148, hbm_gbs=8000.0,
                   tensor_tflops=_rates(2250.0, 1100.0, fp8=4500.0, int8=4500.0, fp4=9000.0,
                                        fp64=37.0)),
    "A100": Device("A100 SXM4 80GB", sms=108, hbm_gbs=2039.0,
                   tensor_tflops=_rates(312.0, 156.0, int8=624.0, fp64=19.5),
                   smem_per_sm=164 * 1024, smem_per_cta=163 * 1024),
}


def device(d) -> Device:
    """A ``Device`` from itself or a key of ``DEVICES`` ("H100", "H200", "B200", "A100").

    Examples:
        >>> from jax_pyptx.perf.devices import device
        >>> d = device("H100")
        >>> d.name, d.sms, d.hbm_gbs
        ('H100 SXM5', 132, 3350.0)
    """
    if isinstance(d, Device):
        return d
    try:
        return DEVICES[d]
    except (KeyError, TypeError):
        raise ValueError(f"unknown device {d!r}; known: {', '.join(DEVICES)} (or pass a "
                         f"jax_pyptx.perf.Device)") from None
