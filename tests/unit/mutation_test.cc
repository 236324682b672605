// 1000 mutated executables -- bit flips, truncations and out-of-range fields
// -- and none may crash (this test also runs under ASan+UBSan). Truncations
// and out-of-range fields must be rejected with an error. Bit flips are
// resealed (their checksum fixed, as the fuzzer does), so they reach the
// FlatBuffers verifier and then the semantic checks instead of stopping at
// the checksum; a flip that leaves a valid executable (a float attribute, a
// name) may load, and then must run or fail with an error.
#include <filesystem>
#include <fstream>
#include <set>

#include "brt_generated.h"
#include "format.h"
#include "test_util.h"

namespace brt::test {
namespace {

std::vector<uint8_t> BaseExecutable() {
  Mlp mlp(Rng());
  ExecutableBuilder b("mutation-test");
  mlp.Build(b.AddFunction("mlp"), 4);
  FunctionBuilder& g = b.AddFunction("shapes");
  ValueId x = g.Input("x", DType::kF32, {2, 3, 4});
  ValueId t = g.Op("transpose", {x}, {{DType::kF32, {4, 2, 3}}},
                   {{"permutation", std::vector<int64_t>{2, 0, 1}}})[0];
  ValueId c = g.Op("concatenate", {t, t}, {{DType::kF32, {8, 2, 3}}}, {{"dimension", 0}})[0];
  ValueId r = g.Op(
      "reduce",
      {c, g.Op("constant", {}, {{DType::kF32, {}}}, {{"value", std::vector<uint8_t>(4, 0)}})[0]},
      {{DType::kF32, {8}}}, {{"dimensions", std::vector<int64_t>{1, 2}}, {"reducer", "add"}})[0];
  ValueId ids = g.Input("ids", DType::kI32, {5, 1});
  ValueId gat = g.Op("gather", {r, ids}, {{DType::kF32, {5}}},
                     {{"offset_dims", std::vector<int64_t>{}},
                      {"collapsed_slice_dims", std::vector<int64_t>{0}},
                      {"start_index_map", std::vector<int64_t>{0}},
                      {"index_vector_dim", 1},
                      {"slice_sizes", std::vector<int64_t>{1}}})[0];
  g.Output("y", gat);
  return b.Serialize().value();
}

// A loop, while (i < n) i += 1, whose condition and body regions follow it:
// a mutant must not make the regions recurse, mismatch or vanish unseen.
std::vector<uint8_t> LoopExecutable() {
  ExecutableBuilder b("mutation-test");
  FunctionBuilder& loop = b.AddFunction("loop");
  ValueId n = loop.Input("n", DType::kI32, {});
  ValueId i0 = loop.Input("i0", DType::kI32, {});
  const int64_t cond_index = b.function_count();
  loop.Output("i", loop.Op("while", {i0, n}, {{DType::kI32, {}}},
                           {{"cond", cond_index}, {"body", cond_index + 1}})[0]);
  FunctionBuilder& cond = b.AddFunction("loop.cond");
  cond.MarkRegion();
  ValueId ci = cond.Input("i", DType::kI32, {});
  ValueId cn = cond.Input("n", DType::kI32, {});
  cond.Output(
      "go", cond.Op("compare", {ci, cn}, {{DType::kI1, {}}}, {{"comparison_direction", "LT"}})[0]);
  FunctionBuilder& body = b.AddFunction("loop.body");
  body.MarkRegion();
  ValueId bi = body.State("i", DType::kI32, {});
  body.Input("n", DType::kI32, {});
  const int32_t one = 1;
  ValueId c1 =
      body.Op("constant", {}, {{DType::kI32, {}}},
              {{"value", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(&one),
                                              reinterpret_cast<const uint8_t*>(&one) + 4)}})[0];
  body.Output("i_next", body.Op("add", {bi, c1}, {{DType::kI32, {}}})[0], "i");
  return b.Serialize().value();
}

template <typename T>
uint32_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// Edits one field of the (mutable) executable so it is out of range.
// Returns a description, or "" if the chosen field does not exist.
std::string BreakField(uint8_t* data, std::mt19937_64& rng) {
  auto* root = fb::GetMutableSizePrefixedExecutable(data);
  auto* fns = root->mutable_functions();
  auto* fn = fns->GetMutableObject(rng() % fns->size());
  auto pick = [&](auto* vec) { return vec->GetMutableObject(rng() % vec->size()); };
  const uint32_t big = static_cast<uint32_t>(fn->values()->size() + 1 + rng() % 1000);
  switch (rng() % 14) {
    case 0: {
      auto* op = pick(fn->mutable_ops());
      if (!op->operands() || op->operands()->size() == 0) return "";
      op->mutable_operands()->Mutate(rng() % op->operands()->size(), big);
      return "operand index";
    }
    case 1:
      pick(fn->mutable_ops())->mutable_results()->Mutate(0, big);
      return "result index";
    case 2:
      pick(fn->mutable_arguments())->mutate_value(big);
      return "argument value index";
    case 3: {
      auto* v = pick(fn->mutable_values());
      if (!v->dims() || v->dims()->size() == 0) return "";
      auto* d = v->mutable_dims()->GetMutableObject(0);
      return d->mutate_size(rng() % 2 ? -7 : (int64_t{1} << 61)) ? "dimension size" : "";
    }
    case 4:
      pick(fn->mutable_values())->mutate_dtype(static_cast<fb::DType>(40 + rng() % 80));
      return "dtype";
    case 5: {
      if (!root->weights() || root->weights()->size() == 0) return "";
      auto* w = root->mutable_weights()->GetMutableObject(rng() % root->weights()->size());
      if (rng() % 2)
        w->mutate_offset(w->offset() + (uint64_t{1} << 40));
      else
        w->mutate_length(w->length() + 4 + rng() % 64);
      return "weight segment";
    }
    case 6: {
      auto* plan = fn->mutable_plan();
      if (!plan) return "";
      for (uint32_t v = 0; v < plan->value_arena()->size(); ++v)
        if (plan->value_arena()->Get(v) >= 0) {
          plan->mutable_value_offset()->Mutate(
              v, plan->arenas()->Get(0)->size() + 256 * (1 + rng() % 10));
          return "plan offset";
        }
      return "";
    }
    case 7: {
      auto* plan = fn->mutable_plan();
      if (!plan || plan->value_arena()->size() == 0) return "";
      plan->mutable_value_arena()->Mutate(rng() % plan->value_arena()->size(), 5 + rng() % 5);
      return "plan arena index";
    }
    case 8: {
      for (uint32_t o = 0; o < fn->ops()->size(); ++o)
        for (uint32_t k = 0; k < Len(fn->ops()->Get(o)->attrs()); ++k) {
          auto* a = fn->mutable_ops()->GetMutableObject(o)->mutable_attrs()->GetMutableObject(k);
          if (a->ints() && a->ints()->size() > 0 && rng() % 2) {
            a->mutable_ints()->Mutate(rng() % a->ints()->size(), 50 + rng() % 1000);
            return "integer attribute";
          }
        }
      return "";
    }
    case 9:
      pick(fn->mutable_arguments())->mutate_role(static_cast<fb::ArgRole>(4 + rng() % 100));
      return "role";
    case 10: {
      for (uint32_t k = 0; k < fn->arguments()->size(); ++k)
        if (auto* a = fn->mutable_arguments()->GetMutableObject(k);
            a->role() == fb::ArgRole::Output)
          return a->mutate_alias_argument(100 + rng() % 100) ? "alias" : "";
      return "";
    }
    case 11:
      pick(fn->mutable_ops())->mutate_device(static_cast<fb::DeviceKind>(2 + rng() % 100));
      return "op device";
    case 12: {
      for (uint32_t k = 0; k < fn->arguments()->size(); ++k)
        if (auto* a = fn->mutable_arguments()->GetMutableObject(k);
            a->role() == fb::ArgRole::Weight)
          return a->mutate_weight(static_cast<int32_t>(100 + rng() % 100)) ? "weight index" : "";
      return "";
    }
    default: {
      auto* op = pick(fn->mutable_ops());
      auto* kind = op->mutable_kind();
      kind->Mutate(0, static_cast<char>('#'));  // unknown op kind
      return "op kind";
    }
  }
}

// A thousand mutants of `base`: bit flips, truncations and fields broken
// out of range, each rejected with a message or still valid.
// `min_semantic_share`: the least share of mutants that must get past the
// checksum and the verifier (a small executable is mostly structure).
void MutateAThousand(const std::vector<uint8_t>& base, size_t min_field_kinds,
                     double min_semantic_share) {
  ASSERT_TRUE(Session::LoadMemory(base).ok());
  const uint32_t fb_end = flatbuffers::ReadScalar<uint32_t>(base.data()) + 4;
  std::mt19937_64 rng(1000);
  int bit_flips = 0, truncations = 0, fields = 0;
  int flips_past_verifier = 0, flips_loaded = 0;
  std::set<std::string> kinds;
  for (int i = 0; fields + bit_flips + truncations < 1000; ++i) {
    std::vector<uint8_t> bytes = base;
    std::string what;
    const int mode = i % 5;
    if (mode < 2) {
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k)
        bytes[rng() % fb_end] ^= static_cast<uint8_t>(1u << (rng() % 8));
      if (bytes == base) continue;
      ++bit_flips;
      // A flip that breaks the structure the checksum lives in cannot be resealed.
      const bool sealed = core::SealExecutable(bytes.data(), bytes.size());
      auto s = Session::LoadMemory(bytes);
      if (s.ok()) {
        ++flips_loaded;
        for (const FunctionInfo& f : (*s)->functions()) (void)(*s)->NewRequest(f.name);
        continue;
      }
      EXPECT_FALSE(s.status().message().empty());
      const std::string& m = s.status().message();
      if (sealed && m.find("checksum") != std::string::npos)
        ADD_FAILURE() << "a resealed flip failed the checksum";
      if (m.find("identifier") == std::string::npos && m.find("FlatBuffer") == std::string::npos)
        ++flips_past_verifier;
      continue;
    } else if (mode == 2) {
      bytes.resize(rng() % bytes.size());
      what = "truncation to " + std::to_string(bytes.size());
      ++truncations;
    } else {
      what = BreakField(bytes.data(), rng);
      if (what.empty()) continue;
      ASSERT_TRUE(core::SealExecutable(bytes.data(),
                                       bytes.size()));  // so the semantic checks must catch it
      kinds.insert(what);
      ++fields;
    }
    auto s = Session::LoadMemory(bytes);
    ASSERT_FALSE(s.ok()) << "mutation #" << i << " (" << what << ") was accepted";
    EXPECT_FALSE(s.status().message().empty());
  }
  std::printf(
      "%d resealed bit flips: %d rejected by the FlatBuffers verifier, %d reached and failed the "
      "semantic checks, %d still valid (loaded); rejected %d truncations and %d out-of-range "
      "fields (%zu kinds)\n",
      bit_flips, bit_flips - flips_past_verifier - flips_loaded, flips_past_verifier, flips_loaded,
      truncations, fields, kinds.size());
  EXPECT_GE(kinds.size(), min_field_kinds);
  // Most mutants must get past the checksum and the verifier, or they test
  // nothing of the semantic checks.
  const int past_verifier = fields + flips_past_verifier + flips_loaded;
  std::printf("%d of %d mutants reached the semantic checks\n", past_verifier,
              bit_flips + truncations + fields);
  EXPECT_GT(past_verifier, (bit_flips + truncations + fields) * min_semantic_share);
}

TEST(Mutation, ThousandMutatedExecutablesAreRejectedOrStayValid) {
  MutateAThousand(BaseExecutable(), 12, 0.5);
}

TEST(Mutation, ThousandMutatedLoopsAreRejectedOrStayValid) {
  MutateAThousand(LoopExecutable(), 8, 0.35);
}

}  // namespace
}  // namespace brt::test

namespace brt::test {
namespace {

// Inputs the fuzzer once crashed on (tests/fuzz/regressions): each must now be
// rejected cleanly. They are raw fuzzer inputs, sealed like the fuzzer does.
TEST(Mutation, FuzzerRegressionsAreRejected) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(BRT_FUZZ_REGRESSIONS_DIR)) {
    std::ifstream f(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                               std::istreambuf_iterator<char>());
    core::SealExecutable(bytes.data(), bytes.size());
    EXPECT_FALSE(Session::LoadMemory(bytes).ok()) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 1);
}

}  // namespace
}  // namespace brt::test
