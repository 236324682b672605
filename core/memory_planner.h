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
  int arena = -1;      // which arena (e.g. per device); -1: not planned
  int first_use = 0;   // op index that defines it
  int last_use = 0;    // last op index that reads it (>= first_use)
  int alias_of = -1;   // >= 0: shares that (earlier) value's bytes instead of its own
  int32_t dtype = -1;  // values share bytes only with their own dtype
};

struct MemoryPlanResult {
  std::vector<int64_t> offsets;        // per value; -1 when not planned
  std::vector<int64_t> arena_sizes;    // per arena
  int64_t live_bytes_lower_bound = 0;  // max over ops of bytes live at once
  // The same with each value rounded up to the alignment: no aligned plan
  // can do better, since live values never share an aligned block.
  int64_t aligned_live_bytes_lower_bound = 0;
};

// Collectives run on their provider's queue while the ops after them go on,
// so each one's operands stay live until the first op that reads one of its
// results, or the end: no op in between may reuse their bytes while the
// collective still reads them. `ops[i]` has kind, operands
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

// Results that take an operand's bytes instead of their own (both planned
// in one arena; call after every liveness adjustment, KeepQueuedOperandsLive):
// - a reshape's result is its operand's bytes (row-major data reads the same
//   under either shape); the operand then stays live as long as the result,
//   and the reshape copies nothing (its kernels skip a copy onto itself);
// - an op of the registry's kInPlace or kInPlaceFirstOperand writes its
//   result over an operand of the result's dtype and size when no later op,
//   and no other operand of this one, reads those bytes (InPlaceOperand):
//   scatter and dynamic_update_slice then copy nothing, and elementwise ops
//   write to memory already in cache.
template <typename Ops>
void ShareOperandBytes(const Ops& ops, std::vector<PlannedValue>& planned) {
  auto root = [&](size_t v) {
    return planned[v].alias_of >= 0 ? planned[v].alias_of : static_cast<int>(v);
  };
  // Per root: the last op that reads its bytes, through it or an alias.
  std::vector<int> last_read(planned.size());
  for (size_t v = 0; v < planned.size(); ++v) last_read[v] = planned[v].last_use;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.results.size() != 1 || planned[op.results[0]].arena < 0) continue;
    PlannedValue& to = planned[op.results[0]];
    auto same_bytes = [&](size_t v) {
      return planned[v].arena == to.arena && planned[v].bytes == to.bytes &&
             planned[v].dtype == to.dtype;
    };
    int from = -1;
    if (op.kind == "reshape") {
      if (op.operands.size() == 1 && same_bytes(op.operands[0])) from = root(op.operands[0]);
    } else if (const OpSchema* schema = FindOpSchema(op.kind)) {
      const int k = InPlaceOperand(schema->flags, op.operands, root, same_bytes, [&](size_t v) {
        return last_read[root(v)] == static_cast<int>(i);
      });
      if (k >= 0) from = root(op.operands[k]);
    }
    if (from < 0) continue;
    to.alias_of = from;
    last_read[from] = std::max(last_read[from], to.last_use);
  }
}

MemoryPlanResult PlanMemory(const std::vector<PlannedValue>& values, int num_arenas,
                            int64_t alignment);

}  // namespace brt::core
