"""``ptx.cp``: asynchronous copies.

Ampere: ``ptx.cp.async_(dst, src, 16, cop="cg", src_size=n)``, ``ptx.cp.async_.commit_group()``,
``.wait_group(n)``, ``.wait_all()``, ``.mbarrier_arrive(mbar)``.
Bulk (sm_90): ``ptx.cp.async_.bulk(dst, src, size, mbar)`` (global -> shared),
``.bulk.s2g(dst, src, size)``, ``.bulk.s2s(dst, src, size, mbar)``, ``.bulk.prefetch(src,
size)``, ``.bulk.commit_group()``, ``.bulk.wait_group(n, read=True)``.
TMA: ``ptx.cp.async_.bulk.tensor_2d(dst, tmap, (x, y), mbar, multicast=mask, policy=p)``
(``mode="tile"|"tile::gather4"|"im2col"|"im2col::w"|"im2col::w::128"``, ``cta_group=1|2``,
``dst_space="shared::cluster"|"shared::cta"``); ``.tensor_2d.store(tmap, coords, src)``,
``.tensor_2d.reduce("add", tmap, coords, src)``, ``.tensor_2d.prefetch(tmap, coords)``.
Reductions: ``ptx.cp.reduce.async_.bulk("add", dst, src, size, type=f32)`` and
``ptx.cp.reduce.async_.bulk.tensor_2d("add", tmap, coords, src)``.
"""
from __future__ import annotations

from ...errors import PtxValueError
from ...ir.nodes import Addr
from ...types import s32
from ..context import user_loc
from ..values import Register, Special, as_operand, materialize
from ._wrap import addr as _addr, build_mods, choice, dtype, emit, int_choice, vec


_FOUR_ROWS = (".tile::gather4", ".tile::scatter4")


def _tmap(fn, tmap, coords, dim, mode=".tile"):
    """``[tmap, {coords}]``: ``dim`` coordinates, or for tile::gather4 / tile::scatter4 (2-D
    only) five: the column, then the four rows (PTX ISA "cp.async.bulk.tensor")."""
    if mode in _FOUR_ROWS:
        if dim != 2:
            raise PtxValueError(f"{fn}: mode={mode[1:]!r} needs a 2d tensor (tensor_2d), got "
                                f"{dim}d", loc=user_loc())
        if len(coords) != 5:
            raise PtxValueError(f"{fn}: coords must have 5 entries (column, row0..row3) for "
                                f"{mode[1:]}, got {len(coords)}", loc=user_loc())
    elif len(coords) != dim:
        raise PtxValueError(f"{fn}: coords must have {dim} entries for a {dim}d tensor, got "
                            f"{len(coords)}", loc=user_loc())
    regs = []
    for c in coords:                     # registers, ints (immediates) or raw text
        if isinstance(c, Special):
            c = materialize(c)
        if isinstance(c, str):
            from ..values import str_operand

            c = str_operand(c, s32)
        regs.append(c)
    base = tmap
    if isinstance(tmap, Register):
        base = as_operand(tmap)
    elif isinstance(tmap, Addr):
        base = tmap.base
    else:
        base = _addr(tmap, fn, "tmap").base
    return Addr(base, 0, (vec(regs),))


