// ffi/interp/mma.cc: a run of wgmma k-steps on one f32 accumulator in one pass, part of
// jax_pyptx.interpret.state._arith (registered by arith.cc's module).
#pragma once

#include <nanobind/nanobind.h>

void register_mma(nanobind::module_& m);

// The module's one AVX-512 switch (the wgmma products here, ex2's loop in ex2.cc): on where
// the CPU has avx512f/dq/vl (with AVX2 and fma) until use_cpu_features(False).
bool avx512_in_use();
// turn the AVX-512 loops on (where the CPU has them) or off; returns whether they were on
bool use_avx512(bool on);
