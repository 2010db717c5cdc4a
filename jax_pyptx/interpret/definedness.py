"""Definedness of register bytes (part of the sanitizer): LLVM's ``undef`` halves.

Compilers pack an undefined value into half of a register (``mov.b32 %r, {%h_undef, %h}``)
and compute on the pair while only the defined half is ever used. That is not a bug; it is one
only when undefined bits reach memory, an address, a branch or a predicate. So a never-written
(or partly-written) source of a *pack* (``mov`` with a vector source) does not stop the kernel:
its bytes of the destination are recorded as undefined (``ctx.undef``: per register, a byte
mask per thread slot, bit i = byte i). From there:

* an arithmetic, logic, conversion, compare or move instruction propagates the undefined bytes
  of its sources to its destination, byte by byte (a lane-wise packed operation keeps halves
  apart; an unpack ``mov.b32 {%a, %b}, %r`` gives each destination the bytes it takes);
* any other instruction that reads undefined bytes (stores, atomics, copies, addresses of
  loads, ...), and a predicate computed from them, is reported, with the instruction that left
  them undefined.

Registers no pack touched keep the plain rule (reading a never-written register is an error).
Only registers that hold undefined bytes are tracked, so kernels without them pay one empty-dict
test per register access.
"""
from __future__ import annotations

import numpy as np

from ..errors import UninitializedReadError

#: ISA table families whose instructions carry undefined bytes to their destination
PROPAGATE = frozenset({"arith-float", "arith-half", "arith-int", "arith-sfu", "cvt", "data", "logic",
                       "compare"})
_SINK = {"memory": "memory or an address", "atomic": "memory or an address", "tma": "memory or an address",
         "async-copy": "memory or an address", "control": "a branch"}


def _name(key):
    return key.split("::")[-1].split("#")[0]


def _bytes(m: int) -> str:
    idx = [i for i in range(8) if m >> i & 1]
    if idx == list(range(idx[0], idx[-1] + 1)):
        return f"byte {idx[0]}" if len(idx) == 1 else f"bytes {idx[0]}-{idx[-1]}"
    return "bytes " + ", ".join(map(str, idx))


class DefinednessMixin:
    """Byte-level definedness for ``machine.Context`` (see the module doc)."""

    def _init_definedness(self):
        self.undef = {}           # register key -> uint8 (N,) undefined-byte mask
        self.undef_src = {}       # register key -> Decoded that left bytes undefined
        self.lenient = False      # a pack is reading: never-written sources become undefined bytes
        self.tshift = 0           # byte position of the current pack element / unpack destination
        self._taint = None        # uint8 (N,): undefined bytes read by the current instruction
        self._taint_d = None      # the Decoded that owns _taint (reset per instruction)
        self._taint_src = None

    # ------------------------------------------------------------------ reads
    def _taint_add(self, idx, m, src):
        if self._taint_d is not self.cur:
            self._taint = np.zeros(self.N, np.uint8)
            self._taint_d = self.cur
            self._taint_src = None
        sh = self.tshift
        self._taint[idx] |= (m << np.uint8(sh)) if sh else m
        if self._taint_src is None:
            self._taint_src = src

    def _lenient_read(self, key, g, ok):
        """A pack reads a register never written (ok None) or written only in some slots."""
        nb = max(self.prog.regs[key].bits // 8, 1)
        full = np.uint8((1 << nb) - 1)
        idx = g.idx if ok is None else g.idx[~ok]
        self._taint_add(idx, np.full(len(idx), full, np.uint8), self.cur)

    def _undef_read(self, key, g, nbytes=None):
        m = self.undef[key][g.idx]
        if nbytes is not None:
            m = m & np.uint8((1 << nbytes) - 1)
        if not m.any():
            return
        d = self.cur
        fam = _family(d)
        if fam in PROPAGATE:
            self._taint_add(g.idx, m, self.undef_src.get(key))
            return
        j = int(np.argmax(m != 0))
        src = self.undef_src.get(key)
        origin = f", left undefined by {_where(src)}" if src is not None else ""
        raise self.error(UninitializedReadError,
                         f"undefined bits of register {_name(key)} ({_bytes(int(m[j]))}{origin}) reach "
                         f"{_SINK.get(fam, d.ins.opcode)}", g, j)

    # ------------------------------------------------------------------ writes
    def _undef_write(self, key, g):
        info = self.prog.regs[key]
        t = None
        if self._taint_d is self.cur and self._taint is not None:
            t = self._taint[g.idx]
            if self.tshift:
                t = t >> np.uint8(self.tshift)
            nb = max(info.bits // 8, 1)
            t = t & np.uint8((1 << nb) - 1) if nb < 8 else t
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
            src = self._taint_src
            origin = f", left undefined by {_where(src)}" if src is not None else ""
            raise self.error(UninitializedReadError,
                             f"a predicate ({_name(key)}) is computed from undefined bits{origin}", g, j)
        u = self.undef.get(key)
        if u is None:
            u = self.undef[key] = np.zeros(self.N, np.uint8)
        u[g.idx] = t
        if self._taint_src is not None:
            self.undef_src[key] = self._taint_src


def _family(d):
    from ..errors import PtxError
    from ..isa import decode
    try:
        return decode(d.ins).form.family          # memoised on the instruction's shape
    except PtxError:          # an instruction the table does not know: treat it as a sink
        return ""


def _where(d):
    loc = getattr(d.ins, "loc", None)
    text = d.text.rstrip(";")
    return f"{loc}: {text}" if loc is not None else f"{text} ({d.where()})"
