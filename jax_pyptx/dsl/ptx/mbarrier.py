"""``ptx.mbarrier``: asynchronous transaction barriers in shared memory.

``ptx.mbarrier.init(bar[0], 1)``; ``state = ptx.mbarrier.arrive(bar[0])``;
``ptx.mbarrier.arrive_expect_tx(bar[0], 4096)``; ``ptx.mbarrier.expect_tx``,
``complete_tx``; ``done = ptx.mbarrier.try_wait_parity(bar[0], phase)``;
``ptx.mbarrier.wait(bar[0], phase)`` loops on try_wait.parity (label + ``@!p bra``).
Options: ``sem`` (release/relaxed for arrivals, acquire/relaxed for waits), ``scope``
(cta/cluster), ``remote=True`` (a peer CTA's barrier: ``.shared::cluster``, no state)."""
from __future__ import annotations

from ...ir.nodes import Sink
from ...types import b64, pred as pred_t, u32
from ._wrap import addr as _addr, build_mods, choice, emit, new


def _bar(x, fn):
    return _addr(x, fn, "bar")


def init(bar, count, *, pred=None):
    """``mbarrier.init.shared::cta.b64 [bar], count``."""
    emit("mbarrier.init.shared::cta.b64", (_bar(bar, "ptx.mbarrier.init"), count), pred)


def inval(bar, *, pred=None):
    """``mbarrier.inval.shared.b64 [bar]``."""
    emit("mbarrier.inval.shared.b64", (_bar(bar, "ptx.mbarrier.inval"),), pred)


def _arrive(fn, name, bar, extra, *, expect_tx=None, count=None, sem=None, scope=None,
            remote=False, nocomplete=False, pred=None, space=".shared::cta"):
    kw = {"sem": sem and choice(fn, "sem", sem, (".release", ".relaxed")),
          "scope": scope and choice(fn, "scope", scope, (".cta", ".cluster")),
          "space": ".shared::cluster" if remote else space,
          "type": ".b64", "expect_tx": expect_tx is not None,
          "nocomplete": nocomplete}
    mods = build_mods(fn, name, kw)
    state = Sink() if remote else new(b64)
    ops = [state, _bar(bar, fn)] + extra
    emit(name + "".join(mods), ops, pred)
    return None if remote else state


def arrive(bar, count=None, *, sem=None, scope=None, remote=False, pred=None):
    """``mbarrier.arrive{.sem}{.scope}.shared.b64 state, [bar]{, count}``; returns the phase
    state (None for a remote arrive, ``.shared::cluster``, which writes ``_``)."""
    return _arrive("ptx.mbarrier.arrive", "mbarrier.arrive", bar,
                   [count] if count is not None else [], sem=sem, scope=scope, remote=remote,
                   pred=pred, space=".shared")


def arrive_expect_tx(bar, tx_bytes, *, sem=None, scope=None, remote=False, pred=None):
    """``mbarrier.arrive.expect_tx{.sem}{.scope}{.space}.b64 state, [bar], tx_bytes``."""
    return _arrive("ptx.mbarrier.arrive_expect_tx", "mbarrier.arrive", bar, [tx_bytes],
                   expect_tx=tx_bytes, sem=sem, scope=scope, remote=remote, pred=pred)


def arrive_nocomplete(bar, count, *, pred=None):
    """``mbarrier.arrive.noComplete.shared::cta.b64 state, [bar], count``."""
    return _arrive("ptx.mbarrier.arrive_nocomplete", "mbarrier.arrive", bar, [count],
                   nocomplete=True, pred=pred)


def arrive_drop(bar, count=None, *, sem=None, scope=None, remote=False, expect_tx=None,
                pred=None):
    """``mbarrier.arrive_drop{.expect_tx}...b64 state, [bar]{, count}``: arrive and leave the
    barrier's expected count."""
    extra = [expect_tx] if expect_tx is not None else ([count] if count is not None else [])
    return _arrive("ptx.mbarrier.arrive_drop", "mbarrier.arrive_drop", bar, extra,
                   expect_tx=expect_tx, sem=sem, scope=scope, remote=remote, pred=pred)


def arrive_drop_nocomplete(bar, count, *, pred=None):
    """``mbarrier.arrive_drop.noComplete.shared::cta.b64 state, [bar], count``."""
    return _arrive("ptx.mbarrier.arrive_drop_nocomplete", "mbarrier.arrive_drop", bar, [count],
                   nocomplete=True, pred=pred)


def _tx(name, fn, bar, tx_bytes, sem, scope, remote, pred, space=".shared::cta"):
    kw = {"sem": sem and choice(fn, "sem", sem, (".relaxed",)),
          "scope": scope and choice(fn, "scope", scope, (".cta", ".cluster")),
          "space": ".shared::cluster" if remote else space, "type": ".b64"}
    mods = build_mods(fn, name, kw)
    emit(name + "".join(mods), (_bar(bar, fn), tx_bytes), pred)


