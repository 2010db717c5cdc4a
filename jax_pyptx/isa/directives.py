"""The PTX directives and special registers a module may use, where, and from which target.

Facts from the PTX ISA ("Directives", "Special Registers"), each checked against ptxas (CUDA
13.0) in ``tests/test_parse_rejects.py``: ptxas refuses a directive it does not know ("syntax
error"), one of the cluster directives or special registers under a target below sm_90
("Feature ... requires .target sm_90 or higher"), and ``%aggr_smem_size`` below PTX ISA 8.1.
The parser (``text.parser.parse`` with ``check=True``) reads these tables; ``check_specials``
is the special-register half of ``isa.module_check``.
"""
from __future__ import annotations

# ``.name ...;`` statements at module scope the parser keeps as RawDirective (variables,
# functions, .file and .section have their own records)
MODULE_STATEMENTS = frozenset({".pragma", ".alias"})

# ``.name ...;`` statements inside a function body kept as RawDirective (a call's prototype
# and the branch / call target lists, each after a label); .reg, .loc, .pragma and the
# variables have their own records
BODY_STATEMENTS = frozenset({".callprototype", ".calltargets", ".branchtargets"})

# function header directives (between the parameter list and the body)
FUNCTION_DIRECTIVES = frozenset({
    ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".noreturn",
    ".pragma", ".reqnctapercluster", ".explicitcluster", ".maxclusterrank",
    ".blocksareclusters", ".abi_preserve", ".abi_preserve_control",
})

# header directives that need a newer target: name -> minimum sm
FUNCTION_DIRECTIVE_MIN_SM = {
    ".reqnctapercluster": 90, ".explicitcluster": 90, ".maxclusterrank": 90,
    ".blocksareclusters": 90,
}

# special registers that need a newer target or PTX ISA version: the name without its
# ``.x/.y/.z`` -> (minimum sm, minimum PTX ISA version)
SPECIAL_MIN = {
    "%clusterid": (90, (7, 8)), "%nclusterid": (90, (7, 8)),
    "%cluster_ctaid": (90, (7, 8)), "%cluster_nctaid": (90, (7, 8)),
    "%cluster_ctarank": (90, (7, 8)), "%cluster_nctarank": (90, (7, 8)),
    "%is_explicit_cluster": (90, (7, 8)), "%aggr_smem_size": (90, (8, 1)),
}


def special_need(name: str):
    """``(min sm, min PTX version)`` special register ``name`` needs, or None."""
    return SPECIAL_MIN.get(name.split(".", 1)[0])
