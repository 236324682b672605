// The fine-grained AG+GEMM's tile order and chunk-arrival flags, shared by
// the GPU kernel (flagged_gemm.cu) and its host emulation
// (tests/unit/tile_flags_test.cc), so both run the same protocol.
//
// out[M, N] = a[M, K] x b[K, N], where a's rows arrive in `chunks` blocks of
// M / chunks rows, one per rank of an all-gather. The copy side writes chunk
// c's rows, then flags[c] = epoch (release); a tile waits for its chunk's
// flag (acquire) and only then reads its rows of a. The epoch grows by one
// per GEMM, so the flags never need resetting.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define BRT_HOST_DEVICE __host__ __device__
#else
#define BRT_HOST_DEVICE
#endif

#if !defined(__CUDA_ARCH__)
#include <thread>
#endif

namespace brt::nccl {

// Block `linear` of the grid takes the tiles in row-major order, starting at
// the rank's own chunk (whose rows are there when the GEMM starts) and going
// round in chunk order, the order in which a ring delivers the others.
struct TileSchedule {
  int64_t m_tiles = 0, n_tiles = 0;
  int64_t tiles_per_chunk = 0;  // row tiles per chunk
  int64_t own_chunk = 0;

  struct Tile {
    int64_t m, n, chunk;
  };
  BRT_HOST_DEVICE int64_t TileCount() const { return m_tiles * n_tiles; }
  BRT_HOST_DEVICE Tile At(int64_t linear) const {
    const int64_t m = (linear / n_tiles + own_chunk * tiles_per_chunk) % m_tiles;
    return {m, linear % n_tiles, m / tiles_per_chunk};
  }
};

// The schedule of an m x n output in tile_m x tile_n tiles whose rows arrive
// in `chunks` chunks. The caller has checked that the tiles divide the
// chunks and n evenly.
inline TileSchedule MakeTileSchedule(int64_t m, int64_t n, int64_t chunks, int64_t own_chunk,
                                     int64_t tile_m, int64_t tile_n) {
  TileSchedule s;
  s.m_tiles = m / tile_m;
  s.n_tiles = n / tile_n;
  s.tiles_per_chunk = s.m_tiles / chunks;
  s.own_chunk = own_chunk;
  return s;
}

// Whether flag value `seen` has reached `epoch`, across the u32 wrap.
BRT_HOST_DEVICE inline bool Reached(uint32_t seen, uint32_t epoch) {
  return static_cast<int32_t>(seen - epoch) >= 0;
}

// Waits until flags[chunk] has reached epoch; what the copy side wrote
// before raising the flag is visible after.
BRT_HOST_DEVICE inline void WaitForChunk(const uint32_t* flags, int64_t chunk, uint32_t epoch) {
#if defined(__CUDA_ARCH__)
  uint32_t seen;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                 : "=r"(seen)
                 : "l"(flags + chunk)
                 : "memory");
    if (Reached(seen, epoch)) break;
    __nanosleep(64);
  }
#else
  // The compiler's atomics: this header is also compiled as C++17 by nvcc.
  while (!Reached(__atomic_load_n(flags + chunk, __ATOMIC_ACQUIRE), epoch))
    std::this_thread::yield();
#endif
}

#if !defined(__CUDA_ARCH__)
// The host copy side's release (on a GPU, a stream memory write after the
// chunk's copy: cuStreamWriteValue32).
inline void SignalChunk(uint32_t* flags, int64_t chunk, uint32_t epoch) {
  __atomic_store_n(flags + chunk, epoch, __ATOMIC_RELEASE);
}
#endif

}  // namespace brt::nccl
