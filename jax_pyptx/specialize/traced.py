"""What a trace produces: the module and everything a launch needs."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from ..ir.nodes import Module
from ..text.printer import emit
from ..types import PtxType

__all__ = ["ParamInfo", "Traced"]


@dataclass(frozen=True)
class ParamInfo:
    """One ``.param`` of the entry, in order: kind is tensor / scalar / scalar_ptr / tma /
    raw."""

    name: str
    kind: str
    type: PtxType
    index: int = -1              # tensor: position among tensors (inputs then outputs)
    array: int | None = None     # byte-array params


@dataclass
class Traced:
    """One traced specialization: the module and everything a launch needs."""

    name: str
    arch: str
    module: Module
    grid: tuple                  # the launch grid (a batched ABI's batch included, on z)
    block: tuple
    cluster: tuple
    dynamic_smem: int
    static_smem: int
    params: tuple                # ParamInfo per .param, in order
    inputs: tuple                # TensorSpec of the tensor inputs
    outputs: tuple               # TensorSpec of the outputs
    scalars: tuple               # ParamInfo of runtime scalars, in call order
    env: dict
    template: dict
    tma: tuple = ()              # TmaDescriptorHandle per descriptor slot
    instruction_count: int = 0
    # what the kernel reads, for the batch-on-grid decision: special registers (e.g.
    # "%ctaid.z"), tensor params read other than through ``X.ptr()`` / ``X.tma_desc()``,
    # runtime scalars read other than as the kernel argument
    # (computed on first use from ``reads``: a function returning the three)
    abi: object = None           # the ParamAbi this trace was made for
    reads: object = field(default=None, repr=False, compare=False)

    @cached_property
    def _reads(self) -> tuple:
        if self.reads is None:
            return frozenset(), (), ()
        return self.reads()

    @property
    def specials(self) -> frozenset:
        return self._reads[0]

    @property
    def raw_tensor_params(self) -> tuple:
        return self._reads[1]

    @property
    def raw_scalar_params(self) -> tuple:
        return self._reads[2]

    @property
    def batch(self):
        """None, or ``(sizes, masks)`` of a trace batched on the grid."""
        a = self.abi
        return None if a is None or not a.batch else (a.batch, a.masks)

    @cached_property
    def ptx(self) -> str:
        return emit(self.module)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.ptx.encode()).hexdigest()