class _Tensor:
    """``cp.async.bulk.tensor.{N}d``: call to load; ``.store``, ``.reduce``, ``.prefetch``."""

    def __init__(self, dim: int):
        self.dim = dim

    def __call__(self, dst=None, tmap=None, coords=None, mbar=None, *, src=None, coord=None,
                 mode="tile", im2col=None, multicast=None, multicast_mask=None, cta_group=None,
                 policy=None, dst_space="shared::cluster", pred=None):
        """``cp.async.bulk.tensor.Nd.dst.global{.mode}.mbarrier::complete_tx::bytes
        {.multicast::cluster}{.cta_group::N}{.L2::cache_hint} [dst], [tmap, {coords}], [mbar]
        {, im2col offsets}{, ctaMask}{, policy}``.

        Keyword spelling of the documented surface: ``tensor_2d(dst=sA[0], src=A.tma_desc(),
        coord=(x, y), mbar=bar[0], multicast_mask=m, cta_group=2)`` (``src`` is the tensor
        map, ``coord`` the coordinates; ``cta_group=1`` adds no modifier) prints the
        documented text: ``cp.async.bulk.tensor.2d[.cta_group::2].shared::cluster.global
        .mbarrier::complete_tx::bytes[.multicast::cluster] [dst], [src, {x, y}], [mbar]``
        (no ``.tile``, the default mode; ptxas takes this order)."""
        fn = f"ptx.cp.async_.bulk.tensor_{self.dim}d"
        documented = (src is not None or coord is not None) and mode == "tile" and \
            im2col is None and policy is None and dst_space == "shared::cluster"
        tmap, coords, multicast, cta_group = _spelled(fn, tmap, src, "tmap", "src", coords,
                                                      coord, multicast, multicast_mask,
                                                      cta_group)
        if dst is None or tmap is None or coords is None or mbar is None:
            missing = [n for n, v in (("dst", dst), ("src", tmap), ("coord", coords),
                                      ("mbar", mbar)) if v is None]
            raise PtxValueError(f"{fn}: missing {', '.join(missing)}; a tensor load completes "
                                f"on an mbarrier: tensor_{self.dim}d(dst=smem, src=desc, "
                                f"coord=(...), mbar=bar)", loc=user_loc())
        if documented:
            return _documented_load(fn, self.dim, "tile", dst, tmap, coords, mbar, cta_group,
                                    multicast, None, None, pred)
        m = choice(fn, "mode", mode, (".tile", ".tile::gather4", ".im2col", ".im2col::w",
                                      ".im2col::w::128"))
        kw = {"dim": f".{self.dim}d", "dst": dst_space, "src": ".global",
              "mode": m, "completion": ".mbarrier::complete_tx::bytes",
              "multicast": multicast is not None and ".multicast::cluster",
              "cta_group": None if cta_group is None else
              f".cta_group::{int_choice(fn, 'cta_group', cta_group, (1, 2))}",
              "hint": policy is not None}
        mods = build_mods(fn, "cp.async.bulk.tensor", kw)
        extra = []
        if m == ".im2col":
            if im2col is None or len(im2col) != self.dim - 2:
                raise PtxValueError(f"{fn}: im2col must give {self.dim - 2} u16 offsets for "
                                    f"{self.dim}d im2col", loc=user_loc())
            extra.append(vec(im2col))
        elif m.startswith(".im2col::w"):
            if im2col is None or len(im2col) != 2:
                raise PtxValueError(f"{fn}: im2col must be (wHalo, wOffset) for {m[1:]}",
                                    loc=user_loc())
            extra.append(vec(im2col))
        ops = [_addr(dst, fn, "dst"), _tmap(fn, tmap, coords, self.dim, m),
               _addr(mbar, fn, "mbar")]
        ops += extra + ([multicast] if multicast is not None else []) + \
            ([policy] if policy is not None else [])
        emit("cp.async.bulk.tensor" + "".join(mods), ops, pred)

    def store(self, tmap=None, coords=None, src=None, *, dst=None, coord=None, mode="tile",
              policy=None, pred=None):
        """``cp.async.bulk.tensor.Nd.global.shared::cta{.mode}.bulk_group{.L2::cache_hint}
        [tmap, {coords}], [src]{, policy}``. Keyword spelling: ``store(dst=desc, src=smem,
        coord=(...))``, printed as documented: ``cp.async.bulk.tensor.Nd.global.shared::cta
        .bulk_group [dst, {...}], [src]``."""
        fn = f"ptx.cp.async_.bulk.tensor_{self.dim}d.store"
        documented = (dst is not None or coord is not None) and mode == "tile" and \
            policy is None
        tmap, coords, _, _ = _spelled(fn, tmap, dst, "tmap", "dst", coords, coord, None, None,
                                      None)
        if tmap is None or coords is None or src is None:
            raise PtxValueError(f"{fn}: needs dst (the tensor map), src (shared memory) and "
                                f"coord", loc=user_loc())
        if documented:
            return _documented_store(fn, self.dim, "tile", tmap, coords, src, None, pred)
        m = choice(fn, "mode", mode, (".tile", ".tile::scatter4", ".im2col_no_offs"))
        mods = build_mods(fn, "cp.async.bulk.tensor", {
            "dim": f".{self.dim}d", "dst": ".global", "src": ".shared::cta", "mode": m,
            "completion": ".bulk_group", "hint": policy is not None})
        emit("cp.async.bulk.tensor" + "".join(mods),
             [_tmap(fn, tmap, coords, self.dim, m), _addr(src, fn, "src")] +
             ([policy] if policy is not None else []), pred)

    def reduce(self, op, tmap, coords, src, *, mode="tile", policy=None, pred=None):
        """``cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op{.mode}.bulk_group
        {.L2::cache_hint} [tmap, {coords}], [src]``."""
        fn = f"ptx.cp.reduce.async_.bulk.tensor_{self.dim}d"
        o = choice(fn, "op", op, (".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor"))
        mods = build_mods(fn, "cp.reduce.async.bulk.tensor", {
            "dim": f".{self.dim}d", "dst": ".global", "src": ".shared::cta", "op": o,
            "mode": mode, "completion": ".bulk_group", "hint": policy is not None})
        emit("cp.reduce.async.bulk.tensor" + "".join(mods),
             [_tmap(fn, tmap, coords, self.dim), _addr(src, fn, "src")] +
             ([policy] if policy is not None else []), pred)

    def prefetch(self, tmap, coords, *, mode="tile", im2col=None, policy=None, pred=None):
        """``cp.async.bulk.prefetch.tensor.Nd.L2.global{.mode}{.L2::cache_hint}
        [tmap, {coords}]{, im2col}{, policy}``."""
        fn = f"ptx.cp.async_.bulk.tensor_{self.dim}d.prefetch"
        m = choice(fn, "mode", mode, (".tile", ".tile::gather4", ".im2col", ".im2col::w",
                                      ".im2col::w::128"))
        mods = build_mods(fn, "cp.async.bulk.prefetch.tensor", {
            "dim": f".{self.dim}d", "level": ".L2", "src": ".global", "mode": m,
            "hint": policy is not None})
        extra = [] if im2col is None else [vec(im2col)]   # offsets, or {wHalo, wOffset}
        emit("cp.async.bulk.prefetch.tensor" + "".join(mods),
             [_tmap(fn, tmap, coords, self.dim, m)] + extra +
             ([policy] if policy is not None else []), pred)


    def shared_cta_global_tile(self, *, dst, src, coord, mbar, cta_group=1, pred=None):
        """``cp.async.bulk.tensor.Nd.shared::cta.global.tile.mbarrier::complete_tx::bytes
        {.cta_group::2} [dst], [src, {coord}], [mbar]`` (sm_100a)."""
        fn = f"ptx.cp.async_.bulk.tensor_{self.dim}d.shared_cta_global_tile"
        int_choice(fn, "cta_group", cta_group, (1, 2))
        emit(f"cp.async.bulk.tensor.{self.dim}d.shared::cta.global.tile"
             f".mbarrier::complete_tx::bytes{'.cta_group::2' if cta_group == 2 else ''}",
             [_addr(dst, fn, "dst"), _tmap(fn, src, coord, self.dim), _addr(mbar, fn, "mbar")],
             pred)


