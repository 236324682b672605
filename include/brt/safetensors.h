// .safetensors files: the tensor file format of the `safetensors` package,
// read and written by PyTorch, JAX (through NumPy) and Hugging Face tools. A
// little-endian u64 header length, a JSON header giving each tensor's dtype,
// shape and byte range, then the bytes. brt uses it for checkpoints of train
// state (RequestContext::SaveState / LoadState).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "brt/status.h"
#include "brt/types.h"

namespace brt {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct SafetensorsFile {
  std::vector<NamedTensor> tensors;             // in the order of their bytes in the file
  std::map<std::string, std::string> metadata;  // the header's "__metadata__"
};

// Reads a file. The tensors are host memory over a private copy-on-write
// mapping of it (writing them never changes the file); one whose bytes are
// not aligned to its element size is copied. A malformed file is refused
// with what is wrong and where, never read out of bounds. Element types: F64,
// F32, F16, BF16, I64, I32, I16, I8, U8, U16, U32, U64, BOOL, C64; others are
// refused by name.
Expected<SafetensorsFile> ReadSafetensors(const std::string& path);

// Writes host tensors (names unique, not "__metadata__") and string metadata.
// The file is written beside `path` and renamed over it, so a failure leaves
// what was there.
Status WriteSafetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace brt
