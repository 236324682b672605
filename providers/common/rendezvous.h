// A TCP rendezvous for providers whose libraries need a bootstrap blob shared
// by every rank (NCCL's unique id) when no launcher wires the ranks: rank 0
// listens on MASTER_ADDR:MASTER_PORT, every other rank connects and sends its
// program hash, and rank 0 answers each with the blob and whether every hash
// matched. So a mismatch is refused on every rank, naming both hashes. Host
// code only; blocking, with a deadline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace brt::ops {

struct RendezvousResult {
  std::vector<uint8_t> blob;  // rank 0's blob, on every rank
  std::string error;          // empty on success
};

// address: "host:port". rank 0 passes the blob; the others receive it.
RendezvousResult Rendezvous(const std::string& address, int rank, int world_size,
                            uint64_t program_hash, const std::vector<uint8_t>& blob,
                            double timeout_seconds);

}  // namespace brt::ops
