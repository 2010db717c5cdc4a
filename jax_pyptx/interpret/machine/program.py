"""Lay out a PTX function (and the functions it calls) as a flat program.

Each ``Instruction`` gets a ``Decoded`` record; ``scheduler.handlers.decode_program`` later fills it with
a closure that executes the instruction for a group of threads (operand access, types and
modifiers resolved once). Laying out does not decode.

Block scopes are honoured (a register declared in an inner ``{ }`` shadows an outer one), and
the layouts of shared, local, global, const and param variables are fixed here so handlers can
bake in addresses.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...ir.nodes import Addr, Block, Function, Imm, Instruction, Label, ParenList, RawDirective, RegDecl, Sym, VarDecl, Vec
from ..state import memory as M
from ..state.operands import RegInfo, imm_value, np_dtype
from .registry import K_OP


class Decoded:
    __slots__ = ("pc", "ins", "kind", "fn", "guard", "gneg", "target", "sync", "func", "noun", "seg",
                 "stc", "srun", "wgc", "wrun", "irun", "lanes", "nat", "_text")

    def __init__(self, pc, ins, func):
        self.pc, self.ins, self.func = pc, ins, func
        self.kind = K_OP
        self.fn = None
        self.guard = None
        self.gneg = False
        self.target = None
        self.sync = None          # None | "aligned" | getter of the membermask operand
        self.noun = None          # what a memory fault calls the access ("load", "store", ...)
        self.seg = None           # scheduler.segments.Segment starting here, if any
        self.stc = None           # a shared store: (its operands' reader, its writer) (store_runs)
        self.srun = None          # scheduler.store_runs.StoreRun starting here, if any
        self.wgc = None           # a wgmma.mma_async that may issue in a run (ops.wgmma_chain.run_chain)
        self.wrun = None          # scheduler.wgmma_runs.WgmmaRun starting here, if any
        self.irun = None          # scheduler.issue_runs.IssueRun starting here, if any
        self.lanes = None         # a shfl.bfly a segment may hold: (lane mask, its batch handler)
        self.nat = None           # a pure instruction's native form (scheduler.native.Nat)
        self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            from ...text.printer import instruction
            self._text = instruction(self.ins).replace(" \t", " ")
        return self._text

    def where(self) -> str:
        return f"instruction #{self.pc} of {self.func}"

    def where_line(self) -> str:
        """``where()`` led by the source line when the instruction has one."""
        loc = getattr(self.ins, "loc", None)
        return f"{loc} ({self.where()})" if loc is not None else self.where()


class Var:
    __slots__ = ("name", "space", "addr", "size", "align", "decl")

    def __init__(self, name, space, addr, size, align, decl):
        self.name, self.space, self.addr, self.size, self.align, self.decl = name, space, addr, size, align, decl


def _var_size(d: VarDecl) -> int:
    n = d.type.nbytes * max(1, d.vector)
    for dim in d.dims:
        n *= (dim or 0)
    return n


def _space_of(space: str) -> str:
    return space.split("::")[0].lstrip(".")


# a ``.reg .T %r<N>`` declaration of more registers than this is resolved name by name when
# an instruction names one (``Scope.ranges``, ``Registers``), not declared up front: PTX
# registers are virtual, and ``%r<100000000>`` is legal PTX that costs nothing until used
EAGER_REGISTERS = 4096
MAX_LOCAL_BYTES = 512 * 1024     # local memory per thread (CUDA: 512 KB, sm_20 and later)


def _range_index(name: str, prefix: str, count: int):
    """``i`` when ``name`` is ``prefix`` followed by ``i`` in ``0 .. count-1`` (no leading
    zeros), else None."""
    digits = name[len(prefix):]
    if not name.startswith(prefix) or not digits.isdigit() or (len(digits) > 1 and
                                                                digits[0] == "0"):
        return None
    i = int(digits)
    return i if i < count else None


class Scope:
    """Names visible at a point of a function: registers and symbols, chained to the outer scope.
    ``ranges``: large ``%r<N>`` declarations, ``(prefix, count, key prefix, key suffix)``."""

    __slots__ = ("names", "parent", "ranges")

    def __init__(self, parent=None):
        self.names = {}
        self.parent = parent
        self.ranges = ()

    def get(self, name):
        s = self
        while s is not None:
            v = s.names.get(name)
            if v is not None:
                return v
            for prefix, count, kp, suffix in s.ranges:
                if _range_index(name, prefix, count) is not None:
                    return ("reg", kp + name + suffix)
            s = s.parent
        return None


class Registers(dict):
    """``Program.regs``: register key -> ``RegInfo``; the registers of a large ``%r<N>``
    declaration get their entry when first named (``EAGER_REGISTERS``)."""

    def __init__(self):
        super().__init__()
        self.lazy = []              # (key prefix + register prefix, count, suffix, type)

    def _lazy(self, key):
        if isinstance(key, str):
            for head, count, suffix, t in self.lazy:
                if suffix and not key.endswith(suffix):
                    continue
                if _range_index(key[:len(key) - len(suffix)] if suffix else key, head,
                                count) is not None:
                    info = RegInfo(key, t)
                    dict.__setitem__(self, key, info)
                    return info
        return None

    def __missing__(self, key):
        info = self._lazy(key)
        if info is None:
            raise KeyError(key)
        return info

    def __contains__(self, key):
        return dict.__contains__(self, key) or self._lazy(key) is not None

    def get(self, key, default=None):
        v = dict.get(self, key)
        return v if v is not None else (self._lazy(key) or default)


class Program:
    """A decoded entry function plus its callees, ready to execute."""

    def __init__(self, module, entry: str):
        self.module = module
        try:
            fn = module.function(entry)
        except KeyError:
            names = ", ".join(f.name for f in module.functions if f.kind == ".entry") or "none"
            raise InterpreterError(f"no function {entry!r} in the module (entries: {names})") from None
        if fn.body is None:
            raise InterpreterError(f"function {entry!r} is only declared, it has no body")
        self.entry = fn
        self.name = entry
        self.regs: dict[str, RegInfo] = Registers()
        self.code: list[Decoded] = []
        self.funcs: dict[str, tuple] = {}        # name -> (start pc, Function, Scope)
        self.labels: dict[str, dict] = {}        # function name -> {label: pc}
        self.shared_vars: list[Var] = []
        self.local_vars: list[Var] = []
        self.global_vars: list[Var] = []
        self.const_vars: list[Var] = []
        self.module_syms: dict[str, Var] = {}
        self.local_size = 0
        self.extern_shared = False
        self.uses_cluster = False
        self.uses_grid_features = False
        # derived once, made on first use by the module named
        self.stack_base = None                   # stack: where alloca's stack starts (bytes)
        self.loops: dict = {}                    # progress: (head, tail) -> deciding registers
        self.wgmma_regs: set = set()             # wgfence: accumulator / A-fragment keys
        self.ptr_pcs = None                      # provenance: frozenset of pointer-making pcs
        self.orders_ctas = None                  # global_races: some instruction orders CTAs
        self.start_regs = {}                     # setmaxnreg: CTA threads -> each warp's first count
        self.launch_shapes = {}                  # launch: (grid, block, cluster, smem) -> its checks' answer
        self._layout_module()
        self.param_layout, self.param_size = self._layout_params(fn)
        self._pending = []                       # (Decoded, Instruction, Scope) to decode
        self._flatten_function(fn, is_entry=True)
        self._finish_layouts()

    # ------------------------------------------------------------------ module variables
    def _layout_module(self):
        used = self._used_symbols()
        gspace = M.FlatSpace("global", M.GLOBAL_BASE)
        cspace = M.FlatSpace("const", M.CONST_BASE)
        self._shared_off = 0
        for item in self.module.items:
            if not isinstance(item, VarDecl):
                continue
            sp = _space_of(item.space)
            if sp == "shared":
                if item.name in used:
                    self._add_shared(item)
            elif sp in ("global", "const"):
                data = self._init_bytes(item)
                space = gspace if sp == "global" else cspace
                al = space.add(data, f"{sp} variable {item.name!r}", align=max(item.align, item.type.nbytes, 16),
                               readonly=(sp == "const"))
                v = Var(item.name, sp, al.base, len(data), item.align, item)
                v.decl = (item, data)
                (self.global_vars if sp == "global" else self.const_vars).append(v)
                self.module_syms[item.name] = v
        self._gspace_template = gspace

    def _used_symbols(self):
        used = set()

        def scan_ops(ops):
            for o in ops:
                t = type(o)
                if t is Sym:
                    used.add(o.name)
                elif t is Addr and isinstance(o.base, Sym):
                    used.add(o.base.name)
                elif t in (Vec, ParenList):
                    scan_ops(o.items)

        def scan(body):
            for s in body:
                if isinstance(s, Instruction):
                    scan_ops(s.operands)
                elif isinstance(s, Block):
                    scan(s.body)
        for f in self.module.functions:
            if f.body:
                scan(f.body)
        return used

    def _add_shared(self, d: VarDecl):
        if d.linkage == ".extern" or (d.dims and d.dims[-1] is None):
            self.extern_shared = True
            v = Var(d.name, "shared", None, 0, max(d.align, 16), d)
            self.shared_vars.append(v)
            self.module_syms[d.name] = v
            return v
        align = max(d.align, d.type.nbytes, 1)
        off = -(-self._shared_off // align) * align
        size = _var_size(d)
        v = Var(d.name, "shared", off, size, align, d)
        self._shared_off = off + size
        self.shared_vars.append(v)
        self.module_syms[d.name] = v
        return v

    def _init_bytes(self, d: VarDecl) -> np.ndarray:
        size = max(_var_size(d), 0)
        data = np.zeros(max(size, 1) if size else 1, np.uint8)[:size] if size else np.zeros(0, np.uint8)
        if d.init is None:
            return np.zeros(size, np.uint8)
        flat = []

        def walk(v):
            if isinstance(v, (tuple, list)):
                for x in v:
                    walk(x)
            else:
                flat.append(str(v))
        walk(d.init)
        t = d.type
        dt = np_dtype(t)
        vals = []
        for text in flat:
            try:
                vals.append(imm_value(text, t))
            except (ValueError, TypeError):
                # an address initializer: generic(sym) or sym
                nm = text.replace("generic(", "").rstrip(")")
                v = self.module_syms.get(nm)
                vals.append(dt.type(v.addr if v is not None and v.addr is not None else 0))
        arr = np.array(vals, dtype=dt).view(np.uint8)
        if size == 0:
            return arr.copy()
        data = np.zeros(size, np.uint8)
        data[: min(size, len(arr))] = arr[: size]
        return data

    def _finish_layouts(self):
        static = self._shared_off
        dyn_align = max([v.align for v in self.shared_vars if v.addr is None] + [16])
        self.dynamic_shared_offset = -(-static // dyn_align) * dyn_align
        for v in self.shared_vars:
            if v.addr is None:
                v.addr = self.dynamic_shared_offset
        self.static_shared_size = static
        self.local_size = -(-self.local_size // 16) * 16

    def _layout_params(self, fn: Function):
        layout = []
        off = 0
        for p in fn.params:
            size = p.type.nbytes * (p.array or 1)
            align = max(p.align, p.type.nbytes if not p.array else max(p.align, 1), 1)
            off = -(-off // align) * align
            layout.append((p, off, size))
            off += size
        return layout, off

    # ------------------------------------------------------------------ functions
    def _flatten_function(self, fn: Function, is_entry: bool):
        start = len(self.code)
        prefix = "" if is_entry else fn.name + "::"
        scope = Scope()
        self.funcs[fn.name] = (start, fn, scope)
        if is_entry:
            for p, off, size in self.param_layout:
                scope.names[p.name] = ("sym", ("param", M.PARAM_BASE + off))
        else:
            for p in list(fn.ret_params) + list(fn.params):
                if p.space == ".reg":
                    key = prefix + p.name
                    self.regs[key] = RegInfo(key, p.type)
                    scope.names[p.name] = ("reg", key)
                else:
                    size = p.type.nbytes * (p.array or 1)
                    scope.names[p.name] = ("sym", ("plocal", self._alloc_local(size, max(p.align, p.type.nbytes))))
        labels = {}
        block_counter = [0]
        callees = []
        last_label = [None]
        self.branchtargets = getattr(self, "branchtargets", {})

        def walk(body, sc, depth):
            for s in body:
                t = type(s)
                if t is RawDirective and s.name == ".branchtargets" and last_label[0] is not None:
                    names = [x.strip() for a in s.args for x in str(a).split(",") if x.strip()]
                    self.branchtargets[(fn.name, last_label[0])] = names
                    continue
                if t is Label:
                    last_label[0] = s.name
                if t is Instruction:
                    d = Decoded(len(self.code), s, fn.name)
                    self.code.append(d)
                    self._pending.append((d, s, sc))
                    if s.opcode == "call":
                        for o in s.operands:
                            if isinstance(o, Sym):
                                callees.append(o.name)
                elif t is Label:
                    # a label is visible in its block and the blocks inside it: CUDA's inline asm
                    # repeats `waitLoop:` in a { } block per asm statement
                    sc.names[s.name] = ("sym", ("label", len(self.code)))
                    labels.setdefault(s.name, len(self.code))
                elif t is RegDecl:
                    self._declare_regs(s, sc, prefix, depth, block_counter[0])
                elif t is VarDecl:
                    self._declare_var(s, sc)
                elif t is Block:
                    block_counter[0] += 1
                    walk(s.body, Scope(sc), depth + 1)
        walk(fn.body, scope, 0)
        # an implicit return at the end of every function
        end = Instruction("ret", (), ())
        d = Decoded(len(self.code), end, fn.name)
        self.code.append(d)
        self._pending.append((d, end, scope))
        for name, pc in labels.items():
            scope.names.setdefault(name, ("sym", ("label", pc)))
        self.labels[fn.name] = labels
        for c in callees:
            if c in self.funcs:
                continue
            try:
                callee = self.module.function(c)
            except KeyError:
                continue
            if callee.body is None or callee.kind == ".entry":
                continue
            self._flatten_function(callee, is_entry=False)

    def _declare_regs(self, d: RegDecl, sc: Scope, prefix: str, depth: int, block: int):
        if d.count and d.count > EAGER_REGISTERS and not d.vector:
            suffix = f"#{block}" if depth > 0 else ""
            sc.ranges = sc.ranges + ((d.prefix, d.count, prefix, suffix),)
            self.regs.lazy.append((prefix + d.prefix, d.count, suffix, d.type))
            return
        if d.count:
            names = [f"{d.prefix}{i}" for i in range(d.count)]
        else:
            names = list(d.names)
        for nm in names:
            key = prefix + nm
            if depth > 0 and key in self.regs:
                key = f"{key}#{block}"
            if d.vector:
                raise InterpreterError(f"vector registers (.reg .v{d.vector}) are not supported: {nm}")
            self.regs[key] = RegInfo(key, d.type)
            sc.names[nm] = ("reg", key)

    def _alloc_local(self, size, align, what: str = "a .local variable"):
        align = max(align, 1)
        off = -(-self.local_size // align) * align
        if off + size > MAX_LOCAL_BYTES:
            raise InterpreterError(
                f"{what} of {size} bytes takes the local memory of function {self.name!r} to "
                f"{off + size} bytes per thread; CUDA allows at most {MAX_LOCAL_BYTES} bytes "
                f"(512 KB) of local memory per thread on every target: keep large arrays in "
                f"global or shared memory")
        self.local_size = off + size
        return off

    def _declare_var(self, d: VarDecl, sc: Scope):
        sp = _space_of(d.space)
        if sp == "shared":
            v = self._add_shared(d)
            sc.names[d.name] = ("var", v)
        elif sp in ("local", "param"):
            off = self._alloc_local(_var_size(d), max(d.align, d.type.nbytes),
                                    f".{sp} variable {d.name!r}")
            v = Var(d.name, "local" if sp == "local" else "plocal", off, _var_size(d), d.align, d)
            self.local_vars.append(v)
            sc.names[d.name] = ("sym", (v.space, off))
        else:
            raise InterpreterError(f"{d.space} variable {d.name!r} inside a function body is not supported")

    # ------------------------------------------------------------------ lookups
    def has_reg(self, name, scope) -> bool:
        e = scope.get(name) if scope is not None else None
        return e is not None and e[0] == "reg"

    def reg(self, name, scope) -> RegInfo:
        e = scope.get(name) if scope is not None else None
        if e is None or e[0] != "reg":
            if name in self.regs:
                return self.regs[name]
            raise InterpreterError(f"register {name} is not declared")
        return self.regs[e[1]]

    def symbol(self, name, scope):
        """(space, address) of a named symbol, or None."""
        e = scope.get(name) if scope is not None else None
        if e is not None:
            if e[0] == "sym":
                return e[1]
            if e[0] == "var":
                return (e[1].space, e[1].addr)
        v = self.module_syms.get(name)
        if v is not None:
            return (v.space, v.addr)
        if name in self.funcs:
            return ("func", name)
        return None

    def symbol_address(self, name, offset=0, scope=None):
        r = self.symbol(name, scope)
        if r is None:
            return None
        space, addr = r
        if space in ("label", "func"):
            return r
        return space, addr + offset

    def label(self, fname, name, scope=None):
        """The pc of label ``name`` as seen from ``scope`` (the innermost block that declares it),
        else the function's first label of that name."""
        if scope is not None:
            v = scope.get(name)
            if v is not None and v[0] == "sym" and v[1][0] == "label":
                return v[1][1]
        return self.labels.get(fname, {}).get(name)

    def shared_layout(self, dyn: int):
        out = [(v.name, v.addr, v.size) for v in self.shared_vars if v.decl is not None and v.size]
        for v in self.shared_vars:
            if v.size == 0:
                out.append((v.name + " (dynamic)", v.addr, dyn))
        return out


def addr_parts(prog, op, scope):
    """(base getter or None, constant address, symbol space or None) of an address operand."""
    from ..state.operands import reader
    from ...types import u64
    if not isinstance(op, Addr):
        raise InterpreterError(f"expected an address operand [..], got {op!r}")
    b = op.base
    if b is None:
        return None, op.offset, None
    if isinstance(b, Sym):
        r = prog.symbol_address(b.name, b.offset, scope)
        if r is None:
            raise InterpreterError(f"unknown symbol {b.name!r} in address")
        return None, r[1] + op.offset, r[0]
    if isinstance(b, Imm):
        return None, int(imm_value(b.text, u64)) + op.offset, None
    return reader(prog, b, u64, scope), op.offset, None
