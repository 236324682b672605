// The fine-grained AG+GEMM's protocol (providers/nccl/tile_flags.h) on the
// host, with real threads: worker threads take the grid's blocks in order as
// a GPU's block scheduler does, each waits for its tile's chunk flag and then
// reads that chunk's rows, while a copier thread lands the other ranks'
// chunks with plain writes and raises their flags. Under TSan, a missing
// acquire or release shows as a race on the rows; without it, as rows read
// before they landed (the result differs from the float64 reference).
#include "nccl/tile_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace brt::nccl {
namespace {

constexpr int64_t kTileM = 4, kTileN = 4;

struct Problem {
  int64_t chunks, own, tiles_per_chunk, k, n;
  int64_t m() const { return chunks * tiles_per_chunk * kTileM; }
  int64_t chunk_rows() const { return tiles_per_chunk * kTileM; }
};

std::vector<double> Random(size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(count);
  for (double& x : v) x = u(rng);
  return v;
}

// How the blocks take tiles: as a GPU schedules one block per tile (the next
// free worker takes the next tile), or as a grid capped at `workers` blocks,
// each striding over the tiles (LaunchFlaggedGemm's max_blocks).
enum class Grid { kBlockPerTile, kStrided };

// One emulated GEMM: `workers` threads run the blocks; the copier lands the
// chunks after the own one in ring order, each after `hold` lets it go (so a
// test can stop the copies), and raises each chunk's flag to `epoch`.
// Returns the output and, per block, its tile's chunk; `finished` counts
// the tiles done as they finish.
struct EmulatedRun {
  std::vector<double> out;
  std::vector<int64_t> chunk_of_block;
};
EmulatedRun Emulate(const Problem& p, const std::vector<double>& a, const std::vector<double>& b,
                    std::vector<double>& landed, std::vector<uint32_t>& flags, uint32_t epoch,
                    int workers, const std::function<void(int64_t)>& before_chunk,
                    std::atomic<int64_t>* finished = nullptr, Grid grid = Grid::kBlockPerTile) {
  const TileSchedule schedule = MakeTileSchedule(p.m(), p.n, p.chunks, p.own, kTileM, kTileN);
  EmulatedRun r{std::vector<double>(p.m() * p.n, NAN),
                std::vector<int64_t>(schedule.TileCount(), -1)};
  const size_t chunk_values = p.chunk_rows() * p.k;
  // The own chunk is local: there before the GEMM starts.
  std::copy_n(a.begin() + p.own * chunk_values, chunk_values,
              landed.begin() + p.own * chunk_values);
  SignalChunk(flags.data(), p.own, epoch);
  std::thread copier([&] {
    for (int64_t i = 1; i < p.chunks; ++i) {
      const int64_t c = (p.own + i) % p.chunks;
      before_chunk(c);
      std::memcpy(&landed[c * chunk_values], &a[c * chunk_values], chunk_values * sizeof(double));
      SignalChunk(flags.data(), c, epoch);
    }
  });
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      auto take = [&](int64_t previous) {
        return grid == Grid::kStrided ? (previous < 0 ? w : previous + workers) : next.fetch_add(1);
      };
      for (int64_t block = take(-1); block < schedule.TileCount(); block = take(block)) {
        const TileSchedule::Tile t = schedule.At(block);
        WaitForChunk(flags.data(), t.chunk, epoch);
        r.chunk_of_block[block] = t.chunk;
        for (int64_t i = t.m * kTileM; i < (t.m + 1) * kTileM; ++i)
          for (int64_t j = t.n * kTileN; j < (t.n + 1) * kTileN; ++j) {
            double sum = 0;
            for (int64_t x = 0; x < p.k; ++x) sum += landed[i * p.k + x] * b[x * p.n + j];
            r.out[i * p.n + j] = sum;
          }
        if (finished) ++*finished;
      }
    });
  for (auto& t : pool) t.join();
  copier.join();
  return r;
}

std::vector<double> Reference(const Problem& p, const std::vector<double>& a,
                              const std::vector<double>& b) {
  std::vector<double> out(p.m() * p.n, 0);
  for (int64_t i = 0; i < p.m(); ++i)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t x = 0; x < p.k; ++x) out[i * p.n + j] += a[i * p.k + x] * b[x * p.n + j];
  return out;
}

