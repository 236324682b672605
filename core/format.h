// Reading .brtx bytes: structural (FlatBuffers) and semantic verification.
// After VerifyExecutable succeeds every index, offset and size in the
// executable may be used without further range checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "brt/status.h"
#include "brt/types.h"
#include "brt_generated.h"

namespace brt::core {

inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 7;
inline constexpr size_t kWeightAlignment = 64;
inline constexpr size_t kArenaAlignment = 256;

// Bytes of an executable kept alive by `owner` (an mmap or a vector).
struct ExecutableBytes {
  std::shared_ptr<const void> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Maps a file read-only, or copy-on-write (its pages may be written; the
// file never changes).
Expected<ExecutableBytes> MapFile(const std::string& path, bool copy_on_write = false);
ExecutableBytes CopyBytes(std::span<const uint8_t> bytes);

struct VerifiedExecutable {
  ExecutableBytes bytes;
  const fb::Executable* root = nullptr;
};

Expected<VerifiedExecutable> VerifyExecutable(ExecutableBytes bytes);

// Computes the metadata checksum of a structurally valid size-prefixed
// executable and stores it in place. Returns false if the bytes do not
// verify as a FlatBuffer. Used by the builder (and by tests and the fuzzer
// to reach the semantic checks after editing fields).
bool SealExecutable(uint8_t* data, size_t size);

// Converters from the schema's enums, valid after verification.
inline DType ToDType(fb::DType d) { return static_cast<DType>(d); }
inline DeviceKind ToDeviceKind(fb::DeviceKind d) { return static_cast<DeviceKind>(d); }

// A value's dims as the public Dim type.
std::vector<Dim> ValueDims(const fb::Value& value);

}  // namespace brt::core
