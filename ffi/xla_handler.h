// What module.cc needs from xla_handler.cc (kept free of XLA headers).
#pragma once

namespace jax_pyptx {

// Handler entry points (XLA_FFI_Handler*) for each stage, plus the state
// type's XLA_FFI_TypeId* and XLA_FFI_TypeInfo* for jax.ffi.register_ffi_type.
struct HandlerBundle {
  void* instantiate;
  void* prepare;
  void* initialize;
  void* execute;
  void* state_type_id;
  const void* state_type_info;
};

HandlerBundle GetHandlerBundle(bool cuda);

// Whether the CUDA handler (and the PyTorch launcher) use the recording
// table instead of libcuda. The host handler always records.
void SetCudaUsesRecording(bool enabled);
bool CudaUsesRecording();

}  // namespace jax_pyptx