def _spelled(fn, tmap, src, tname, sname, coords, coord, multicast, multicast_mask, cta_group):
    """Merge the documented keyword names with ours; giving both of a pair is an error."""
    for a, b, an, bn in ((tmap, src, tname, sname), (coords, coord, "coords", "coord"),
                         (multicast, multicast_mask, "multicast", "multicast_mask")):
        if a is not None and b is not None:
            raise PtxValueError(f"{fn}: give {an} or {bn}, not both", loc=user_loc(3))
    if cta_group == 1 and src is not None:
        cta_group = None          # the documented default: no modifier
    return (tmap if tmap is not None else src, coords if coords is not None else coord,
            multicast if multicast is not None else multicast_mask, cta_group)


def _documented_load(fn, dim, mode, dst, tmap, coords, mbar, cta_group, multicast, policy,
                     offsets, pred):
    """A tensor load in the documented text: ``cp.async.bulk.tensor.Nd[.cta_group::2]
    .shared::cluster.global.mbarrier::complete_tx::bytes[.im2col|.tile::gather4]
    [.multicast::cluster][.L2::cache_hint] [dst], [tmap, {coords}], [mbar][, {offsets}]
    [, mask][, policy]`` (no ``.tile``: the default load mode). ptxas reads these modifiers in
    any order; the ISA table takes this one."""
    if mbar is None:
        raise PtxValueError(f"{fn}: mbar is required: a tensor load completes on an mbarrier "
                            f"(without one ptxas rejects the instruction: \"Arguments "
                            f"mismatch\")", loc=user_loc(3))
    if cta_group is not None:
        int_choice(fn, "cta_group", cta_group, (1, 2))
    m = {"tile": "", "im2col": ".im2col", "tile::gather4": ".tile::gather4"}[mode]
    extra = []
    if mode == "im2col":
        if offsets is None or len(offsets) != dim - 2:
            raise PtxValueError(f"{fn}: im2col needs {dim - 2} u16 offsets (offsets=(...)), "
                                f"got {'none' if offsets is None else len(offsets)}; without "
                                f"them ptxas rejects the instruction (\"Arguments mismatch\")",
                                loc=user_loc(3))
        extra.append(vec(offsets))
    name = (f"cp.async.bulk.tensor.{dim}d{'.cta_group::2' if cta_group == 2 else ''}"
            f".shared::cluster.global.mbarrier::complete_tx::bytes{m}"
            f"{'.multicast::cluster' if multicast is not None else ''}"
            f"{'.L2::cache_hint' if policy is not None else ''}")
    mode_mod = ".tile::gather4" if mode == "tile::gather4" else ".tile"
    ops = [_addr(dst, fn, "dst"), _tmap(fn, tmap, coords, dim, mode_mod), _addr(mbar, fn, "mbar")]
    ops += extra + ([multicast] if multicast is not None else []) + \
        ([policy] if policy is not None else [])
    emit(name, ops, pred)


