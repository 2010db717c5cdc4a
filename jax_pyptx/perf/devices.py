"""Peak figures of the GPUs the roofline estimates against.

Every number is NVIDIA's published figure for the named part. Dense tensor-core rates: the
datasheets give rates "with sparsity", twice the dense rate, for the tensor formats; the
figures below are halved accordingly. CUDA-core rates (``core_tflops``): FP32, FP16 / BF16
(non-tensor), FP64 (non-tensor) FLOP/s and INT32 operations per second (a multiply-add
counting two) as published; where a sheet gives no FP16 or INT32 figure the GPU's SM does
FP16 at twice and INT32 at half its FP32 rate, as every Hopper part's published figures show
(assumed for Blackwell, whose sheets list neither). The special function units do 16
operations per clock per SM (CUDA C++ Programming Guide, arithmetic instruction throughput,
compute capability 9.0 and 10.0), the FP32 pipe 256 FLOPs per clock per SM, so the SFU rate
is FP32 / 16.

Hopper (sm_90a):

* **H100 SXM5** (NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 Tensor Core GPU
  Architecture whitepaper): 132 SMs; HBM3 3.35 TB/s; dense tensor TFLOP/s: FP16 / BF16
  989.4, TF32 494.7, FP8 1978.9, INT8 1978.9 TOPS, FP64 66.9; CUDA cores: FP32 66.9, FP16
  133.8, FP64 33.5, INT32 33.5 TOPS; 228 KB shared memory per SM (227 KB per CTA); 64K
  32-bit registers, 2048 threads, 32 CTAs per SM.
* **H100 PCIe** (the same datasheet and whitepaper): 114 SMs; HBM2e 2.0 TB/s; dense tensor
  FP16 / BF16 756.5, TF32 378, FP8 / INT8 1513, FP64 51.2; FP32 51.2, FP16 102.4, FP64
  25.6, INT32 25.6.
* **H100 NVL** (the same datasheet): 132 SMs; HBM3 3.9 TB/s; dense tensor FP16 / BF16
  835.5, TF32 417.5, FP8 / INT8 1670.5, FP64 60; FP32 60, FP64 30.
* **H200 SXM** (NVIDIA H200 Tensor Core GPU datasheet): the H100 SXM5's GH100 processor, with
  the same SMs, clocks and tensor-core rates (the datasheet's compute rows equal the H100
  SXM's, FP16 / BF16 1979 TFLOP/s with sparsity), and 141 GB of HBM3e at 4.8 TB/s. What
  one reaches is lower: a device copy moves about 4.3 TB/s and an 8192^3 bf16 product
  through cuBLAS runs at about 790 TFLOP/s (``benchmarks/kernels.py --gpu`` measures both).
* **H200 NVL** (the same datasheet): 132 SMs; HBM3e 4.8 TB/s; the H100 NVL's rates.
* **GH200** (NVIDIA GH200 Grace Hopper Superchip datasheet, the 144 GB HBM3e GPU): the
  H100 SXM5's rates, HBM3e 4.9 TB/s.

Blackwell (sm_100a):

* **B200** (NVIDIA HGX B200 / DGX B200 datasheets, per GPU: the 8-GPU figures divided by
  8): 148 SMs; HBM3e 8 TB/s; dense tensor TFLOP/s: FP16 / BF16 2250, TF32 1100, FP8 / FP6
  4500, INT8 4500 TOPS, FP4 9000, FP64 37; FP32 75, FP64 37; per-SM limits as Hopper's (228
  KB shared memory, 64K registers, 2048 threads, 32 CTAs; Blackwell Tuning Guide).
* **GB200** (NVIDIA GB200 NVL72 datasheet, per Blackwell GPU): 148 SMs; HBM3e 8 TB/s; dense
  tensor FP16 / BF16 2500, TF32 1250, FP8 / FP6 5000, INT8 5000 TOPS, FP4 10000, FP64 40;
  FP32 80, FP64 40.

Ampere (sm_80):

* **A100 SXM4 80GB** (NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU
  Architecture whitepaper): 108 SMs; HBM2e 2.039 TB/s; dense tensor TFLOP/s: FP16 / BF16
  312, TF32 156, INT8 624 TOPS, FP64 19.5; FP32 19.5, FP16 78, FP64 9.7, INT32 19.5; 164 KB
  shared memory per SM (163 KB per CTA); 64K registers, 2048 threads, 32 CTAs per SM.

Left out for want of one public set of figures: Blackwell Ultra (B300 / GB300, whose
published dense FP4 and FP32 rates disagree between NVIDIA's sheets), B100, and the sm_120
workstation and GeForce parts.

The tensor-core peaks are those of each generation's own MMA path: Hopper reaches its figure
with ``wgmma``, Blackwell with ``tcgen05.mma``; a kernel on ``mma.sync`` (the Ampere path)
runs on those GPUs below them.

Examples:
    >>> from jax_pyptx.perf.devices import DEVICES
    >>> sorted(DEVICES)
    ['A100', 'B200', 'GB200', 'GH200', 'H100', 'H100-NVL', 'H100-PCIe', 'H200', 'H200-NVL']
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Device", "DEVICES", "device"]


@dataclass(frozen=True)
class Device:
    """A GPU's peak rates and per-SM limits (``DEVICES``; module docstring for sources).

    ``tensor_tflops`` maps an MMA input type name (``"bf16"``, ``"f16"``, ``"tf32"``,
    ``"e4m3"``, ``"s8"``, ...) to dense tensor-core TFLOP/s; ``core_tflops`` an operation
    class of ``perf.ops`` (``"fp32"``, ``"fp16"``, ``"fp64"``, ``"int"``, ``"sfu"``) to
    CUDA-core (SFU) TFLOP/s (tera-operations for ``int`` and ``sfu``).

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
    core_tflops: dict = field(default_factory=dict)   # "fp32", "fp16", "fp64", "int", "sfu"
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

    def core_peak(self, cls: str) -> float:
        """CUDA-core (or SFU) TFLOP/s of operation class ``cls`` (``perf.ops``); KeyError
        naming the classes this device lists when it has none.

        Examples:
            >>> from jax_pyptx.perf.devices import device
            >>> device("H100").core_peak("fp32"), device("H100").core_peak("sfu")
            (66.9, 4.18125)
        """
        try:
            return self.core_tflops[cls]
        except KeyError:
            raise KeyError(f"{self.name} lists no CUDA-core rate for {cls!r}; it has "
                           f"{', '.join(sorted(self.core_tflops)) or 'none'}") from None


