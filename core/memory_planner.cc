#include "memory_planner.h"

#include <algorithm>
#include <numeric>

namespace brt::core {

MemoryPlanResult PlanMemory(const std::vector<PlannedValue>& planned, int num_arenas,
                            int64_t alignment) {
  MemoryPlanResult result;
  result.offsets.assign(planned.size(), -1);
  result.arena_sizes.assign(num_arenas, 0);
  // An alias's bytes are its root's: the root lives as long as its aliases,
  // and only roots are placed.
  std::vector<PlannedValue> values = planned;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].alias_of >= 0) {
      PlannedValue& root = values[values[i].alias_of];
      root.last_use = std::max(root.last_use, values[i].last_use);
    }

  std::vector<size_t> order;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].arena >= 0 && values[i].alias_of < 0) order.push_back(i);
  // Largest first: big blocks fix the layout, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a].bytes > values[b].bytes; });

  std::vector<size_t> placed;
  for (size_t v : order) {
    const PlannedValue& pv = values[v];
    int64_t size = (pv.bytes + alignment - 1) / alignment * alignment;
    // Intervals taken by placed values of the same arena that are live at the same time.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t p : placed) {
      const PlannedValue& q = values[p];
      if (q.arena != pv.arena || q.last_use < pv.first_use || pv.last_use < q.first_use) continue;
      taken.emplace_back(result.offsets[p], result.offsets[p] + q.bytes);
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + size <= begin) break;
      offset = std::max(offset, (end + alignment - 1) / alignment * alignment);
    }
    result.offsets[v] = offset;
    result.arena_sizes[pv.arena] = std::max(result.arena_sizes[pv.arena], offset + size);
    placed.push_back(v);
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].alias_of >= 0) result.offsets[i] = result.offsets[values[i].alias_of];

  int num_steps = 0;
  for (const PlannedValue& v : values)
    if (v.arena >= 0) num_steps = std::max(num_steps, v.last_use + 1);
  std::vector<int64_t> live(num_steps, 0), aligned(num_steps, 0);
  for (const PlannedValue& v : values)
    if (v.arena >= 0 && v.alias_of < 0)
      for (int t = v.first_use; t <= v.last_use; ++t)
        live[t] += v.bytes, aligned[t] += (v.bytes + alignment - 1) / alignment * alignment;
  for (int t = 0; t < num_steps; ++t) {
    result.live_bytes_lower_bound = std::max(result.live_bytes_lower_bound, live[t]);
    result.aligned_live_bytes_lower_bound =
        std::max(result.aligned_live_bytes_lower_bound, aligned[t]);
  }
  return result;
}

}  // namespace brt::core
