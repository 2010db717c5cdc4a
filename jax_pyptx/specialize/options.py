"""The options of a kernel call, in one place: :class:`CallOptions` (names, types, defaults),
which entry point takes which (:func:`option_names`), their checks (:func:`check_options`) and
the one merge of a call's options over those ``configure()`` attached (:func:`merge_options`).
No JAX here: ``Kernel.interpret``, the JAX runtime and the PyTorch runtime all read it.

The body of :class:`CallOptions` is the table: one line per option with its default, the entry
points that take it and its check (``_opt(default, takes, check)``), and a comment saying what
it is. ``takes`` is a string of letters: C for ``configure(kernel, ...)`` (JAX and PyTorch
calls read it), J for a JAX call (``kernel(*arrays, ...)``, ``ptx_call``), I for
``kernel.interpret``. A call's option given as None is not given: the configured value (else
the default) applies.

Examples:
    >>> from jax_pyptx.specialize.options import merge_options, option_names
    >>> "schedule" in option_names("interpret"), "covers" in option_names("interpret")
    (True, False)
    >>> merge_options({"max_steps": 100}, {"sanitize": "strict"}).max_steps
    100
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..errors import SpecializationError
from .dims import dim3

__all__ = ["CallOptions", "DEFAULT", "option_names", "split_options", "check_options",
           "check_schedule", "merge_options", "check_independent", "AXES"]

AXES = "xyz"


# ----------------------------------------------------------------------------- checks
def _grid(kernel, grid):
    return grid if grid is None or callable(grid) else dim3(grid, "ptx_call grid")


def _aliases(kernel, aliases) -> tuple:
    return tuple(sorted((int(i), int(o)) for i, o in dict(aliases or {}).items()))


def check_independent(kernel, independent) -> tuple:
    """``independent`` as a tuple of ``kernel``'s shape variables (others are an error)."""
    for s in independent or ():
        if s not in kernel.shape_vars:
            raise SpecializationError(
                f"kernel {kernel.name!r}: independent dim {s!r} is not a shape variable; "
                f"shape variables: {', '.join(kernel.shape_vars) or 'none'}")
    return tuple(independent or ())


def _covers(kernel, covers) -> tuple:
    out = []
    for sym, v in dict(covers or {}).items():
        if sym not in kernel.shape_vars:
            raise SpecializationError(f"kernel {kernel.name!r}: covers names {sym!r}, not a "
                                      f"shape variable ({', '.join(kernel.shape_vars)})")
        axis, per = v
        axis = AXES.index(axis) if isinstance(axis, str) else int(axis)
        out.append((sym, axis, int(per)))
    return tuple(out)


def _sanitize(kernel, value):
    from ..interpret.sanitizer.severity import sanitize_mode

    return sanitize_mode(value)


def _timeline(kernel, path):
    from ..interpret.timeline import check_path

    return check_path(path)


def _partial(kernel, sel) -> tuple:
    return kernel._output_indices(sel)         # (0 is output 0, not "none")


def _opt(default, takes: str, check=None, compare: bool = True):
    """One option: its default, the entry points that take it (``C``, ``J``, ``I``: see the
    module docstring) and its check (``(kernel, value) -> normalized value``)."""
    return field(default=default, compare=compare, metadata={"takes": takes, "check": check})


