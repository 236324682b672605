// brt.attention on the CPU: the kernel's body, built once per ISA
// (attention.inc), and the choice between the two (attention.cc).
#pragma once

#include "kernel.h"
#include "ops/op_plans.h"

namespace brt::cpu {

namespace baseline {
void RunAttention(const AttentionPlan& p, const float* q, const float* k, const float* v,
                  const float* mask, float* out);
}
namespace avx2 {
void RunAttention(const AttentionPlan& p, const float* q, const float* k, const float* v,
                  const float* mask, float* out);
}

}  // namespace brt::cpu
