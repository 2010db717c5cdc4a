"""Operand access: immediates, registers with typed views, special registers, vectors.

``reader(prog, op, ptype)`` returns ``get(ctx, g)`` giving the operand's value for the active
threads ``g`` as an array of ``ptype``'s NumPy dtype (or a NumPy scalar for immediates);
``writer(prog, op, ptype)`` returns ``put(ctx, g, value)``. Registers are stored as unsigned
bit patterns of their declared width and viewed as the instruction's type; a register wider
than the instruction type is truncated on read and zero/sign-extended on write (the relaxed
rules of ld, st, cvt and mov).
"""
from __future__ import annotations

import struct

import numpy as np

from ...errors import InterpreterError
from ...ir.nodes import Imm, Reg, Sink, Sym, Vec
from ...types import PtxType

UINT = {1: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def per_thread(x, n: int):
    """``x`` (an operand's value: one, or one per thread) as ``n`` values, one per thread:
    ``x`` itself where it already is an (n,) array, else a read-only broadcast view: of one
    value, made by the ``ndarray`` constructor with stride 0 (an eighth of ``np.broadcast_to``'s
    cost), else by ``np.broadcast_to``. Callers only read the result."""
    if type(x) is np.ndarray and x.shape == (n,):
        return x
    a = np.asarray(x)
    if a.ndim:
        return np.broadcast_to(a, (n,))
    v = np.ndarray((n,), a.dtype, a, 0, (0,))
    v.flags.writeable = False
    return v


def np_dtype(t: PtxType):
    """NumPy dtype used to compute with values of PTX type ``t`` (packed -> unsigned bits)."""
    if t.kind == "pred":
        return np.dtype(np.bool_)
    if t.kind == "packed" or t.np_dtype is None or t.bits < 8:
        return np.dtype(UINT.get(t.bits, np.uint8))
    if t.name == "tf32":
        return np.dtype(np.uint32)
    return t.np_dtype


def storage_dtype(bits: int):
    if bits == 128:
        return np.dtype((np.void, 16))
    return np.dtype(np.bool_) if bits == 1 else np.dtype(UINT[bits])


# ----------------------------------------------------------------------------- immediates
def parse_int(text: str) -> int:
    t = text.strip()
    neg = t.startswith("-")
    if neg or t.startswith("+"):
        t = t[1:]
    if t.endswith(("U", "u")):
        t = t[:-1]
    tl = t.lower()
    if tl.startswith("0x"):
        v = int(tl[2:], 16)
    elif tl.startswith("0b"):
        v = int(tl[2:], 2)
    elif len(tl) > 1 and tl.startswith("0") and tl.isdigit():
        v = int(tl, 8)
    else:
        v = int(tl, 10)
    return -v if neg else v


def _float_value(text: str):
    """(value as Python float, exact bits or None, bit width of the spelling)."""
    t = text.strip()
    neg = t.startswith("-")
    body = t[1:] if neg or t.startswith("+") else t
    bl = body.lower()
    if bl.startswith("0f") and len(bl) == 10:
        bits = int(bl[2:], 16)
        v = struct.unpack("<f", struct.pack("<I", bits))[0]
        return (-v if neg else v), (bits ^ (0x80000000 if neg else 0)), 32
    if bl.startswith("0d") and len(bl) == 18:
        bits = int(bl[2:], 16)
        v = struct.unpack("<d", struct.pack("<Q", bits))[0]
        return (-v if neg else v), (bits ^ ((1 << 63) if neg else 0)), 64
    return float(t), None, 0


def imm_value(text: str, t: PtxType):
    """A NumPy scalar of ``t``'s compute dtype for immediate ``text``."""
    dt = np_dtype(t)
    lo = text.strip().lower().lstrip("+-")
    is_hexfloat = (lo.startswith("0f") and len(lo) == 10) or (lo.startswith("0d") and len(lo) == 18)
    if t.kind == "pred":
        return np.bool_(parse_int(text) != 0)
    if t.kind == "float" and t.np_dtype is not None and t.name != "tf32":
        if is_hexfloat or any(c in lo for c in ".e") and not lo.startswith("0x"):
            v, bits, width = _float_value(text)
            if bits is not None and width == t.bits:
                return np.array(bits, dtype=UINT[width]).view(dt)[()]
            from .fp import FORMATS, encode, round_to
            if t.name in ("f32", "f64", "f16"):
                return dt.type(v)
            fmt = FORMATS[t.name]
            return encode(round_to(np.array([v]), fmt), fmt).view(dt)[0]
        # integer spelling for a float type: hex bits (mov.b16 style) or a plain number
        iv = parse_int(text)
        if lo.startswith("0x"):
            return np.array(iv & ((1 << t.bits) - 1), dtype=UINT[t.bits]).view(dt)[()]
        return dt.type(iv)
    # integers, bits, packed: immediate float spellings give their bit pattern
    if is_hexfloat:
        _, bits, width = _float_value(text)
        iv = bits
    elif any(c in lo for c in ".") or ("e" in lo and not lo.startswith("0x")):
        v = float(text)
        iv = struct.unpack("<I", struct.pack("<f", v))[0] if t.bits <= 32 else struct.unpack("<Q", struct.pack("<d", v))[0]
    else:
        iv = parse_int(text)
    bits = t.bits if t.bits in (8, 16, 32, 64) else 64
    iv &= (1 << bits) - 1
    return np.array(iv, dtype=UINT[bits]).view(dt)[()]


# ----------------------------------------------------------------------------- registers
class RegInfo:
    __slots__ = ("key", "bits", "type", "sdt")

    def __init__(self, key, ptype: PtxType):
        self.key = key
        self.type = ptype
        self.bits = 1 if ptype.kind == "pred" else ptype.bits
        self.sdt = storage_dtype(self.bits)


SPECIAL_PREFIXES = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid",
                    "%smid", "%nsmid", "%gridid", "%lanemask", "%clock", "%globaltimer",
                    "%cluster", "%nclusterid", "%clusterid", "%is_explicit_cluster",
                    "%dynamic_smem_size", "%total_smem_size", "%envreg", "%pm", "%reserved_smem",
                    "%aggr_smem_size", "%current_graph_exec")