def _documented_store(fn, dim, mode, tmap, coords, src, policy, pred):
    """A tensor store in the documented text, with the completion ptxas requires:
    ``cp.async.bulk.tensor.Nd.global.shared::cta[.tile::scatter4].bulk_group
    [.L2::cache_hint] [tmap, {coords}], [src][, policy]``."""
    m = ".tile::scatter4" if mode == "tile::scatter4" else ""
    name = (f"cp.async.bulk.tensor.{dim}d.global.shared::cta{m}.bulk_group"
            f"{'.L2::cache_hint' if policy is not None else ''}")
    emit(name, [_tmap(fn, tmap, coords, dim, m or ".tile"), _addr(src, fn, "src")] +
         ([policy] if policy is not None else []), pred)


class _TensorOps:
    """``ptx.cp.async_.bulk.tensor``: the positional spelling, one method per mode and rank
    (the form the transpiler of the documented surface writes): ``tile_2d(dst, src, coord,
    mbar=bar)`` loads (``dst`` shared memory, ``src`` the tensor map, coordinates with the
    tensor map), ``store_2d(dst, src, coord)`` stores (``dst`` the tensor map), plus
    ``im2col_3d..5d(dst, src, coord, offsets, mbar=)``, ``gather4_2d(dst, src, (col, r0, r1,
    r2, r3), mbar=)`` and ``scatter4_2d(dst, src, (col, r0, r1, r2, r3))``. The text is the
    documented one (modifier order included) with the parts ptxas requires: loads
    ``cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [dst],
    [src, {c0, c1}], [mbar];``, stores ``cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
    [dst, {c0, c1}], [src];``."""

    def __getattr__(self, name):
        import re

        m = re.fullmatch(r"(tile|im2col|gather4|store|scatter4)_([1-5])d", name)
        if m is None:
            raise AttributeError(f"ptx.cp.async_.bulk.tensor has no {name!r}; methods: "
                                 f"tile_1d..tile_5d, im2col_3d..im2col_5d, gather4_2d, "
                                 f"store_1d..store_5d, scatter4_2d")
        kind, dim = m.group(1), int(m.group(2))
        if kind in ("im2col",) and dim < 3 or kind in ("gather4", "scatter4") and dim != 2:
            raise AttributeError(f"ptx.cp.async_.bulk.tensor has no {name!r}")
        fn = f"ptx.cp.async_.bulk.tensor.{name}"
        if kind == "store":
            def store(dst, src, coord, *, cache_hint=None, pred=None):
                """Shared -> global through tensor map ``dst`` at ``coord``."""
                return _documented_store(fn, dim, "tile", dst, coord, src, cache_hint, pred)
            store.__name__ = name
            return store
        if kind == "scatter4":
            def scatter4(dst, src, coord, *, mbar=None, cache_hint=None, pred=None):
                """Shared -> global: the four rows ``coord[1:]`` at column ``coord[0]`` of
                tensor map ``dst`` (a store: it completes through the bulk group, so
                ``mbar`` must stay None)."""
                if mbar is not None:
                    raise PtxValueError(
                        f"{fn}: mbar={mbar!r}: a tensor store completes through the bulk "
                        f"group (cp.async.bulk.commit_group / wait_group), not on an "
                        f"mbarrier; ptxas rejects the mbarrier operand (\"Arguments "
                        f"mismatch\")", loc=user_loc())
                return _documented_store(fn, dim, "tile::scatter4", dst, coord, src,
                                         cache_hint, pred)
            scatter4.__name__ = name
            return scatter4
        mode = {"tile": "tile", "gather4": "tile::gather4", "im2col": "im2col"}[kind]

        def load(dst, src, coord, offsets=None, *, mbar=None, cache_hint=None,
                 multicast_mask=None, cta_group=1, im2col_offsets=None, pred=None):
            """Global -> shared through tensor map ``src`` at ``coord``, completing on
            ``mbar`` (im2col: ``offsets``, or ``im2col_offsets=``; gather4: ``coord`` is the
            column, then the four rows)."""
            if offsets is not None and im2col_offsets is not None:
                raise PtxValueError(f"{fn}: give offsets or im2col_offsets, not both",
                                    loc=user_loc())
            offs = offsets if offsets is not None else im2col_offsets
            if offs is not None and mode != "im2col":
                raise PtxValueError(f"{fn}: offsets are for the im2col loads", loc=user_loc())
            return _documented_load(fn, dim, mode, dst, src, coord, mbar, cta_group,
                                    multicast_mask, cache_hint, offs, pred)
        load.__name__ = name
        return load


