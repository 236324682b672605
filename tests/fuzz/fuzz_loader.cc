// libFuzzer target: the whole load path of untrusted bytes -- FlatBuffers
// verification, semantic checks, kernel resolution and prepare in the CPU
// provider. Structurally valid inputs get their metadata checksum fixed, so
// mutations reach the semantic checks instead of stopping at the checksum.
#include <cstdint>
#include <vector>

#include "brt/session.h"
#include "format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  brt::core::SealExecutable(bytes.data(), bytes.size());
  auto session = brt::Session::LoadMemory(bytes);
  if (session.ok()) {
    // Loaded: the metadata must be usable too.
    for (const auto& f : (*session)->functions()) (void)(*session)->NewRequest(f.name);
  }
  return 0;
}
