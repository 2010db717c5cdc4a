"""``ptx.mbarrier.array(base, byte_offset, count)``: mbarriers laid out by hand in shared
memory (8 bytes apart from ``base + byte_offset``), for kernels that manage their own shared
window (``smem.base()``)::

    base = smem.base()
    full = ptx.mbarrier.array(base, 64, 3)
    full.init_all(1)                       # mbarrier.init.shared::cta.b64 [%r0+64], 1; ...
    full[s].arrive_expect_tx(4096)
    full.at(stage).wait(phase)             # a register stage: (stage << 3) + 64 + base
"""
from __future__ import annotations

from ...errors import PtxIndexError, PtxTypeError, PtxValueError
from ...ir.nodes import Addr, Guard, Sym
from ...types import b64, pred as pred_t, u32
from .. import context
from ..context import user_loc
from ..values import Register, as_operand
from ._wrap import emit, new

__all__ = ["array", "MbarrierArray", "MbarrierSlot"]


def _wait_loop(address: Addr, phase, pred=None):
    tr = context.current("mbarrier wait")
    loc = user_loc(3)
    head = tr.new_label("mbar_wait")
    tr.place_label(head, loc)
    done = new(pred_t)
    emit("mbarrier.try_wait.parity.shared::cta.b64", (done, address, phase), pred)
    tr.labels_used.setdefault(head, loc)
    tr.emit("bra", (), (Sym(head),), Guard(done.name, True), loc)
    tr.chain = None


class _Slot:
    """What a barrier slot can do once its address is known (``address()``)."""

    def init(self, count, *, pred=None):
        """``mbarrier.init.shared::cta.b64 [addr], count;``."""
        emit("mbarrier.init.shared::cta.b64", (self.address(), count), pred)

    def arrive(self, *, pred=None):
        """``mbarrier.arrive.shared.b64 state, [addr];`` (returns the b64 state)."""
        state = new(b64)
        emit("mbarrier.arrive.shared.b64", (state, self.address()), pred)
        return state

    def arrive_expect_tx(self, tx_count, *, pred=None):
        """``mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], tx;``."""
        state = new(b64)
        emit("mbarrier.arrive.expect_tx.shared::cta.b64", (state, self.address(), tx_count),
             pred)
        return state

    def wait(self, phase, *, pred=None):
        """Spin on ``mbarrier.try_wait.parity.shared::cta.b64`` until phase ``phase`` completes."""
        _wait_loop(self.address(), phase, pred)

    def arrive_remote(self, cta_id, count=1, *, pred=None):
        """Arrive on this barrier in CTA ``cta_id`` of the cluster (``mapa`` + a
        ``.shared::cluster`` arrive)."""
        from .cluster import arrive_remote

        arrive_remote(self.addr_reg(), cta_id, count, pred=pred)


class MbarrierSlot(_Slot):
    """Barrier ``index`` of an :class:`MbarrierArray` (a constant slot)."""

    __slots__ = ("array", "index", "_reg")

    def __init__(self, array, index):
        self.array, self.index, self._reg = array, index, None

    @property
    def byte_offset(self) -> int:
        """Offset of this barrier from the array's base: ``byte_offset + 8 * index``."""
        return self.array.byte_offset + 8 * self.index

    def address(self) -> Addr:
        """The memory operand ``[base+offset]``."""
        base = self.array.base
        if isinstance(base, Register):
            return Addr(as_operand(base), self.byte_offset)
        return Addr(Sym(base.name), base.offset + self.byte_offset)

    def address_operand(self) -> Addr:
        """``[base+offset]``."""
        return self.address()

    def addr_reg(self):
        """A u32 register holding this barrier's address (cached)."""
        if self._reg is None:
            base, off = self.array.base, self.byte_offset
            if isinstance(base, Register):
                if off == 0:
                    self._reg = base
                else:
                    self._reg = new(u32)
                    emit("add.u32", (self._reg, base, off))
            else:
                self._reg = new(u32)
                emit("mov.u32", (self._reg, Sym(base.name, base.offset)))
                if off:
                    emit("add.s32", (self._reg, self._reg, off))
        return self._reg

    def __repr__(self):
        return f"MbarrierSlot({self.array!r}[{self.index}])"


