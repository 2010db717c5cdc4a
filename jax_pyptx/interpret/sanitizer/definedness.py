"""Definedness of register bits (part of the sanitizer), as Valgrind's memcheck keeps it.

Reading a register no instruction wrote is not a bug by itself: LLVM's ``undef`` values
(``mov.b32 %r, {%h_undef, %h}``, ``cvt.rn.satfinite.e4m3x2.f32 %rs, %r_undef, %r``) are computed
on while only the defined part is ever used. It is one only when undefined bits reach memory, an
address, a branch, a predicate or a collective. So a never-written (or partly-written) source of
an instruction that computes (an arithmetic, logic, conversion, compare or move instruction, and
a *pack*) does not stop the kernel: the bits it gives its destination are recorded as undefined
(``ctx.undef``: per register, a bit mask per thread slot, bit i = bit i of the register). From
there:

* such an instruction propagates the undefined bits of its sources to its destination, bit by
  bit (a lane-wise packed operation keeps halves apart; an unpack ``mov.b32 {%a, %b}, %r``
  gives each destination the bits it takes; a packed conversion ``cvt....x2`` makes the
  element of its destination that an undefined source converts to undefined, and only that);
* any other instruction that reads undefined bits (stores of the bytes that hold them, atomics,
  copies, addresses of loads, collectives, tensor-core operands, ...), and a predicate computed
  from them, is reported, naming the register the bits came from and the instruction that read
  it uninitialized (or left them undefined). A store of only the defined bytes is clean.

Only registers that hold undefined bits are tracked, so kernels without them pay one empty-dict
test per register access.
"""
from __future__ import annotations

import numpy as np

from ...errors import UninitializedReadError

#: ISA table families whose instructions carry undefined bytes to their destination
PROPAGATE = frozenset({"arith-float", "arith-half", "arith-int", "arith-sfu", "cvt", "data", "logic",
                       "compare"})
_SINK = {"memory": "memory or an address", "atomic": "memory or an address", "tma": "memory or an address",
         "async-copy": "memory or an address", "control": "a branch"}


def _name(key):
    return key.split("::")[-1].split("#")[0]


def _bits(m: int) -> str:
    idx = [i for i in range(64) if m >> i & 1]
    runs, start = [], idx[0]
    for a, b in zip(idx, idx[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ("bit " if len(idx) == 1 else "bits ") + ", ".join(runs)


def _mask(bits: int):
    return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


class DefinednessMixin:
    """Byte-level definedness for ``scheduler.context.Context`` (see the module doc)."""

    def _init_definedness(self):
        self.undef = {}           # register key -> uint64 (N,) undefined-bit mask
        self.undef_src = {}       # register key -> (Decoded, register read uninitialized or None)
        self.lenient = False      # a pack is reading: never-written sources become undefined bits
        self.tshift = 0           # bit position of the current pack element / unpack destination
        self.telem = 0            # > 0: a source's undefined bits make this many bits undefined
        self._taint = None        # uint64 (N,): undefined bits read by the current instruction
        self._taint_d = None      # the Decoded that owns _taint (reset per instruction)
        self._taint_src = None

    def computes_here(self) -> bool:
        """The instruction being executed computes on its sources (its family propagates
        undefined bits): a never-written source leaves undefined bits instead of an error."""
        return self.lenient or _family(self.cur) in PROPAGATE

    # ------------------------------------------------------------------ reads
    def _taint_add(self, idx, m, src):
        if self._taint_d is not self.cur:
            self._taint = np.zeros(self.N, np.uint64)
            self._taint_d = self.cur
            self._taint_src = None
        if self.telem:
            m = np.where(m != 0, _mask(self.telem), np.uint64(0))
        sh = self.tshift
        self._taint[idx] |= (m << np.uint64(sh)) if sh else m
        if self._taint_src is None:
            self._taint_src = src

    def _lenient_read(self, key, g, ok):
        """An instruction that computes reads a register never written (ok None) or written only
        in some slots: its bits are undefined."""
        full = _mask(max(self.prog.regs[key].bits, 1))
        idx = g.idx if ok is None else g.idx[~ok]
        self._taint_add(idx, np.full(len(idx), full, np.uint64), (self.cur, _name(key)))

    def _undef_read(self, key, g, nbytes=None):
        m = self.undef[key][g.idx]
        if nbytes is not None:
            m = m & _mask(8 * nbytes)
        if not m.any():
            return
        d = self.cur
        fam = _family(d)
        if fam in PROPAGATE:
            self._taint_add(g.idx, m, self.undef_src.get(key))
            return
        j = int(np.argmax(m != 0))
        raise self.error(UninitializedReadError,
                         f"undefined bits of register {_name(key)} ({_bits(int(m[j]))}"
                         f"{_origin(self.undef_src.get(key))}) reach {_SINK.get(fam, d.ins.opcode)}", g, j)

    # ------------------------------------------------------------------ writes
    def _undef_write(self, key, g):
        info = self.prog.regs[key]
        t = None
        if self._taint_d is self.cur and self._taint is not None:
            t = self._taint[g.idx]
            if self.tshift:
                t = t >> np.uint64(self.tshift)
            t = t & _mask(max(info.bits, 1))
            if not t.any():
                t = None
        if t is None:
            u = self.undef.get(key)
            if u is not None:
                u[g.idx] = 0
                if not u.any():
                    del self.undef[key]
                    self.undef_src.pop(key, None)
            return
        if info.bits == 1:
            j = int(np.argmax(t != 0))
            raise self.error(UninitializedReadError,
                             f"a predicate ({_name(key)}) is computed from undefined bits{_origin(self._taint_src)}",
                             g, j)
        u = self.undef.get(key)
        if u is None:
            u = self.undef[key] = np.zeros(self.N, np.uint64)
        u[g.idx] = t
        if self._taint_src is not None:
            self.undef_src[key] = self._taint_src


def _family(d):
    from ...errors import PtxError
    from ...isa import decode
    try:
        return decode(d.ins).form.family          # memoised on the instruction's shape
    except PtxError:          # an instruction the table does not know: treat it as a sink
        return ""


def _where(d):
    loc = getattr(d.ins, "loc", None)
    text = d.text.rstrip(";")
    return f"{loc}: {text}" if loc is not None else f"{text} ({d.where()})"


def _origin(src) -> str:
    """Where undefined bits came from: ``(Decoded, register read uninitialized or None)``."""
    if src is None:
        return ""
    d, reg = src
    if reg is not None:
        return f", from uninitialized register {reg} read by {_where(d)}"
    return f", left undefined by {_where(d)}"
