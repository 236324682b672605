// brt-bench --shapes: one function timed at several sets of symbol values,
// one line each, on one Session (so each new shape's first run pays its
// plan, and a shape seen before hits the plan cache).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "brt/session.h"

namespace brt::tools {

// "b=1,s=16;b=1,s=128" as sets of symbol values; an error names the entry.
Expected<std::vector<std::map<std::string, int64_t>>> ParseShapeSweep(const std::string& text);

// Times `iters` runs (after `warmup`) of `fn` on random inputs (from `seed`)
// at each set of symbol values, and prints a line per set: the first run
// (which plans a new shape), the plan time, p50 and p99. Non-OK on the first
// failure, naming the shape.
Status SweepShapes(Session& session, const FunctionInfo& fn,
                   const std::vector<std::map<std::string, int64_t>>& shapes, int warmup,
                   int64_t iters, uint64_t seed);

}  // namespace brt::tools
