// Liveness-based arena layout: intermediates whose lifetimes do not overlap
// share bytes. Used by the builder and by the runtime for shapes only known
// at run time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "brt/op_registry.h"

namespace brt::core {

struct PlannedValue {
  int64_t bytes = 0;
  int arena = -1;     // which arena (e.g. per device); -1: not planned
  int first_use = 0;  // op index that defines it
  int last_use = 0;   // last op index that reads it (>= first_use)
  int alias_of = -1;  // >= 0: shares that (earlier) value's bytes instead of its own
};

struct MemoryPlanResult {
  std::vector<int64_t> offsets;        // per value; -1 when not planned
  std::vector<int64_t> arena_sizes;    // per arena
  int64_t live_bytes_lower_bound = 0;  // max over ops of bytes live at once
  // The same with each value rounded up to the alignment: no aligned plan
  // can do better, since live values never share an aligned block.
  int64_t aligned_live_bytes_lower_bound = 0;
};

// Collectives run on a queue while the ops after them go on (the MPI
// provider's), so each one's operands stay live until the first op that
// reads one of its results, or the end: no op in between may reuse their
// bytes while the collective still reads them. `ops[i]` has kind, operands
// and results (value indices into `planned`).
template <typename Ops>
void KeepQueuedOperandsLive(const Ops& ops, std::vector<PlannedValue>& planned) {
  const int n = static_cast<int>(ops.size());
  for (int i = 0; i < n; ++i) {
    const OpSchema* schema = FindOpSchema(ops[i].kind);
    if (!schema || !(schema->flags & op_flags::kCollective)) continue;
    int until = n - 1;
    for (int j = i + 1; j < n && until == n - 1; ++j)
      for (auto v : ops[j].operands)
        if (std::find(ops[i].results.begin(), ops[i].results.end(), v) != ops[i].results.end())
          until = j;
    for (auto v : ops[i].operands)
      if (planned[v].arena >= 0) planned[v].last_use = std::max(planned[v].last_use, until);
  }
}

// A reshape's result is its operand's bytes (row-major data reads the same
// under either shape): where both are planned in one arena, the result
// aliases the operand, which then stays live as long as the result, and the
// reshape copies nothing (its kernels skip a copy onto itself). Call after
// every liveness adjustment (KeepQueuedOperandsLive).
template <typename Ops>
void AliasReshapes(const Ops& ops, std::vector<PlannedValue>& planned) {
  for (const auto& op : ops) {
    if (op.kind != "reshape" || op.operands.size() != 1 || op.results.size() != 1) continue;
    const auto from = op.operands[0], to = op.results[0];
    if (planned[from].arena < 0 || planned[to].arena != planned[from].arena ||
        planned[to].bytes != planned[from].bytes)
      continue;
    planned[to].alias_of =
        planned[from].alias_of >= 0 ? planned[from].alias_of : static_cast<int>(from);
  }
}

MemoryPlanResult PlanMemory(const std::vector<PlannedValue>& values, int num_arenas,
                            int64_t alignment);

}  // namespace brt::core
