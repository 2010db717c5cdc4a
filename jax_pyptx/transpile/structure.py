"""Recover structured control flow from a function body's labels and branches.

The result is a tree of nodes the code generator prints as Python:

* ``("stmt", s)``                      any statement (instruction, declaration, pragma)
* ``("block", nodes)``                 a nested ``{ }`` scope
* ``("if", id, bra, then)``            ``@g bra L; then; L:``
* ``("ifelse", id, bra, then, id2, bra2, els)``  ``@g bra L; then; bra M; L: els; M:``
* ``("loop", id, body, exit_owned)``   ``H: body`` where the last node of ``body`` is the
                                       back edge (a ``bra H``); ``exit_owned`` when the label
                                       right after it belongs to the loop (``break``)
* ``("label", name)``                  a label kept by name (targets of unstructured
                                       branches, or named by non-branch instructions); a
                                       name defined in several scopes gets ``_1``, ``_2``...
* ``("goto", bra, owner, name)``       a branch: ``owner`` is ``None`` (to the label ``name``)
                                       or ``(structure_id, role)`` with role ``"end"``,
                                       ``"head"`` or ``"exit"``

Rules: a region is structured only when nothing outside it branches into it and every
branch to its labels sits inside it (so the Python label object exists when used); a label
also mentioned by a non-branch instruction (``brx.idx``, call prototypes) keeps its name.
Labels nothing refers to are dropped. ``.loc`` statements are dropped (the transpiled file
is its own source). Anything else becomes explicit labels and ``ptx.bra`` — always correct,
only less pretty.
"""
from __future__ import annotations

from ..ir.nodes import Block, Instruction, Label, Loc, RawDirective, Sym

__all__ = ["structure", "label_refs"]


def _bra_target(s):
    """The label name a plain ``bra`` goes to, else None."""
    if type(s) is Instruction and s.opcode == "bra" and len(s.operands) == 1 \
            and type(s.operands[0]) is Sym and s.operands[0].offset == 0 \
            and set(s.modifiers) <= {".uni"}:
        return s.operands[0].name
    return None


def _syms(o, out):
    t = type(o).__name__
    if t == "Sym":
        out.add(o.name)
    elif t == "Addr":
        if o.base is not None:
            _syms(o.base, out)
        for e in o.extra:
            _syms(e, out)
    elif t in ("Vec", "ParenList"):
        for i in o.items:
            _syms(i, out)
    elif t == "PredPair":
        _syms(o.first, out)
        _syms(o.second, out)


class _Info:
    """Where every label is defined and referenced, as paths of (list id, index).

    Labels are scoped like PTX's: a label defined in a ``{ }`` block is local to it (inline
    asm blocks reuse names such as ``waitLoop``), so a label is keyed by
    ``(id of the defining list, name)`` and a reference resolves to the innermost enclosing
    block that defines the name.
    """

    def __init__(self, body: list):
        self.defs: dict = {}          # key -> path
        self.refs: dict = {}          # key -> [path]  (plain bra references)
        self.named: set = set()       # keys referenced otherwise: keep the label
        self.key_of: dict = {}        # id(bra instruction) -> key
        self.local: dict = {}         # list id -> {name}
        self._defs(body)
        self._walk(body, (), [])
        self.explicit = {}
        count: dict = {}
        for key in self.defs:
            count[key[1]] = count.get(key[1], 0) + 1
        seen: dict = {}
        for key in self.defs:
            name = key[1]
            if count[name] > 1:
                n = seen.get(name, 0)
                seen[name] = n + 1
                self.explicit[key] = name if n == 0 else f"{name}_{n}"
            else:
                self.explicit[key] = name

    def _defs(self, stmts):
        names = self.local.setdefault(id(stmts), set())
        for s in stmts:
            if type(s) is Label:
                names.add(s.name)
            elif type(s) is Block:
                self._defs(s.body)

    def resolve(self, name, stack):
        for lid in reversed(stack):
            if name in self.local.get(lid, ()):
                return (lid, name)
        return None

    def _walk(self, stmts, path, stack):
        stack = stack + [id(stmts)]
        for i, s in enumerate(stmts):
            here = path + ((id(stmts), i),)
            t = type(s)
            if t is Block:
                self._walk(s.body, here, stack)
            elif t is Label:
                self.defs[(id(stmts), s.name)] = here
            elif t is Instruction:
                tgt = _bra_target(s)
                key = self.resolve(tgt, stack) if tgt is not None else None
                if key is not None:
                    self.refs.setdefault(key, []).append(here)
                    self.key_of[id(s)] = key
                else:
                    names: set = set()
                    for o in s.operands:
                        _syms(o, names)
                    for n in names:
                        k = self.resolve(n, stack)
                        if k is not None:
                            self.named.add(k)
            elif t is RawDirective:
                for a in s.args:
                    for w in str(a).replace(",", " ").replace("(", " ").replace(")", " ").split():
                        k = self.resolve(w, stack)
                        if k is not None:
                            self.named.add(k)

    @staticmethod
    def index_in(path, lid):
        for l_, i in path:
            if l_ == lid:
                return i
        return None

    def referenced(self, key) -> bool:
        return key in self.named or bool(self.refs.get(key))


def label_refs(body: list) -> _Info:
    return _Info(body)


def structure(body: list) -> list:
    """The structured tree for a function body (see the module docstring)."""
    info = _Info(body)
    st = _Structurer(info)
    return st.build(_clean(body), 0, None)


def _clean(stmts: list) -> list:
    """Drop ``.loc`` lines (in place of the list, recursively, keeping Block identity)."""
    out = []
    for s in stmts:
        if type(s) is Loc:
            continue
        if type(s) is Block:
            s = Block(_clean(s.body))
        out.append(s)
    return out


