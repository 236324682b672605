// Inputs for the command-line tools: random tensors for an argument.
#pragma once

#include <map>
#include <random>
#include <string>

#include "brt/session.h"

namespace brt::tools {

// Uniform in [-1, 1] for floats, [0, 10) for integers, 0/1 for i1; a
// symbolic dimension takes its size from `symbols` (--symbols b=8,s=128),
// and fails naming the missing symbol.
Expected<Tensor> RandomTensor(const ArgumentInfo& arg, std::mt19937_64& rng,
                              const std::map<std::string, int64_t>& symbols = {});

// "b=8,s=128" as symbol values; an error names the malformed entry.
Expected<std::map<std::string, int64_t>> ParseSymbols(const std::string& text);

// Under mpirun (a Session with several ranks): `path` with "{rank}"
// replaced by the rank, and, for files a tool writes, ".rank<r>" before the
// extension so ranks do not overwrite each other ("out0.npy" ->
// "out0.rank1.npy"). Unchanged for a single rank.
std::string ForRank(std::string path, int rank);
std::string RankSuffixed(const std::string& path, int rank, int world_size);

}  // namespace brt::tools
