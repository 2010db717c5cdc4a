"""mbarrier: init, inval, arrive (count, expect_tx, noComplete, release/relaxed, cta/cluster
scope, remote shared::cluster), arrive_drop, expect_tx, complete_tx, test_wait / try_wait (phase
state or parity, suspend-time hint), pending_count."""
from __future__ import annotations

from .model import Form, G, R

SHARED = G("space", ".shared", ".shared::cta", gate={".shared::cta": (80, (7, 8))})
REMOTE = R("space", ".shared::cluster")
ASEM = G("sem", ".release", ".relaxed", gate={".release": (90, (8, 0)), ".relaxed": (90, (8, 6))})
WSEM = G("sem", ".acquire", ".relaxed", gate={".acquire": (90, (8, 0)), ".relaxed": (90, (8, 6))})
SCOPE = G("scope", ".cta", ".cluster", gate={".cta": (90, (8, 0)), ".cluster": (90, (8, 0))})
B64 = R("type", ".b64")
# arrival counts are 1..2^20-1, a tx-count 0..2^20-1, a phase parity 0 or 1 (PTX ISA "mbarrier")
TX = "s:u32=0..1048575"


def _m(name, groups, ops, sm=80, ptx=(7, 0), doc=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="mbarrier", doc=doc)


FORMS = [
    _m("mbarrier.init", [SHARED, B64], ("m", "s:u32=1..1048575"),
       doc="mbarrier.init.shared.b64 [a], count"),
    _m("mbarrier.inval", [SHARED, B64], ("m",)),
    _m("mbarrier.pending_count", [B64], ("d:u32", "r:b64")),
]
# ptxas reads .expect_tx and .parity with the name: they stay first
EXPECT_TX = R("expect_tx", ".expect_tx", order="pin")
for name in ("mbarrier.arrive", "mbarrier.arrive_drop"):
    FORMS += [
        _m(name, [ASEM, SCOPE, SHARED, B64], ("d_:b64", "m", "s:u32?=1..1048575"),
           doc=f"{name}{{.sem}}{{.scope}}{{.shared}}.b64 state, [a]{{, count}}"),
        _m(name, [ASEM, SCOPE, REMOTE, B64], ("_", "m", "s:u32?=1..1048575"), sm=90, ptx=(8, 0),
           doc=f"{name}{{.sem}}{{.scope}}.shared::cluster.b64 _, [a]{{, count}} (remote)"),
        _m(name, [EXPECT_TX, ASEM, SCOPE, SHARED, B64], ("d_:b64", "m", TX),
           sm=90, ptx=(8, 0), doc=f"{name}.expect_tx... state, [a], tx_count"),
        _m(name, [EXPECT_TX, ASEM, SCOPE, REMOTE, B64], ("_", "m", TX),
           sm=90, ptx=(8, 0), doc=f"{name}.expect_tx....shared::cluster.b64 _, [a], tx_count"),
        _m(name, [R("nocomplete", ".noComplete"),
                  G("sem", ".release", gate={".release": (90, (8, 0))}),
                  G("scope", ".cta", gate={".cta": (90, (8, 0))}),
                  SHARED, B64], ("d_:b64", "m", "s:u32=1..1048575"),
           doc=f"{name}.noComplete.shared.b64 state, [a], count"),
    ]
for name in ("mbarrier.expect_tx", "mbarrier.complete_tx"):
    FORMS.append(_m(name, [G("sem", ".relaxed"), SCOPE,
                           G("space", ".shared", ".shared::cta", ".shared::cluster"), B64],
                    ("m", TX), sm=90, ptx=(8, 0), doc=f"{name}... [a], tx_count"))
FORMS += [
    _m("mbarrier.test_wait", [WSEM, SCOPE, SHARED, B64], ("pd", "m", "r:b64"),
       doc="mbarrier.test_wait.shared.b64 done, [a], state"),
    _m("mbarrier.test_wait", [R("parity", ".parity", order="pin"), WSEM, SCOPE, SHARED, B64],
       ("pd", "m", "s:u32=0|1"), ptx=(7, 1), doc="mbarrier.test_wait.parity... done, [a], parity"),
    _m("mbarrier.try_wait", [WSEM, SCOPE, SHARED, B64], ("pd", "m", "r:b64", "s:u32?"), sm=90,
       ptx=(7, 8), doc="mbarrier.try_wait... done, [a], state{, suspendTimeHint}"),
    _m("mbarrier.try_wait", [R("parity", ".parity", order="pin"), WSEM, SCOPE, SHARED, B64],
       ("pd", "m", "s:u32=0|1", "s:u32?"), sm=90, ptx=(7, 8),
       doc="mbarrier.try_wait.parity... done, [a], parity{, suspendTimeHint}"),
]
