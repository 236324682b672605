// The TCP rendezvous the NCCL provider bootstraps with, exercised with
// threads standing in for ranks on localhost.
#include "common/rendezvous.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace brt::ops {
namespace {

std::string Address() {
  // A port per test process, away from the well-known ones.
  static int next = 20000 + getpid() % 20000;
  return "localhost:" + std::to_string(next++);
}

std::vector<RendezvousResult> RunRanks(int world, const std::vector<uint64_t>& hashes,
                                       double timeout = 10) {
  const std::string address = Address();
  const std::vector<uint8_t> blob = {7, 1, 2, 3, 250, 0, 42};
  std::vector<RendezvousResult> results(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      results[r] =
          Rendezvous(address, r, world, hashes[r], r == 0 ? blob : std::vector<uint8_t>{}, timeout);
    });
  for (auto& t : ranks) t.join();
  return results;
}

TEST(Rendezvous, EveryRankGetsRankZerosBlob) {
  auto results = RunRanks(4, {5, 5, 5, 5});
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(results[r].error, "") << "rank " << r;
    EXPECT_EQ(results[r].blob, (std::vector<uint8_t>{7, 1, 2, 3, 250, 0, 42})) << "rank " << r;
  }
}

TEST(Rendezvous, ADifferentProgramIsRefusedOnEveryRankWithBothHashes) {
  auto results = RunRanks(3, {0x1111, 0x1111, 0x2222});
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(results[r].error.find("loaded different programs"), std::string::npos) << r;
    EXPECT_NE(results[r].error.find("0000000000001111 on rank 0"), std::string::npos) << r;
    EXPECT_NE(results[r].error.find("0000000000002222 on rank 2"), std::string::npos) << r;
  }
}

TEST(Rendezvous, AMissingRankEndsTheWaitWithAnError) {
  const std::string address = Address();
  // World of 3, but only rank 0 comes.
  RendezvousResult r = Rendezvous(address, 0, 3, 1, {1}, 0.5);
  EXPECT_NE(r.error.find("only 0 of 2 arrived"), std::string::npos) << r.error;
  RendezvousResult lonely = Rendezvous(Address(), 1, 2, 1, {}, 0.3);
  EXPECT_NE(lonely.error.find("cannot reach rank 0"), std::string::npos) << lonely.error;
  EXPECT_NE(Rendezvous("nocolon", 1, 2, 1, {}, 0.1).error.find("is not host:port"),
            std::string::npos);
}

}  // namespace
}  // namespace brt::ops
