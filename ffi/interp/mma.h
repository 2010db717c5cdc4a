// ffi/interp/mma.cc: a run of wgmma k-steps on one f32 accumulator in one pass, part of
// jax_pyptx.interpret.state._arith (registered by arith.cc's module).
#pragma once

#include <nanobind/nanobind.h>

void register_mma(nanobind::module_& m);

// use the AVX-512 loop where the CPU has it (on), or the portable one; returns whether it was
bool mma_cpu_features(bool on);
