// The fine-grained AG+GEMM's GEMM (flagged_gemm.h): a 128 x 128 x 32 tiled
// tensor-core GEMM (WMMA, 8 warps of 64 x 32, two cp.async stages) whose
// blocks first wait for their chunk's flag.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>

#include "brt/provider_abi.h"
#include "nccl/flagged_gemm.h"
#include "nccl/tile_flags.h"

namespace brt::nccl {
namespace {

constexpr int kTileM = kFlaggedGemmTileM, kTileN = kFlaggedGemmTileN, kTileK = kFlaggedGemmTileK;
constexpr int kThreads = 256, kStages = 2;
// Row padding of the shared tiles (elements): spreads rows over the banks
// and keeps every WMMA fragment 32-byte aligned.
constexpr int kPad = 8;

__device__ inline void CopyAsync16(void* shared, const void* global) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(global) : "memory");
}
__device__ inline void CommitCopies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int Pending>
__device__ inline void WaitCopies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    FlaggedGemmKernel(const T* a, const T* b, T* out, int64_t k, int64_t n, TileSchedule schedule,
                      const uint32_t* flags, uint32_t epoch) {
  using namespace nvcuda;
  __shared__ __align__(128) T a_tile[kStages][kTileM][kTileK + kPad];
  __shared__ __align__(128) T b_tile[kStages][kTileK][kTileN + kPad];
  // One tile per block, or tiles strided by the grid when it is smaller
  // (leaving room on the SMs for other work).
  for (int64_t linear = blockIdx.x; linear < schedule.TileCount(); linear += gridDim.x) {
    const TileSchedule::Tile tile = schedule.At(linear);
    if (flags) {
      if (threadIdx.x == 0) WaitForChunk(flags, tile.chunk, epoch);
      __syncthreads();
    }
    const T* a_rows = a + tile.m * kTileM * k;
    const T* b_cols = b + tile.n * kTileN;
    const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
    const int warp_m = warp / 4, warp_n = warp % 4;  // 2 x 4 warps, each 64 x 32 of the tile

    // One K step's tiles: a 128 x 32 and b 32 x 128, 512 pieces of 16 bytes
    // each, two per thread.
    auto load = [&](int stage, int64_t k0) {
      for (int i = 0; i < 2; ++i) {
        const int piece = thread + i * kThreads;
        const int row = piece / (kTileK / 8), col = piece % (kTileK / 8) * 8;
        CopyAsync16(&a_tile[stage][row][col], a_rows + row * k + k0 + col);
      }
      for (int i = 0; i < 2; ++i) {
        const int piece = thread + i * kThreads;
        const int row = piece / (kTileN / 8), col = piece % (kTileN / 8) * 8;
        CopyAsync16(&b_tile[stage][row][col], b_cols + (k0 + row) * n + col);
      }
      CommitCopies();
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
    for (auto& row : acc)
      for (auto& f : row) wmma::fill_fragment(f, 0.0f);
    const int64_t steps = k / kTileK;
    load(0, 0);
    for (int64_t s = 0; s < steps; ++s) {
      const int stage = s % kStages;
      if (s + 1 < steps) {
        load((s + 1) % kStages, (s + 1) * kTileK);
        WaitCopies<1>();
      } else {
        WaitCopies<0>();
      }
      __syncthreads();
      for (int kk = 0; kk < kTileK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[4];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[2];
        for (int i = 0; i < 4; ++i)
          wmma::load_matrix_sync(fa[i], &a_tile[stage][warp_m * 64 + i * 16][kk], kTileK + kPad);
        for (int j = 0; j < 2; ++j)
          wmma::load_matrix_sync(fb[j], &b_tile[stage][kk][warp_n * 32 + j * 16], kTileN + kPad);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
      __syncthreads();  // the stage is overwritten by the load two steps on
    }

    // Each warp passes its fragments through 1 KiB of the (now idle) a tiles
    // to convert them and write rows of 8 elements.
    float* staging = reinterpret_cast<float*>(&a_tile[0][0][0]) + warp * 256;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        wmma::store_matrix_sync(staging, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
        const int row = lane / 2, col = lane % 2 * 8;
        T* dst = out + (tile.m * kTileM + warp_m * 64 + i * 16 + row) * n + tile.n * kTileN +
                 warp_n * 32 + j * 16 + col;
        for (int e = 0; e < 8; ++e) dst[e] = static_cast<T>(staging[row * 16 + col + e]);
        __syncwarp();
      }
    __syncthreads();  // the staging area is the next tile's a tile
  }
}

}  // namespace

std::string FlaggedGemmRefusal(int32_t dtype, const FlaggedGemmShape& s) {
  if (dtype != BRT_DTYPE_F16 && dtype != BRT_DTYPE_BF16)
    return std::string("the flagged GEMM takes f16 or bf16, not ") + brt_dtype_name(dtype);
  if (s.chunks < 1 || s.own_chunk < 0 || s.own_chunk >= s.chunks)
    return "own chunk " + std::to_string(s.own_chunk) + " is not one of " +
           std::to_string(s.chunks) + " chunks";
  if (s.m <= 0 || s.m % (s.chunks * kTileM))
    return "m " + std::to_string(s.m) + " is not a positive multiple of " +
           std::to_string(s.chunks) + " chunks of 128 rows";
  if (s.n <= 0 || s.n % kTileN) return "n " + std::to_string(s.n) + " is not a multiple of 128";
  if (s.k <= 0 || s.k % kTileK) return "k " + std::to_string(s.k) + " is not a multiple of 32";
  return "";
}

cudaError_t LaunchFlaggedGemm(int32_t dtype, const void* a, const void* b, void* out,
                              const FlaggedGemmShape& s, const uint32_t* flags, uint32_t epoch,
                              int64_t max_blocks, cudaStream_t stream) {
  if (!FlaggedGemmRefusal(dtype, s).empty()) return cudaErrorInvalidValue;
  const TileSchedule schedule = MakeTileSchedule(s.m, s.n, s.chunks, s.own_chunk, kTileM, kTileN);
  const int64_t tiles = schedule.TileCount();
  const dim3 grid(static_cast<unsigned>(max_blocks > 0 ? std::min(max_blocks, tiles) : tiles));
  if (dtype == BRT_DTYPE_F16)
    FlaggedGemmKernel<__half><<<grid, kThreads, 0, stream>>>(
        static_cast<const __half*>(a), static_cast<const __half*>(b), static_cast<__half*>(out),
        s.k, s.n, schedule, flags, epoch);
  else
    FlaggedGemmKernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
        static_cast<__nv_bfloat16*>(out), s.k, s.n, schedule, flags, epoch);
  return cudaGetLastError();
}

}  // namespace brt::nccl
