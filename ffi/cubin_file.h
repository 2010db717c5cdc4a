// Reading a module image (cubin, or PTX text) from disk without trusting it.
//
// cuModuleLoadData takes a bare pointer: the driver finds an ELF image's extent
// from its header. Before an image is handed over, its size is known and
// checked here, so neither the driver nor the recording table can read past
// the bytes that were read from the file.
#pragma once

#include <cstddef>
#include <string>

namespace jax_pyptx {

// SHA-256 of `size` bytes, as 64 lowercase hex digits.
std::string Sha256Hex(const void* data, size_t size);

// Whether a loader reading `image` stays inside its `size` bytes: an ELF
// image must be a little-endian ELF64 whose header, program headers, section
// headers and section/segment contents all lie inside it; any other image
// (PTX text) must hold a NUL terminator within `size`. On failure *why says
// what is wrong.
bool CheckImage(const void* image, size_t size, std::string* why);

// Reads `path` into *image (NUL-terminated past image->size()). False when the
// file is missing or empty (*why empty), when its stamp `<path>.sha256`
// ("<sha256 hex> <size>", written by the toolchain) exists and the bytes do not
// match it, or when CheckImage rejects them (*why says which).
bool ReadModuleImage(const std::string& path, std::string* image, std::string* why);

}  // namespace jax_pyptx