class _RuntimeSlot(_Slot):
    """``arr.at(stage)``: the barrier a register picks."""

    __slots__ = ("_reg",)

    def __init__(self, reg):
        self._reg = reg

    def address(self) -> Addr:
        """``[reg]``: the register holding the picked barrier's address."""
        return Addr(as_operand(self._reg), 0)

    def addr_reg(self):
        """The u32 register holding the picked barrier's address."""
        return self._reg


class MbarrierArray:
    """``count`` mbarriers at ``base + byte_offset``, 8 bytes apart (see the module
    docstring)."""

    __slots__ = ("base", "byte_offset", "count")

    def __init__(self, base, byte_offset, count):
        self.base, self.byte_offset, self.count = base, byte_offset, count

    def __len__(self):
        return self.count

    def __getitem__(self, i) -> MbarrierSlot:
        if not isinstance(i, int) or isinstance(i, bool):
            raise PtxTypeError(f"mbarrier array index must be an int (use .at(reg) for a "
                               f"register), got {i!r}", loc=user_loc())
        if not 0 <= i < self.count:
            raise PtxIndexError(f"Mbarrier index {i} out of range for {self!r}",
                                loc=user_loc())
        return MbarrierSlot(self, i)

    def __iter__(self):
        return (MbarrierSlot(self, i) for i in range(self.count))

    def at(self, stage) -> _RuntimeSlot:
        """The barrier register ``stage`` picks: ``shl.b32 t, stage, 3;`` ``add.u32 t, t,
        byte_offset;`` ``add.u32 a, t, base;``."""
        if not isinstance(stage, Register) or stage.type.bits != 32:
            raise PtxTypeError(f"mbarrier array .at(): stage must be a 32-bit register, got "
                               f"{stage!r}", loc=user_loc())
        t = new(u32)
        emit("shl.b32", (t, stage, 3))
        if self.byte_offset:
            emit("add.u32", (t, t, self.byte_offset))
        a = new(u32)
        if isinstance(self.base, Register):
            emit("add.u32", (a, t, self.base))
        else:
            emit("mov.u32", (a, Sym(self.base.name, self.base.offset)))
            emit("add.u32", (a, a, t))
        return _RuntimeSlot(a)

    def init_all(self, count, *, pred=None):
        """``mbarrier.init`` every barrier with ``count``."""
        for slot in self:
            slot.init(count, pred=pred)

    def arrive_remote_all(self, cta_id, count=1, *, pred=None):
        """``arrive_remote`` on every barrier."""
        for slot in self:
            slot.arrive_remote(cta_id, count, pred=pred)

    def __repr__(self):
        base = self.base.name
        return f"mbarrier.array({base}+{self.byte_offset}, {self.count})"


def array(base, byte_offset: int, count: int) -> MbarrierArray:
    """``count`` barriers at ``base + byte_offset`` (``base``: a u32 register holding a
    shared address, or a shared buffer / symbol name)."""
    fn = "ptx.mbarrier.array"
    if not isinstance(byte_offset, int) or byte_offset < 0 or byte_offset % 8:
        raise PtxValueError(f"{fn}: byte_offset={byte_offset!r} must be a non-negative "
                            f"multiple of 8", loc=user_loc())
    if not isinstance(count, int) or count <= 0:
        raise PtxValueError(f"{fn}: count={count!r} must be a positive int", loc=user_loc())
    if isinstance(base, Register):
        if base.type.bits != 32:
            raise PtxTypeError(f"{fn}: base register {base.name} is {base.type.name}; expected "
                               f"a 32-bit shared address", loc=user_loc())
        as_operand(base)
        return MbarrierArray(base, byte_offset, count)
    if isinstance(base, str):
        from ..values import str_operand

        sym = str_operand(base)
    elif hasattr(base, "__ptx_operand__"):
        sym = base.__ptx_operand__()
    else:
        sym = None
    if type(sym) is not Sym:
        raise PtxTypeError(f"{fn}: base must be a u32 register or a shared symbol, got "
                           f"{base!r}", loc=user_loc())
    return MbarrierArray(sym, byte_offset, count)