@dataclass(frozen=True)
class CallOptions:
    """The options of one call, checked and normalized (hashable: ``CallSpec`` holds them).

    Examples:
        >>> from jax_pyptx.specialize.options import CallOptions
        >>> CallOptions().sanitize, CallOptions().schedule
        (True, 'eager')
    """

    grid: object = _opt(None, "CJ", _grid)          # dim3, or a callable of the shape vars
    interpret: bool | None = _opt(None, "CJ")       # None: by platform (CUDA launches, CPU
                                                    # interprets); True: the interpreter on
                                                    # any platform; False on CPU: the C++
                                                    # launcher (its recording driver table)
    input_output_aliases: tuple = _opt((), "J", _aliases)   # ((input position, output), ...)
    name: str | None = _opt(None, "J")              # names the call in jaxprs and errors
    debug: bool = _opt(False, "J", lambda k, v: bool(v))   # print the specialization, launch
    independent: tuple = _opt((), "CJ", check_independent)  # shape vars split across devices
    covers: tuple = _opt((), "CJ", _covers)         # ((symbol, grid axis, per block), ...)
    backward: object = _opt(None, "CJ", compare=False)   # the backward Kernel or function
                                                    # (the autodiff wrapper's, not the
                                                    # launch's: not hashed, any callable)
    save_outputs: bool = _opt(False, "CJ", lambda k, v: bool(v))   # backward gets outputs
    sanitize: bool | str = _opt(True, "JI", _sanitize)   # the interpreter's sanitizer mode
    max_steps: int | None = _opt(None, "CJI", lambda k, v: int(v))  # instructions per batch
    timeout: float | None = _opt(None, "CJI", lambda k, v: float(v))   # seconds of a launch
    timeline: str | None = _opt(None, "CJI", _timeline)   # where the run's trace is written
    partial_outputs: tuple = _opt((), "JI", _partial)    # indices of outputs written in part
    schedule: str = _opt("eager", "CJI")            # when asynchronous work completes
    seed: int | None = _opt(None, "CJI")            # the seed of schedule="random"

    def interpreter_kw(self) -> dict:
        """The keywords of ``interpret.launch`` these options set (``partial_outputs`` is
        the host launch's to translate into buffer positions).

        Examples:
            >>> from jax_pyptx.specialize.options import CallOptions
            >>> sorted(CallOptions(timeout=5.0).interpreter_kw().items())[-1]
            ('timeout', 5.0)
        """
        return dict(sanitize=self.sanitize, max_steps=self.max_steps, timeout=self.timeout,
                    timeline=self.timeline, schedule=self.schedule, seed=self.seed)


DEFAULT = CallOptions()
_FIELDS = {f.name: f for f in fields(CallOptions)}
_ENTRY = {"configure": "C", "call": "J", "interpret": "I"}


def option_names(entry: str) -> tuple:
    """The options ``entry`` takes (``"configure"``, ``"call"`` or ``"interpret"``), in the
    order of :class:`CallOptions`.

    Examples:
        >>> from jax_pyptx.specialize.options import option_names
        >>> option_names("interpret")
        ('sanitize', 'max_steps', 'timeout', 'timeline', 'partial_outputs', 'schedule', 'seed')
    """
    return _NAMES[entry]


_NAMES = {entry: tuple(n for n, f in _FIELDS.items() if tag in f.metadata["takes"]) for entry, tag in _ENTRY.items()}


def split_options(kw: dict, entry: str) -> tuple:
    """``(options, rest)``: the keywords of ``kw`` that are options of ``entry``
    (:func:`option_names`) and the others (template parameters, shape variables, ...)."""
    names = option_names(entry)
    return ({n: v for n, v in kw.items() if n in names},
            {n: v for n, v in kw.items() if n not in names})


def check_options(kernel, given: dict) -> dict:
    """``given`` options (names known), each checked and normalized. None stays None (not
    given) for an option whose default is None; for the others (``sanitize=None``) it is
    checked like any value. ``schedule`` and ``seed`` are checked together by
    :func:`check_schedule`."""
    out = {}
    for n, v in given.items():
        f = _FIELDS[n]
        check = f.metadata["check"]
        out[n] = v if check is None or (v is None and f.default is None) else check(kernel, v)
    return out


def check_schedule(options: dict) -> None:
    """``schedule`` and ``seed`` of ``options`` checked together (``interpret.schedule``)."""
    if options.get("schedule") is not None or options.get("seed") is not None:
        from ..interpret.scheduler.schedule import make_schedule

        make_schedule(options.get("schedule") or "eager", options.get("seed"))


def merge_options(configured: dict, given: dict) -> CallOptions:
    """The options of a call: ``given`` (checked; None is not given) over ``configured``
    (checked when attached) over the defaults. ``schedule`` and ``seed`` go together: a call
    that gives either replaces both.

    Examples:
        >>> from jax_pyptx.specialize.options import merge_options
        >>> o = merge_options({"timeout": 5.0, "schedule": "random", "seed": 3},
        ...                   {"timeout": None, "schedule": "late"})
        >>> o.timeout, o.schedule, o.seed
        (5.0, 'late', None)
    """
    given = {n: v for n, v in given.items() if v is not None}
    if "schedule" in given or "seed" in given:
        configured = {n: v for n, v in configured.items() if n not in ("schedule", "seed")}
        check_schedule(given)
    return CallOptions(**{**configured, **given})