def is_special(name: str) -> bool:
    return name.startswith(SPECIAL_PREFIXES)


def _convert_read(a, rbits, t: PtxType, dt):
    """Reinterpret register bits ``a`` (uint of rbits) as instruction type ``t``."""
    tb = t.bits if t.kind != "pred" else 1
    if rbits == tb or (t.kind == "packed" and rbits == t.bits):
        return a.view(dt) if a.dtype != dt else a
    if rbits == 1:
        return a.astype(dt)
    if rbits > tb:
        return a.astype(UINT.get(tb, np.uint8)).view(dt) if dt.itemsize * 8 == tb else a.astype(dt)
    # narrower register than the type: extend
    if t.is_signed:
        return a.view(SINT[rbits]).astype(dt)
    return a.astype(dt)


def _convert_write(v, rbits, t: PtxType, sdt):
    if rbits == 1:
        return v.astype(np.bool_) if v.dtype != np.bool_ else v
    if v.dtype.itemsize * 8 == rbits:
        return v.view(sdt) if v.dtype != sdt else v
    if v.dtype.kind == "b":
        return v.astype(sdt)
    vb = v.dtype.itemsize * 8
    if vb < rbits:
        if t.is_signed or v.dtype.kind == "i":
            return v.view(SINT[vb]).astype(SINT[rbits]).view(sdt)
        return v.view(UINT[vb]).astype(sdt)
    return v.view(UINT[vb]).astype(sdt)


