"""Fuzzing the parser with mutations of corpus files (hypothesis).

Each example takes a corpus file and applies a few token- or character-level mutations
(delete, duplicate, swap, insert). The parser must either succeed, in which case the module
prints and re-parses to the same IR, or raise ``ParseError`` with a sane position, or (its
checks of what ptxas refuses) the validator's ``PtxError`` naming a line of the text. Nothing
else may escape.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jax_pyptx import ParseError, PtxError, emit, parse
from jax_pyptx.text.lexer import tokenize

from .corpus import corpus_files, read

# small and medium files keep each example fast; every kind of source is represented
_FILES = [f for f in corpus_files() if len(read(f)) < 60_000]
_TOKENS = {f: [(t.start, t.end) for t in tokenize(read(f))] for f in _FILES}

_INSERTS = [
    "{", "}", "[", "]", "(", ")", ";", ",", ":", "@", "!", "-", "+", "|", "_", "<", ">", "=",
    "%r1", "%p1", "$L__BB0_1", ".reg", ".b32", ".param", ".shared", ".entry", ".func", ".loc",
    ".section", ".file", ".pragma", "ld.global.u32", "bra", "0f3F800000", "0x", "1.5e", "-1",
    '"', '"s"', "/*", "*/", "//", "\n", "\t", " ", "\\", "é", "\x00", "%", ".", "::", "9" * 40,
    "{ .reg .pred p; }", "[%rd1+-]", "{%r1,}", "call.uni (", ".version 8.0", "\u2028",
]


@st.composite
def mutated(draw):
    rel = draw(st.sampled_from(_FILES))
    text = read(rel)
    toks = _TOKENS[rel]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["del_tok", "dup_tok", "swap_tok", "ins_tok", "del_chars",
                                     "ins_char", "truncate"]))
        n = len(text)
        if kind == "truncate":
            text = text[:draw(st.integers(0, n))]
            continue
        if kind in ("del_chars", "ins_char") or not toks:
            i = draw(st.integers(0, n))
            if kind == "del_chars":
                text = text[:i] + text[i + draw(st.integers(1, 8)):]
            else:
                text = text[:i] + draw(st.sampled_from(_INSERTS)) + text[i:]
            continue
        a, b = toks[draw(st.integers(0, len(toks) - 1))]
        if b > len(text):
            continue
        if kind == "del_tok":
            text = text[:a] + text[b:]
        elif kind == "dup_tok":
            text = text[:b] + " " + text[a:b] + text[b:]
        elif kind == "ins_tok":
            text = text[:a] + draw(st.sampled_from(_INSERTS)) + " " + text[a:]
        else:
            c, d = toks[draw(st.integers(0, len(toks) - 1))]
            if d > len(text):
                continue
            (a, b), (c, d) = sorted([(a, b), (c, d)])
            if b <= c:
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return rel, text


@settings(max_examples=int(os.environ.get("PARSER_FUZZ_EXAMPLES", "200")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_corpus_raises_only_parse_error(case):
    rel, text = case
    try:
        m = parse(text, rel)
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1
        assert e.line <= text.count("\n") + 1
        assert str(e).startswith(f"{rel}:{e.line}:{e.column}:")
        return
    except PtxError as e:             # an instruction ptxas refuses: the validator's error
        assert e.loc is not None and e.loc.file == rel
        assert 1 <= e.loc.line <= text.count("\n") + 1
        assert str(e).startswith(f"{rel}:{e.loc.line}: ")
        return
    printed = emit(m)
    assert parse(printed) == m


def test_fuzz_files_cover_every_source():
    assert {f.split("/")[0] for f in _FILES} >= {"cuda", "triton"}
