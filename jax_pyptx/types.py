"""PTX scalar types: name, bit width, kind and NumPy dtype.

``from pyptx.types import f32, u32, bf16``. Each type is a singleton ``PtxType``; look one up
by name with ``by_name("f32")``.

Examples:
    >>> from jax_pyptx.types import bf16, by_name, f32
    >>> f32.bits, bf16.np_dtype, by_name("f32") is f32
    (32, dtype(bfloat16), True)
"""
from __future__ import annotations


# NumPy (and ml_dtypes, which gives NumPy dtypes for bf16 and the fp8/fp6/fp4 formats) load on
# first use of a dtype, not at import: tracing a kernel needs neither. A type holds the name
# of its dtype ("float32", or "ml_dtypes.bfloat16"); ``np_dtype`` resolves it once.
_DTYPES: dict = {}


def _dtype_of(spec):
    got = _DTYPES.get(spec, _DTYPES)
    if got is _DTYPES:
        import numpy as np

        if spec.startswith("ml_dtypes."):
            try:
                import ml_dtypes
            except ImportError:  # pragma: no cover - a declared dependency
                ml_dtypes = None
            attr = getattr(ml_dtypes, spec.split(".", 1)[1], None) if ml_dtypes else None
            got = None if attr is None else np.dtype(attr)
        else:
            got = np.dtype(spec)
        _DTYPES[spec] = got
    return got


class PtxType:
    """A PTX fundamental (or packed) type such as ``.f32`` or ``.bf16x2``.

    kind is one of: "pred", "bits" (.bN), "unsigned" (.uN), "signed" (.sN), "float"
    (.fN/.bf16/.tf32 and the fp8/fp6/fp4 formats), "packed" (x2/x4 vectors of a float type).

    Examples:
        >>> from jax_pyptx.types import PtxType, bf16x2, f32
        >>> PtxType("f32", 32) is f32, f32.kind, bf16x2.lanes, bf16x2.elem
        (True, 'float', 2, bf16)
    """

    __slots__ = ("name", "bits", "kind", "_np", "lanes", "elem")

    def __new__(cls, name, bits=None, kind=None, *args, **kw):
        # ``PtxType("f32", 32)`` (the documented constructor) is the ``f32`` singleton, so
        # identity, equality and hashing agree for every spelling of a type
        if kind is None:
            key = name[1:] if isinstance(name, str) and name.startswith(".") else name
            got = _ALL.get(key)
            if got is None:
                from .errors import PtxValueError

                raise PtxValueError(f"unknown PTX type {name!r}; known types: "
                                    f"{', '.join(sorted(_ALL))}")
            if bits is not None and bits != got.bits:
                from .errors import PtxValueError

                raise PtxValueError(f"PtxType({name!r}, {bits}): {got.name} is {got.bits}-bit")
            return got
        return super().__new__(cls)

    def __init__(self, name, bits=None, kind=None, np_dtype=None, lanes=1, elem=None):
        if kind is None:            # an existing singleton (see __new__)
            return
        self.name, self.bits, self.kind = name, bits, kind
        self._np, self.lanes, self.elem = np_dtype, lanes, elem

    @property
    def ptx(self) -> str:
        """The PTX spelling, with the dot: ``.f32``.

        Examples:
            >>> from jax_pyptx.types import bf16, u64
            >>> bf16.ptx, u64.ptx
            ('.bf16', '.u64')
        """
        return "." + self.name

    @property
    def np_dtype(self):
        """The NumPy dtype holding one value (None for packed/sub-byte types without one).

        Examples:
            >>> from jax_pyptx.types import bf16, f32
            >>> f32.np_dtype, bf16.np_dtype
            (dtype('float32'), dtype(bfloat16))
        """
        return None if self._np is None else _dtype_of(self._np)

    @property
    def nbytes(self) -> int:
        """Size in bytes: ``bits // 8``, at least 1 (a sub-byte type counts as one byte).

        Examples:
            >>> from jax_pyptx.types import b128, f16, f32
            >>> f16.nbytes, f32.nbytes, b128.nbytes
            (2, 4, 16)
        """
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        """Whether its kind is ``"float"`` (packed vectors such as ``f16x2`` are kind
        ``"packed"``).

        Examples:
            >>> from jax_pyptx.types import bf16, f16x2, u32
            >>> bf16.is_float, f16x2.is_float, u32.is_float
            (True, False, False)
        """
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        """Whether it is an integer type: signed (``.sN``), unsigned (``.uN``) or bits (``.bN``).

        Examples:
            >>> from jax_pyptx.types import b32, s8, u32
            >>> s8.is_int, u32.is_int, b32.is_int
            (True, True, True)
        """
        return self.kind in ("signed", "unsigned", "bits")

    @property
    def is_signed(self) -> bool:
        """Whether it is a signed integer type.

        Examples:
            >>> from jax_pyptx.types import s32, u32
            >>> s32.is_signed, u32.is_signed
            (True, False)
        """
        return self.kind == "signed"

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (by_name, (self.name,))


_ALL: dict[str, PtxType] = {}


def _t(name, bits, kind, np_dtype=None, lanes=1, elem=None) -> PtxType:
    t = PtxType(name, bits, kind, np_dtype, lanes, elem)
    _ALL[name] = t
    return t


