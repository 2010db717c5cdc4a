// ffi/interp/matrix.cc: the interpreter's native moves of matrices and register blocks, part
// of jax_pyptx.interpret.state._arith (registered by arith.cc's module).
#pragma once

#include <nanobind/nanobind.h>

void register_matrix(nanobind::module_& m);