def expect_tx(bar, tx_bytes, *, sem=None, scope=None, remote=False, pred=None):
    """``mbarrier.expect_tx{.relaxed}{.scope}.shared.b64 [bar], tx_bytes``."""
    _tx("mbarrier.expect_tx", "ptx.mbarrier.expect_tx", bar, tx_bytes, sem, scope, remote, pred,
        ".shared")


def complete_tx(bar, tx_bytes, *, sem=None, scope=None, remote=False, pred=None):
    """``mbarrier.complete_tx{.relaxed}{.scope}{.space}.b64 [bar], tx_bytes``."""
    _tx("mbarrier.complete_tx", "ptx.mbarrier.complete_tx", bar, tx_bytes, sem, scope, remote,
        pred)


def _wait(name, fn, bar, value, parity, hint, sem, scope, pred, space=".shared::cta"):
    kw = {"parity": parity, "sem": sem and choice(fn, "sem", sem, (".acquire", ".relaxed")),
          "scope": scope and choice(fn, "scope", scope, (".cta", ".cluster")),
          "space": space, "type": ".b64"}
    mods = build_mods(fn, name, kw)
    done = new(pred_t)
    emit(name + "".join(mods), [done, _bar(bar, fn), value] + ([hint] if hint is not None
                                                                 else []), pred)
    return done


def test_wait(bar, state, *, sem=None, scope=None, pred=None):
    """``mbarrier.test_wait{.sem}{.scope}.shared::cta.b64 done, [bar], state`` (non-blocking)."""
    return _wait("mbarrier.test_wait", "ptx.mbarrier.test_wait", bar, state, False, None, sem,
                 scope, pred)


def test_wait_parity(bar, parity, *, sem=None, scope=None, pred=None):
    """``mbarrier.test_wait.parity... done, [bar], parity``."""
    return _wait("mbarrier.test_wait", "ptx.mbarrier.test_wait_parity", bar, parity, True, None,
                 sem, scope, pred)


def try_wait(bar, phase, *, parity=None, suspend_hint=None, sem=None, scope=None, pred=None):
    """``mbarrier.try_wait{.parity}{.sem}{.scope}.shared::cta.b64 done, [bar], phase{, hint}``
    (potentially blocking for a system-dependent time, or ``suspend_hint`` ns); returns
    ``done``. ``parity`` (default: True, unless ``phase`` is the b64 state ``arrive``
    returned) waits on a phase parity (0/1) rather than a state."""
    from ..values import Register

    if parity is None:
        parity = not (isinstance(phase, Register) and phase.type.bits == 64)
    return _wait("mbarrier.try_wait", "ptx.mbarrier.try_wait", bar, phase, bool(parity),
                 suspend_hint, sem, scope, pred)


def try_wait_parity(bar, parity, *, suspend_hint=None, sem=None, scope=None, pred=None):
    """``mbarrier.try_wait.parity... done, [bar], parity{, hint}``."""
    return _wait("mbarrier.try_wait", "ptx.mbarrier.try_wait_parity", bar, parity, True,
                 suspend_hint, sem, scope, pred)


def pending_count(state, *, out=None, pred=None):
    """``mbarrier.pending_count.b64 count, state``."""
    out = out or new(u32)
    emit("mbarrier.pending_count.b64", (out, state), pred)
    return out


def wait(bar, parity, *, suspend_hint=None, sem=None, scope=None, pred=None):
    """Block until phase ``parity`` of ``bar`` completes. Emits a loop::

        $L_mbar_wait_N:
            mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity;
            @!p bra $L_mbar_wait_N;

    (with ``pred``, the try_wait is guarded by it)."""
    from .. import context
    from ..context import user_loc
    from ...ir.nodes import Guard, Sym

    tr = context.current("ptx.mbarrier.wait")
    head = tr.new_label("mbar_wait")
    tr.place_label(head, user_loc())
    done = try_wait_parity(bar, parity, suspend_hint=suspend_hint, sem=sem, scope=scope,
                           pred=pred)
    tr.labels_used.setdefault(head, user_loc())
    tr.emit("bra", (), (Sym(head),), Guard(done.name, True), user_loc())
    tr.chain = None


from .mbarrier_array import array  # noqa: E402  (ptx.mbarrier.array)

__all__ = ["array", "init", "inval", "arrive", "arrive_expect_tx", "arrive_nocomplete", "arrive_drop",
           "arrive_drop_nocomplete",
           "expect_tx", "complete_tx", "test_wait", "test_wait_parity", "try_wait",
           "try_wait_parity", "pending_count", "wait"]