def reader(prog, op, t: PtxType, scope=None):
    """A getter for source operand ``op`` read as type ``t``."""
    dt = np_dtype(t)
    if isinstance(op, Imm):
        val = imm_value(op.text, t)
        return lambda ctx, g: val
    if isinstance(op, Reg):
        name = op.name
        if not prog.has_reg(name, scope) and is_special(name):
            sname = name

            def get_special(ctx, g):
                a = ctx.special(sname)
                a = a if g.full else a[g.idx]
                return a.astype(dt) if a.dtype != dt else a
            return get_special
        info = prog.reg(name, scope)
        key, rbits = info.key, info.bits
        neg = op.neg
        if info.bits == 1 and t.kind != "pred":
            # predicate read as an integer (e.g. selp/mov with .pred types) -> 0/1
            def get_pred_int(ctx, g):
                return ctx.read(key, g).astype(dt)
            return get_pred_int
        if neg:
            def get_neg(ctx, g):
                return ~ctx.read(key, g)
            return get_neg
        same = (rbits == (t.bits if t.kind != "pred" else 1)) and (storage_dtype(rbits) == dt)
        if same:
            return lambda ctx, g: ctx.read(key, g)
        if rbits == (t.bits if t.kind != "pred" else 1) and dt.itemsize * 8 == rbits:
            return lambda ctx, g: ctx.read(key, g).view(dt)

        tb = t.bits if t.kind != "pred" else 1
        nb = tb // 8 if 8 <= tb < rbits else None     # a narrower read uses only the low bytes

        def get_conv(ctx, g):
            return _convert_read(ctx.read(key, g, nb), rbits, t, dt)
        return get_conv
    if isinstance(op, Sym):
        addr_of = prog.symbol_address(op.name, op.offset, scope)
        if addr_of is None or addr_of[0] in ("label", "func"):
            raise InterpreterError(f"symbol {op.name!r} cannot be used as a value here")
        space, val = addr_of
        v = dt.type(val & ((1 << (8 * dt.itemsize)) - 1)) if dt.kind in "ui" else val

        def get_sym(ctx, g):
            return v
        return get_sym
    raise InterpreterError(f"unsupported source operand {op!r}")


def writer(prog, op, t: PtxType, scope=None):
    """A setter for destination operand ``op`` written with values of type ``t``."""
    if isinstance(op, Sink):
        return lambda ctx, g, v: None
    if not isinstance(op, Reg):
        raise InterpreterError(f"destination must be a register, got {op!r}")
    info = prog.reg(op.name, scope)
    key, rbits, sdt = info.key, info.bits, info.sdt
    ndarray = np.ndarray

    def put(ctx, g, v):
        if type(v) is not ndarray or v.ndim == 0:
            if not isinstance(v, ndarray) or v.ndim == 0:
                v = np.full(g.n, v, dtype=np.asarray(v).dtype)
        if v.dtype is sdt:                   # already the register's storage type
            ctx.write(key, g, v)
        else:
            ctx.write(key, g, _convert_write(v, rbits, t, sdt))
    return put


def items(op):
    """The elements of a vector operand (or the operand itself as a 1-list)."""
    return list(op.items) if isinstance(op, Vec) else [op]


# ----------------------------------------------------------------------------- .b128 registers
def _b128_key(prog, op, scope):
    if not isinstance(op, Reg):
        raise InterpreterError(f"a .b128 operand must be a .b128 register, got {op!r}")
    info = prog.reg(op.name, scope)
    if info.bits != 128:
        raise InterpreterError(f"{op.name} is a {info.bits}-bit register; this operand is a .b128 register")
    return info.key


def b128_reader(prog, op, scope=None):
    """A getter for a ``.b128`` register: its value as an (n, 2) uint64 array (low, high)."""
    key = _b128_key(prog, op, scope)

    def get(ctx, g):
        return np.ascontiguousarray(ctx.read(key, g)).view(np.uint64).reshape(-1, 2)
    return get


def b128_writer(prog, op, scope=None):
    """A setter for a ``.b128`` register from an (n, 2) uint64 array (low, high)."""
    key = _b128_key(prog, op, scope)
    sdt = storage_dtype(128)

    def put(ctx, g, v):
        v = np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.uint64), (g.n, 2)))
        ctx.write(key, g, v.view(sdt).reshape(-1))
    return put