class _Bulk:
    """``cp.async.bulk``: call for global -> shared (mbarrier completion)."""

    tensor_1d, tensor_2d, tensor_3d, tensor_4d, tensor_5d = (_Tensor(i) for i in range(1, 6))
    tensor = _TensorOps()

    def __call__(self, dst, src, size, mbar, *, multicast=None, policy=None,
                 dst_space="shared::cluster", pred=None):
        """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
        {.multicast::cluster}{.L2::cache_hint} [dst], [src], size, [mbar]{, ctaMask}{, policy}``."""
        fn = "ptx.cp.async_.bulk"
        mods = build_mods(fn, "cp.async.bulk", {
            "dst": dst_space, "src": ".global", "completion": ".mbarrier::complete_tx::bytes",
            "multicast": multicast is not None and ".multicast::cluster",
            "hint": policy is not None})
        emit("cp.async.bulk" + "".join(mods),
             [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size, _addr(mbar, fn, "mbar")] +
             ([multicast] if multicast is not None else []) +
             ([policy] if policy is not None else []), pred)

    def s2g(self, dst, src, size, *, policy=None, byte_mask=None, pred=None):
        """``cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}{.cp_mask}
        [dst], [src], size{, policy}{, byteMask}``."""
        fn = "ptx.cp.async_.bulk.s2g"
        mods = build_mods(fn, "cp.async.bulk", {
            "dst": ".global", "src": ".shared::cta", "completion": ".bulk_group",
            "hint": policy is not None, "mask": byte_mask is not None})
        emit("cp.async.bulk" + "".join(mods),
             [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size] +
             ([policy] if policy is not None else []) +
             ([byte_mask] if byte_mask is not None else []), pred)

    def s2s(self, dst, src, size, mbar, *, pred=None):
        """``cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
        [dst], [src], size, [mbar]``: into a peer CTA's shared memory."""
        fn = "ptx.cp.async_.bulk.s2s"
        emit("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
             [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size, _addr(mbar, fn, "mbar")],
             pred)

    def prefetch(self, src, size, *, policy=None, pred=None):
        """``cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}``."""
        hint = ".L2::cache_hint" if policy is not None else ""
        emit(f"cp.async.bulk.prefetch.L2.global{hint}",
             [_addr(src, "ptx.cp.async_.bulk.prefetch", "src"), size] +
             ([policy] if policy is not None else []), pred)

    def commit_group(self, *, pred=None):
        """``cp.async.bulk.commit_group``."""
        emit("cp.async.bulk.commit_group", (), pred)

    def wait_group(self, n: int = 0, *, read: bool = False, pred=None):
        """``cp.async.bulk.wait_group{.read} N``."""
        int_choice("ptx.cp.async_.bulk.wait_group", "n", n, range(0, 64))
        emit(f"cp.async.bulk.wait_group{'.read' if read else ''}", (n,), pred)