TEST(TileFlags, ScheduleStartsAtTheOwnChunkAndCoversEveryTileOnce) {
  for (int64_t own = 0; own < 4; ++own) {
    const TileSchedule s = MakeTileSchedule(4 * 3 * 128, 5 * 128, 4, own, 128, 128);
    ASSERT_EQ(s.TileCount(), 12 * 5);
    std::vector<int> seen(s.TileCount(), 0);
    for (int64_t block = 0; block < s.TileCount(); ++block) {
      const TileSchedule::Tile t = s.At(block);
      ++seen[t.m * s.n_tiles + t.n];
      EXPECT_EQ(t.chunk, t.m / 3);
      // Chunks in ring order from the own one: own, own + 1, ...
      EXPECT_EQ(t.chunk, (own + block / (3 * 5)) % 4) << "block " << block;
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
}

TEST(TileFlags, EpochsCompareAcrossTheWrap) {
  EXPECT_TRUE(Reached(5, 5));
  EXPECT_TRUE(Reached(6, 5));
  EXPECT_FALSE(Reached(4, 5));
  EXPECT_TRUE(Reached(2, 0xFFFFFFFEu));   // wrapped past
  EXPECT_FALSE(Reached(0xFFFFFFFEu, 2));  // from before the wrap
}

// Chunks land while the blocks run, over several GEMMs that reuse the flags
// with growing epochs; every result is the float64 product.
TEST(TileFlags, TilesReadOnlyLandedRowsOverSeveralEpochs) {
  std::mt19937_64 rng(20261126);
  const Problem p{8, 3, 2, 24, 3 * kTileN};
  std::vector<uint32_t> flags(p.chunks, 0);
  for (uint32_t epoch = 1; epoch <= 4; ++epoch) {
    const std::vector<double> a = Random(p.m() * p.k, rng), b = Random(p.k * p.n, rng);
    std::vector<double> landed(a.size(), NAN);
    std::mt19937_64 delays(epoch);
    auto jitter = [&](int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(delays() % 300));
    };
    // Odd epochs take a tile per block, even ones a strided capped grid.
    const EmulatedRun r = Emulate(p, a, b, landed, flags, epoch, 4, jitter, nullptr,
                                  epoch % 2 ? Grid::kBlockPerTile : Grid::kStrided);
    const std::vector<double> ref = Reference(p, a, b);
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(r.out[i], ref[i], 1e-12) << "epoch " << epoch << " element " << i;
  }
}

// With the copies held back, every tile of the own chunk finishes and no
// other does: no tile of it waits for another rank, and the blocks that
// wait are only those of chunks not yet landed.
TEST(TileFlags, TheOwnChunkFinishesWhileTheOthersAreStillInFlight) {
  std::mt19937_64 rng(7);
  const Problem p{4, 1, 2, 16, 2 * kTileN};
  const std::vector<double> a = Random(p.m() * p.k, rng), b = Random(p.k * p.n, rng);
  std::vector<double> landed(a.size(), NAN);
  std::vector<uint32_t> flags(p.chunks, 0);
  const int64_t own_tiles = p.tiles_per_chunk * (p.n / kTileN);
  std::atomic<int64_t> finished{0};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int64_t finished_while_held = -1;
  std::thread watcher([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (finished < own_tiles && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // nothing more may finish
    {
      std::lock_guard<std::mutex> lock(mu);
      finished_while_held = finished;
      release = true;
    }
    cv.notify_all();
  });
  auto hold_all = [&](int64_t) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  };
  const EmulatedRun r = Emulate(p, a, b, landed, flags, 1, 3, hold_all, &finished);
  watcher.join();
  EXPECT_EQ(finished_while_held, own_tiles);
  for (int64_t block = 0; block < own_tiles; ++block) EXPECT_EQ(r.chunk_of_block[block], p.own);
  const std::vector<double> ref = Reference(p, a, b);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(r.out[i], ref[i], 1e-12);
}

// On a GPU the copies that land the chunks may need an SM slot of their own,
// queued behind the GEMM's blocks (the likeliest reason the first H100 run of
// flagged_gemm_bench hung). Modelled here: `slots` threads take jobs in order
// from one queue, the grid's blocks first (each striding over the tiles when
// there are fewer blocks than tiles), then one copy job per chunk. Whether
// every job ends within `limit`; a stuck run is freed from outside.
bool FinishesWithCopiesQueuedBehindTheBlocks(const Problem& p, int slots, int64_t blocks,
                                             std::chrono::milliseconds limit) {
  const TileSchedule schedule = MakeTileSchedule(p.m(), p.n, p.chunks, p.own, kTileM, kTileN);
  std::vector<uint32_t> flags(p.chunks, 0);
  SignalChunk(flags.data(), p.own, 1);
  std::vector<std::function<void()>> jobs;
  for (int64_t block = 0; block < blocks; ++block)
    jobs.push_back([&, block] {
      for (int64_t tile = block; tile < schedule.TileCount(); tile += blocks)
        WaitForChunk(flags.data(), schedule.At(tile).chunk, 1);
    });
  for (int64_t i = 1; i < p.chunks; ++i)
    jobs.push_back([&, i] { SignalChunk(flags.data(), (p.own + i) % p.chunks, 1); });
  std::atomic<size_t> next{0}, done{0};
  std::vector<std::thread> pool;
  for (int w = 0; w < slots; ++w)
    pool.emplace_back([&] {
      for (size_t job; (job = next.fetch_add(1)) < jobs.size(); ++done) jobs[job]();
    });
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (done < jobs.size() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool finished = done == jobs.size();
  for (int64_t c = 0; c < p.chunks; ++c) SignalChunk(flags.data(), c, 1);
  for (auto& t : pool) t.join();
  return finished;
}

TEST(TileFlags, AGridThatHoldsEverySlotStarvesTheCopiesAndACappedOneDoesNot) {
  const Problem p{4, 0, 2, 8, 2 * kTileN};  // 16 tiles, 4 per chunk
  const int slots = 4;
  // A block per tile: the own chunk's 4 blocks finish, then chunk 1's fill
  // every slot and wait for a copy queued behind the other blocks.
  EXPECT_FALSE(
      FinishesWithCopiesQueuedBehindTheBlocks(p, slots, 16, std::chrono::milliseconds(300)));
  // As many blocks as slots: the same.
  EXPECT_FALSE(
      FinishesWithCopiesQueuedBehindTheBlocks(p, slots, slots, std::chrono::milliseconds(300)));
  // Fewer blocks than slots: a slot is left for the copies.
  EXPECT_TRUE(
      FinishesWithCopiesQueuedBehindTheBlocks(p, slots, slots - 1, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace brt::nccl