class _Structurer:
    def __init__(self, info: _Info):
        self.info = info
        self.ids = 0

    # the label info was computed on the uncleaned body; recompute on the cleaned one
    def build(self, stmts: list, lo: int, hi: int | None) -> list:
        self.info = _Info(stmts)
        self.owner: dict = {}
        return self._build(stmts, 0, len(stmts))

    def _all_refs_within(self, lid, name, a, b) -> bool:
        """Every reference to ``name`` sits at a top-level index in [a, b) of list ``lid``."""
        if name in self.info.named:
            return False
        for path in self.info.refs.get(name, ()):
            i = self.info.index_in(path, lid)
            if i is None or not a <= i < b:
                return False
        return True

    def _no_entry(self, stmts, lid, a, b) -> bool:
        """No label defined at top-level indices [a, b) (or nested there) is referenced from
        outside [a, b)."""
        for name, dpath in self.info.defs.items():
            i = self.info.index_in(dpath, lid)
            if i is not None and a <= i < b and self.info.referenced(name):
                if not self._all_refs_within(lid, name, a, b):
                    return False
        return True

    def _label_at(self, stmts, k, hi):
        if k < hi and type(stmts[k]) is Label:
            return stmts[k].name
        return None

    def _new_id(self):
        self.ids += 1
        return self.ids

    def _build(self, stmts: list, lo: int, hi: int) -> list:
        lid = id(stmts)
        info = self.info
        out = []
        i = lo
        while i < hi:
            s = stmts[i]
            t = type(s)
            if t is Label:
                node = self._try_loop(stmts, lid, i, hi)
                if node is not None:
                    out.append(node[0])
                    i = node[1]
                    continue
                key = (lid, s.name)
                if info.referenced(key):
                    out.append(("label", info.explicit[key]))
                i += 1
                continue
            if t is Block:
                out.append(("block", self._build(s.body, 0, len(s.body))))
                i += 1
                continue
            tgt = info.key_of.get(id(s)) if t is Instruction else None
            if tgt is not None and s.guard is not None:
                node = self._try_if(stmts, lid, i, hi, tgt)
                if node is not None:
                    out.append(node[0])
                    i = node[1]
                    continue
            if tgt is not None:
                out.append(("goto", s, self.owner.get(tgt), info.explicit[tgt]))
            else:
                out.append(("stmt", s))
            i += 1
        return out

    def _try_loop(self, stmts, lid, i, hi):
        name = (lid, stmts[i].name)
        info = self.info
        if name in info.named or not info.refs.get(name):
            return None
        idx = [info.index_in(p, lid) for p in info.refs[name]]
        if any(j is None or not i < j < hi for j in idx):
            return None
        j = max(idx)
        back = stmts[j]
        if info.key_of.get(id(back)) != name:
            return None          # the last reference is nested: not a simple back edge
        if not self._no_entry(stmts, lid, i + 1, j + 1):
            return None
        sid = self._new_id()
        self.owner[name] = (sid, "head")
        exit_name = self._label_at(stmts, j + 1, hi)
        exit_name = (lid, exit_name) if exit_name is not None else None
        exit_owned = False
        if exit_name is not None and info.refs.get(exit_name) and \
                self._all_refs_within(lid, exit_name, i + 1, j + 1):
            exit_owned = True
            self.owner[exit_name] = (sid, "exit")
        body = self._build(stmts, i + 1, j)
        body.append(("goto", back, (sid, "head"), info.explicit[name]))
        nxt = j + 1 + (1 if exit_owned else 0)
        return ("loop", sid, body, exit_owned), nxt

    def _try_if(self, stmts, lid, i, hi, tgt):
        info = self.info
        d = info.defs.get(tgt)
        k = info.index_in(d, lid) if d is not None and tgt[0] == lid else None
        if k is None or not i < k < hi or type(stmts[k]) is not Label or stmts[k].name != tgt[1]:
            return None
        # all references to the end label from inside the region, the first being this one
        if not self._all_refs_within(lid, tgt, i, k):
            return None
        if not self._no_entry(stmts, lid, i + 1, k):
            return None
        sid = self._new_id()
        # if-else: the then-part ends with an unconditional bra M, M after the else-part
        last = stmts[k - 1] if k - 1 > i else None
        m_name = info.key_of.get(id(last)) if type(last) is Instruction and last.guard is None \
            else None
        if m_name is not None and m_name != tgt and m_name[0] == lid:
            dm = info.defs.get(m_name)
            m = info.index_in(dm, lid) if dm is not None else None
            if m is not None and k < m < hi and type(stmts[m]) is Label \
                    and stmts[m].name == m_name[1] \
                    and self._refs_only(lid, m_name, k - 1, k + 1, m) \
                    and self._no_entry(stmts, lid, k + 1, m):
                sid2 = self._new_id()
                self.owner[tgt] = (sid, "end")
                then = self._build(stmts, i + 1, k - 1)
                self.owner.pop(tgt, None)
                self.owner[m_name] = (sid2, "end")
                els = self._build(stmts, k + 1, m)
                return ("ifelse", sid, stmts[i], then, sid2, last, els), m + 1
        self.owner[tgt] = (sid, "end")
        then = self._build(stmts, i + 1, k)
        return ("if", sid, stmts[i], then), k + 1

    def _refs_only(self, lid, name, first, a, b) -> bool:
        """References to ``name``: the one at ``first`` plus any inside [a, b)."""
        if name in self.info.named:
            return False
        for path in self.info.refs.get(name, ()):
            j = self.info.index_in(path, lid)
            if j is None:
                return False
            if j != first and not a <= j < b:
                return False
            if j == first and len(path) != len(self.info.defs[name]):
                return False     # a branch nested in the last then-statement
        return True