class _Async:
    """``cp.async`` (Ampere): call to copy 4/8/16 bytes global -> shared."""

    bulk = _Bulk()

    def __call__(self, dst, src, size: int, *, cop=None, src_size=None, ignore_src=None,
                 policy=None, prefetch=None, pred=None):
        """``cp.async.ca|cg.shared.global{.L2::cache_hint}{.L2::NB} [dst], [src], size
        {, src_size | ignore_src}{, policy}``; ``cg`` requires size 16 (default for 16)."""
        fn = "ptx.cp.async_"
        int_choice(fn, "size", size, (4, 8, 16))
        c = choice(fn, "cop", cop or ("cg" if size == 16 else "ca"), (".ca", ".cg"))
        if c == ".cg" and size != 16:
            raise PtxValueError(f"{fn}: cop='cg' needs size=16, got size={size}", loc=user_loc())
        if src_size is not None and ignore_src is not None:
            raise PtxValueError(f"{fn}: give src_size or ignore_src, not both", loc=user_loc())
        kw = {"cop": c, "dst": ".shared", "src": ".global", "hint": policy is not None,
              "prefetch": None if prefetch is None else ".L2::" + str(prefetch).replace("L2::", "")}
        mods = build_mods(fn, "cp.async", kw)
        ops = [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size]
        if src_size is not None:
            ops.append(src_size)
        if ignore_src is not None:
            ops.append(ignore_src)
        if policy is not None:
            ops.append(policy)
        emit("cp.async" + "".join(mods), ops, pred)

    def cg(self, dst, src, size: int = 16, *, src_size=None, pred=None):
        """``cp.async.cg.shared.global [dst], [src], 16{, src_size}`` (L2 only; 16 bytes)."""
        self(dst, src, size, cop="cg", src_size=src_size, pred=pred)

    def ca(self, dst, src, size: int, *, src_size=None, pred=None):
        """``cp.async.ca.shared.global [dst], [src], size{, src_size}`` (4, 8 or 16 bytes)."""
        self(dst, src, size, cop="ca", src_size=src_size, pred=pred)

    def commit_group(self, *, pred=None):
        """``cp.async.commit_group``."""
        emit("cp.async.commit_group", (), pred)

    def wait_group(self, n: int = 0, *, pred=None):
        """``cp.async.wait_group N``."""
        int_choice("ptx.cp.async_.wait_group", "n", n, range(0, 64))
        emit("cp.async.wait_group", (n,), pred)

    def wait_all(self, *, pred=None):
        """``cp.async.wait_all``."""
        emit("cp.async.wait_all", (), pred)

    def mbarrier_arrive(self, mbar, *, noinc: bool = False, pred=None):
        """``cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]``: arrive when this thread's
        prior cp.async operations complete."""
        emit(f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared.b64",
             (_addr(mbar, "ptx.cp.async_.mbarrier_arrive", "mbar"),), pred)


async_ = _Async()
async_bulk = async_.bulk


class _TensorReduce:
    """``cp.reduce.async.bulk.tensor.Nd``: ``(op, tmap, coords, src, mode=, policy=)``."""

    def __init__(self, dim: int):
        self._t = _Tensor(dim)

    def __call__(self, op, tmap, coords, src, **kw):
        return self._t.reduce(op, tmap, coords, src, **kw)


class _ReduceBulk:
    tensor_1d, tensor_2d, tensor_3d, tensor_4d, tensor_5d = (_TensorReduce(i) for i in range(1, 6))

    def __call__(self, op, dst, src, size, mbar=None, *, type=None, policy=None, pred=None):
        """``cp.reduce.async.bulk``: shared::cta -> global (``.bulk_group``, no mbar) or
        shared::cta -> shared::cluster (with ``mbar``), ``.op{.noftz}.type``."""
        fn = "ptx.cp.reduce.async_.bulk"
        o = choice(fn, "op", op, (".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor"))
        t = dtype(type)
        tn = "." + t.name
        if o in (".and", ".or", ".xor") and t.kind != "bits":
            tn = f".b{t.bits}"
        if mbar is None:
            kw = {"dst": ".global", "src": ".shared::cta", "completion": ".bulk_group",
                  "hint": policy is not None, "op": o,
                  "noftz": o == ".add" and tn in (".f16", ".bf16"),
                  "type": tn}
            ops = [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size] + \
                ([policy] if policy is not None else [])
        else:
            kw = {"dst": ".shared::cluster", "src": ".shared::cta",
                  "completion": ".mbarrier::complete_tx::bytes", "op": o, "type": tn}
            ops = [_addr(dst, fn, "dst"), _addr(src, fn, "src"), size, _addr(mbar, fn, "mbar")]
        mods = build_mods(fn, "cp.reduce.async.bulk", kw)
        emit("cp.reduce.async.bulk" + "".join(mods), ops, pred)


class _ReduceAsync:
    bulk = _ReduceBulk()


class _Reduce:
    async_ = _ReduceAsync()


reduce = _Reduce()

__all__ = ["async_", "async_bulk", "reduce"]