def _core(fp32, fp64, fp16=None, int32=None) -> dict:
    """CUDA-core rates (module docstring: FP16 twice, INT32 half and SFU a sixteenth of
    FP32 where no figure is published)."""
    return {"fp32": fp32, "fp16": fp16 if fp16 is not None else 2 * fp32, "fp64": fp64,
            "int": int32 if int32 is not None else fp32 / 2, "sfu": fp32 / 16}


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


def _hopper(f16, tf32, fp8, fp64) -> dict:
    return {k: v for k, v in _rates(f16, tf32, fp8=fp8, int8=fp8, fp64=fp64).items()
            if k not in ("e2m3", "e3m2")}


_H100_TC = _hopper(989.4, 494.7, 1978.9, 66.9)
_H100_CORE = _core(66.9, 33.5, 133.8, 33.5)
_NVL_TC = _hopper(835.5, 417.5, 1670.5, 60.0)

DEVICES = {
    "H100": Device("H100 SXM5", sms=132, hbm_gbs=3350.0, tensor_tflops=_H100_TC,
                   core_tflops=_H100_CORE),
    "H100-PCIe": Device("H100 PCIe", sms=114, hbm_gbs=2000.0,
                        tensor_tflops=_hopper(756.5, 378.0, 1513.0, 51.2),
                        core_tflops=_core(51.2, 25.6, 102.4, 25.6)),
    "H100-NVL": Device("H100 NVL", sms=132, hbm_gbs=3900.0, tensor_tflops=_NVL_TC,
                       core_tflops=_core(60.0, 30.0)),
    "H200": Device("H200 SXM", sms=132, hbm_gbs=4800.0, tensor_tflops=_H100_TC,
                   core_tflops=_H100_CORE),
    "H200-NVL": Device("H200 NVL", sms=132, hbm_gbs=4800.0, tensor_tflops=_NVL_TC,
                       core_tflops=_core(60.0, 30.0)),
    "GH200": Device("GH200 (144 GB HBM3e)", sms=132, hbm_gbs=4900.0, tensor_tflops=_H100_TC,
                    core_tflops=_H100_CORE),
    "B200": Device("B200", sms=148, hbm_gbs=8000.0,
                   tensor_tflops=_rates(2250.0, 1100.0, fp8=4500.0, int8=4500.0, fp4=9000.0,
                                        fp64=37.0),
                   core_tflops=_core(75.0, 37.0)),
    "GB200": Device("GB200 (per GPU)", sms=148, hbm_gbs=8000.0,
                    tensor_tflops=_rates(2500.0, 1250.0, fp8=5000.0, int8=5000.0,
                                         fp4=10000.0, fp64=40.0),
                    core_tflops=_core(80.0, 40.0)),
    "A100": Device("A100 SXM4 80GB", sms=108, hbm_gbs=2039.0,
                   tensor_tflops=_rates(312.0, 156.0, int8=624.0, fp64=19.5),
                   core_tflops=_core(19.5, 9.7, 78.0, 19.5),
                   smem_per_sm=164 * 1024, smem_per_cta=163 * 1024),
}


def device(d) -> Device:
    """A ``Device`` from itself or a key of ``DEVICES`` ("H100", "H200", "B200", "A100",
    ...).

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
