// The fine-grained AG+GEMM's GEMM (FLUX's method): out[M, N] = a[M, K] x
// b[K, N], row-major, f16 or bf16 with f32 accumulation, whose 128 x 128
// output tiles each wait for their chunk of a's rows to land (tile_flags.h)
// instead of the whole GEMM waiting for the whole gather. The copy side
// (copy engine or NCCL) writes a chunk, then its flag.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace brt::nccl {

struct FlaggedGemmShape {
  int64_t m = 0, k = 0, n = 0;
  int64_t chunks = 1;     // a's rows arrive in this many equal chunks
  int64_t own_chunk = 0;  // the chunk whose tiles go first
};

inline constexpr int64_t kFlaggedGemmTileM = 128, kFlaggedGemmTileN = 128, kFlaggedGemmTileK = 32;

// Why the kernel cannot take this dtype and shape (tiles must divide each
// chunk and n, k must be a multiple of the K step), or "" when it can.
std::string FlaggedGemmRefusal(int32_t dtype, const FlaggedGemmShape& shape);

// Launches on `stream`. flags == nullptr: no waiting (every chunk is there).
// Else flags[c] (device memory) must reach `epoch` before chunk c's tiles
// read a. a and b 16-byte aligned. max_blocks > 0 caps the grid (blocks then
// take several tiles each), leaving SMs to whatever lands the chunks.
cudaError_t LaunchFlaggedGemm(int32_t dtype, const void* a, const void* b, void* out,
                              const FlaggedGemmShape& shape, const uint32_t* flags, uint32_t epoch,
                              int64_t max_blocks, cudaStream_t stream);

}  // namespace brt::nccl
