"""The ISA coverage table with the interpreter's column: which forms ``interpret`` runs.

``python -m jax_pyptx.interpret.coverage`` prints ``docs/isa_coverage.md``. The "interpreted"
column is computed, never listed by hand: ``yes`` where a handler is registered for the form's
instruction (``registry``), ``no-op`` where the ISA table marks the form ``cpu="nop"``, empty
where the interpreter raises when the instruction is executed.
"""
from __future__ import annotations

from ..isa import TABLE
from ..isa import coverage as _isa_coverage
from .scheduler.handlers import HANDLERS      # importing dispatch registers every family's handlers


def interpreted(form) -> str:
    """``"no-op"``, ``"yes"`` or ``""`` for one form of the table."""
    if form.cpu == "nop":
        return "no-op"
    return "yes" if form.name in HANDLERS else ""


def coverage_table() -> str:
    forms = [f for fs in TABLE.values() for f in fs]
    runs = sum(1 for f in forms if interpreted(f) == "yes")
    nops = sum(1 for f in forms if interpreted(f) == "no-op")
    note = (f"The interpreter runs {runs + nops} of the {len(forms)} forms ({nops} of them as "
            f"no-ops: fences, prefetches and scheduling hints, marked `cpu=\"nop\"` in the "
            f"table); the others raise when executed.")
    return _isa_coverage.coverage_table(columns=(("interpreted", interpreted),), notes=(note,),
                                        generator="python -m jax_pyptx.interpret.coverage")


def main(argv=None) -> int:
    print(coverage_table(), end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
