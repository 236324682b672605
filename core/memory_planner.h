// Liveness-based arena layout: intermediates whose lifetimes do not overlap
// share bytes. Used by the builder and by the runtime for shapes only known
// at run time.
#pragma once

#include <cstdint>
#include <vector>

namespace brt::core {

struct PlannedValue {
  int64_t bytes = 0;
  int arena = -1;     // which arena (e.g. per device); -1: not planned
  int first_use = 0;  // op index that defines it
  int last_use = 0;   // last op index that reads it (>= first_use)
};

struct MemoryPlanResult {
  std::vector<int64_t> offsets;        // per value; -1 when not planned
  std::vector<int64_t> arena_sizes;    // per arena
  int64_t live_bytes_lower_bound = 0;  // max over ops of bytes live at once
  // The same with each value rounded up to the alignment: no aligned plan
  // can do better, since live values never share an aligned block.
  int64_t aligned_live_bytes_lower_bound = 0;
};

MemoryPlanResult PlanMemory(const std::vector<PlannedValue>& values, int num_arenas,
                            int64_t alignment);

}  // namespace brt::core