def _mdt(attr):
    return "ml_dtypes." + attr


pred = _t("pred", 1, "pred", "bool")
b8 = _t("b8", 8, "bits", "uint8")
b16 = _t("b16", 16, "bits", "uint16")
b32 = _t("b32", 32, "bits", "uint32")
b64 = _t("b64", 64, "bits", "uint64")
b128 = _t("b128", 128, "bits")
u8 = _t("u8", 8, "unsigned", "uint8")
u16 = _t("u16", 16, "unsigned", "uint16")
u32 = _t("u32", 32, "unsigned", "uint32")
u64 = _t("u64", 64, "unsigned", "uint64")
s8 = _t("s8", 8, "signed", "int8")
s16 = _t("s16", 16, "signed", "int16")
s32 = _t("s32", 32, "signed", "int32")
s64 = _t("s64", 64, "signed", "int64")
f16 = _t("f16", 16, "float", "float16")
bf16 = _t("bf16", 16, "float", _mdt("bfloat16"))
tf32 = _t("tf32", 32, "float", "float32")
f32 = _t("f32", 32, "float", "float32")
f64 = _t("f64", 64, "float", "float64")
e4m3 = _t("e4m3", 8, "float", _mdt("float8_e4m3fn"))
e5m2 = _t("e5m2", 8, "float", _mdt("float8_e5m2"))
e2m3 = _t("e2m3", 6, "float", _mdt("float6_e2m3fn"))
e3m2 = _t("e3m2", 6, "float", _mdt("float6_e3m2fn"))
e2m1 = _t("e2m1", 4, "float", _mdt("float4_e2m1fn"))
ue8m0 = _t("ue8m0", 8, "float", _mdt("float8_e8m0fnu"))
f16x2 = _t("f16x2", 32, "packed", None, 2, f16)
bf16x2 = _t("bf16x2", 32, "packed", None, 2, bf16)
e4m3x2 = _t("e4m3x2", 16, "packed", None, 2, e4m3)
e5m2x2 = _t("e5m2x2", 16, "packed", None, 2, e5m2)
e2m3x2 = _t("e2m3x2", 16, "packed", None, 2, e2m3)
e3m2x2 = _t("e3m2x2", 16, "packed", None, 2, e3m2)
e2m1x2 = _t("e2m1x2", 8, "packed", None, 2, e2m1)
ue8m0x2 = _t("ue8m0x2", 16, "packed", None, 2, ue8m0)
e4m3x4 = _t("e4m3x4", 32, "packed", None, 4, e4m3)
e5m2x4 = _t("e5m2x4", 32, "packed", None, 4, e5m2)
e2m1x4 = _t("e2m1x4", 16, "packed", None, 4, e2m1)

ALL_TYPES: tuple[PtxType, ...] = tuple(_ALL.values())


def by_name(name: str) -> PtxType:
    """The type called ``name`` (with or without the leading dot).

    Examples:
        >>> from jax_pyptx.types import by_name, f32
        >>> by_name("f32") is f32, by_name(".bf16x2")
        (True, bf16x2)
    """
    key = name[1:] if name.startswith(".") else name
    try:
        return _ALL[key]
    except KeyError:
        from .errors import PtxTypeError

        raise PtxTypeError(
            f"unknown PTX type {name!r}; known types: {', '.join(sorted(_ALL))}"
        ) from None


def from_name(name: str) -> PtxType:
    """The type called ``name`` (``"f32"`` or ``".f32"``); an unknown name raises
    ``PtxValueError`` (a ``ValueError``).

    Examples:
        >>> from_name(".bf16") is bf16
        True
    """
    key = name[1:] if isinstance(name, str) and name.startswith(".") else name
    got = _ALL.get(key)
    if got is None:
        from .errors import PtxValueError

        raise PtxValueError(f"unknown PTX type {name!r}; known types: {', '.join(sorted(_ALL))}")
    return got


def is_type_name(name: str) -> bool:
    """Whether ``name`` (with or without the dot) names a PTX type.

    Examples:
        >>> from jax_pyptx.types import is_type_name
        >>> is_type_name("bf16"), is_type_name(".u32"), is_type_name("global")
        (True, True, False)
    """
    return (name[1:] if name.startswith(".") else name) in _ALL


def from_numpy(dtype) -> PtxType:
    """The PTX type for a NumPy / JAX dtype (bool -> pred, bfloat16 -> bf16, ...).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.types import from_numpy
        >>> from_numpy(np.float32), from_numpy(np.dtype("int8"))
        (f32, s8)
    """
    import numpy as np

    dt = np.dtype(dtype)
    for t in (f32, f64, f16, bf16, s8, s16, s32, s64, u8, u16, u32, u64, pred, e4m3, e5m2):
        if t._np is not None and t.np_dtype is not None and t.np_dtype == dt:
            return t
    from .errors import PtxTypeError

    raise PtxTypeError(f"no PTX type for NumPy dtype {dt}")


def bits_type(bits: int) -> PtxType:
    """The untyped ``.bN`` type of a width.

    Examples:
        >>> from jax_pyptx.types import bits_type
        >>> bits_type(16), bits_type(64)
        (b16, b64)
    """
    return {8: b8, 16: b16, 32: b32, 64: b64, 128: b128}[bits]
