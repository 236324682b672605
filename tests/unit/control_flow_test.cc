// while and case: loops whose trip count is an input, branches of which only
// the taken one runs, against float64 references; and the load-time checks
// that keep a malformed region from running.
#include <thread>

#include "test_util.h"

namespace brt::test {
namespace {

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  return {b, b + n};
}

ValueId Scalar(FunctionBuilder& f, int32_t v, Device d) {
  return f.Op("constant", {}, {{DType::kI32, {}}}, {{"value", Bytes(&v, 4)}}, d)[0];
}

// main(limit: i32, x: f32[4], acc0: f32[4]) -> (trips: i32, acc: f32[4]):
// i = 0; while (i < limit) { i += 1; acc = acc * 0.5 + x }.
// The body updates its carried values in place (state) unless
// `copied_body`, where its results are fresh values the loop copies back.
Expected<std::shared_ptr<Session>> HalvingLoop(bool copied_body = false) {
  const Device d = TestDevice();
  ExecutableBuilder b("control-flow-test");
  FunctionBuilder& main = b.AddFunction("main");
  ValueId limit = main.Input("limit", DType::kI32, {}, d);
  ValueId x = main.Input("x", DType::kF32, {4}, d);
  ValueId acc0 = main.Input("acc0", DType::kF32, {4}, d);
  ValueId i0 = Scalar(main, 0, d);
  auto loop = main.Op("while", {i0, acc0, limit, x}, {{DType::kI32, {}}, {DType::kF32, {4}}},
                      {{"cond", int64_t{1}}, {"body", int64_t{2}}}, d);
  main.Output("trips", loop[0]);
  main.Output("acc", loop[1]);

  FunctionBuilder& cond = b.AddFunction("main.while0.cond");
  cond.MarkRegion();
  ValueId ci = cond.Input("i", DType::kI32, {}, d);
  cond.Input("acc", DType::kF32, {4}, d);
  ValueId climit = cond.Input("limit", DType::kI32, {}, d);
  cond.Input("x", DType::kF32, {4}, d);
  cond.Output("go", cond.Op("compare", {ci, climit}, {{DType::kI1, {}}},
                            {{"comparison_direction", "LT"}}, d)[0]);

  FunctionBuilder& body = b.AddFunction("main.while0.body");
  body.MarkRegion();
  auto carried = [&](const char* name, DType t, std::vector<Dim> dims) {
    return copied_body ? body.Input(name, t, dims, d) : body.State(name, t, dims, d);
  };
  ValueId bi = carried("i", DType::kI32, {});
  ValueId bacc = carried("acc", DType::kF32, {4});
  body.Input("limit", DType::kI32, {}, d);
  ValueId bx = body.Input("x", DType::kF32, {4}, d);
  const float half[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  ValueId h = body.Op("constant", {}, {{DType::kF32, {4}}}, {{"value", Bytes(half, 16)}}, d)[0];
  ValueId next_i = body.Op("add", {bi, Scalar(body, 1, d)}, {{DType::kI32, {}}}, {}, d)[0];
  ValueId scaled = body.Op("multiply", {bacc, h}, {{DType::kF32, {4}}}, {}, d)[0];
  ValueId next_acc = body.Op("add", {scaled, bx}, {{DType::kF32, {4}}}, {}, d)[0];
  body.Output("i_next", next_i, copied_body ? "" : "i");
  body.Output("acc_next", next_acc, copied_body ? "" : "acc");
  return LoadBuilt(b, TestOptions());
}

struct LoopRun {
  int32_t trips = -1;
  std::vector<float> acc = std::vector<float>(4);
};

LoopRun RunLoop(RequestContext& ctx, int32_t limit, const std::vector<float>& x,
                const std::vector<float>& acc0) {
  LoopRun out;
  EXPECT_TRUE(ctx.Bind("limit", Tensor::Borrow(&limit, DType::kI32, {})).ok());
  EXPECT_TRUE(ctx.Bind("x", Tensor::Borrow(const_cast<float*>(x.data()), DType::kF32, {4})).ok());
  EXPECT_TRUE(
      ctx.Bind("acc0", Tensor::Borrow(const_cast<float*>(acc0.data()), DType::kF32, {4})).ok());
  EXPECT_TRUE(ctx.Bind("trips", Tensor::Borrow(&out.trips, DType::kI32, {})).ok());
  EXPECT_TRUE(ctx.Bind("acc", Tensor::Borrow(out.acc.data(), DType::kF32, {4})).ok());
  Status s = ctx.Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::vector<double> HalvingReference(int32_t limit, const std::vector<float>& x,
                                     const std::vector<float>& acc0) {
  std::vector<double> acc(acc0.begin(), acc0.end());
  for (int32_t t = 0; t < limit; ++t)
    for (int k = 0; k < 4; ++k) acc[k] = acc[k] * 0.5 + x[k];
  return acc;
}

std::vector<float> RandomVector(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-2, 2);
  return {u(rng), u(rng), u(rng), u(rng)};
}

TEST(While, TripCountIsAnInput) {
  for (bool copied : {false, true}) {
    auto session = HalvingLoop(copied);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    // Regions are not the Session's functions: callers see main alone.
    ASSERT_EQ((*session)->functions().size(), 1u);
    auto ctx = (*session)->NewRequest();
    ASSERT_TRUE(ctx.ok());
    std::mt19937_64& rng = Rng();
    for (int32_t limit : {0, 1, 7, 40, -3}) {
      const std::vector<float> x = RandomVector(rng), acc0 = RandomVector(rng);
      LoopRun r = RunLoop(**ctx, limit, x, acc0);
      EXPECT_EQ(r.trips, std::max(limit, 0)) << "copied body " << copied;
      const std::vector<double> ref = HalvingReference(limit, x, acc0);
      EXPECT_LT(RelError({r.acc.begin(), r.acc.end()}, ref), 1e-6)
          << "limit " << limit << ", copied body " << copied;
    }
  }
}

TEST(While, ProfileCountsIterations) {
  auto session = HalvingLoop();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = (*session)->NewRequest();
  ASSERT_TRUE(ctx.ok());
  (*ctx)->SetProfiling(true);
  RunLoop(**ctx, 13, RandomVector(Rng()), RandomVector(Rng()));
  bool seen = false;
  for (const OpProfile& p : (*ctx)->profile()) {
    const bool loop = std::string(p.kind) == "while";
    seen = seen || loop;
    EXPECT_EQ(p.iterations, loop ? 13 : -1) << p.kind;
  }
  EXPECT_TRUE(seen);
}

// Every request context runs its loops in regions of its own.
TEST(While, ContextsOnThreadsDoNotShareLoopState) {
  auto session = HalvingLoop();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto ctx = (*session)->NewRequest();
      if (!ctx.ok()) return void(wrong[t] = 1000);
      std::mt19937_64 rng(t);
      for (int run = 0; run < 20; ++run) {
        const int32_t limit = 3 * t + run % 5;
        const std::vector<float> x = RandomVector(rng), acc0 = RandomVector(rng);
        LoopRun r = RunLoop(**ctx, limit, x, acc0);
        if (r.trips != limit ||
            RelError({r.acc.begin(), r.acc.end()}, HalvingReference(limit, x, acc0)) > 1e-6)
          ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

// main(index, x) = case(index) { -x, exp(x), x + x }; or, with an i1
// predicate, if (p) { -x } else { exp(x) }.
Expected<std::shared_ptr<Session>> ThreeBranches(DType index_type = DType::kI32) {
  const Device d = TestDevice();
  ExecutableBuilder b("control-flow-test");
  FunctionBuilder& main = b.AddFunction("main");
  ValueId index = main.Input("index", index_type, {}, d);
  ValueId x = main.Input("x", DType::kF32, {4}, d);
  const std::vector<int64_t> branches =
      index_type == DType::kI1 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 2, 3};
  main.Output("y",
              main.Op("case", {index, x}, {{DType::kF32, {4}}}, {{"branches", branches}}, d)[0]);
  const char* kinds[] = {"negate", "exponential", "add"};
  for (size_t k = 0; k < branches.size(); ++k) {
    FunctionBuilder& f = b.AddFunction("main.case0.branch" + std::to_string(k));
    f.MarkRegion();
    ValueId bx = f.Input("x", DType::kF32, {4}, d);
    std::vector<ValueId> operands = {bx};
    if (k == 2) operands.push_back(bx);
    f.Output("y", f.Op(kinds[k], operands, {{DType::kF32, {4}}}, {}, d)[0]);
  }
  return LoadBuilt(b, TestOptions());
}

TEST(Case, RunsTheTakenBranchAndClampsTheIndex) {
  auto session = ThreeBranches();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = (*session)->NewRequest();
  ASSERT_TRUE(ctx.ok());
  (*ctx)->SetProfiling(true);
  // StableHLO: an index out of range takes the last branch.
  for (int32_t index : {0, 1, 2, -1, 9}) {
    std::vector<float> x = RandomVector(Rng()), y(4, -99.f);
    ASSERT_TRUE((*ctx)->Bind("index", Tensor::Borrow(&index, DType::kI32, {})).ok());
    ASSERT_TRUE((*ctx)->Bind("x", Tensor::Borrow(x.data(), DType::kF32, {4})).ok());
    ASSERT_TRUE((*ctx)->Bind("y", Tensor::Borrow(y.data(), DType::kF32, {4})).ok());
    Status s = (*ctx)->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const int taken = index < 0 || index > 2 ? 2 : index;
    std::vector<double> ref;
    for (float v : x)
      ref.push_back(taken == 0 ? -double(v) : taken == 1 ? std::exp(double(v)) : 2.0 * v);
    EXPECT_LT(RelError({y.begin(), y.end()}, ref), 1e-6) << "index " << index;
    EXPECT_EQ((*ctx)->profile().at(0).iterations, taken);
  }
}

TEST(Case, PredicateTrueTakesTheFirstBranch) {
  auto session = ThreeBranches(DType::kI1);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = (*session)->NewRequest();
  ASSERT_TRUE(ctx.ok());
  for (uint8_t p : {1, 0}) {
    std::vector<float> x = RandomVector(Rng()), y(4, -99.f);
    ASSERT_TRUE((*ctx)->Bind("index", Tensor::Borrow(&p, DType::kI1, {})).ok());
    ASSERT_TRUE((*ctx)->Bind("x", Tensor::Borrow(x.data(), DType::kF32, {4})).ok());
    ASSERT_TRUE((*ctx)->Bind("y", Tensor::Borrow(y.data(), DType::kF32, {4})).ok());
    ASSERT_TRUE((*ctx)->Run().ok());
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(y[k], p ? -x[k] : std::exp(x[k]));
  }
}

// Malformed control flow fails the load, naming the op and the region.
TEST(ControlFlowLoad, RefusesRegionsThatDoNotFit) {
  const Device d = TestDevice();
  auto one_loop = [&](int64_t cond_index, bool mark, DType cond_out, bool captured_state) {
    ExecutableBuilder b("control-flow-test");
    FunctionBuilder& main = b.AddFunction("main");
    ValueId x = main.Input("x", DType::kF32, {4}, d);
    ValueId y = main.Input("y", DType::kF32, {4}, d);
    main.Output("r", main.Op("while", {x, y}, {{DType::kF32, {4}}},
                             {{"cond", cond_index}, {"body", int64_t{2}}}, d)[0]);
    FunctionBuilder& cond = b.AddFunction("cond");
    if (mark) cond.MarkRegion();
    ValueId cx = cond.Input("x", DType::kF32, {4}, d);
    cond.Input("y", DType::kF32, {4}, d);
    const float zero[4] = {};
    ValueId z = cond.Op("constant", {}, {{DType::kF32, {4}}}, {{"value", Bytes(zero, 16)}}, d)[0];
    ValueId lt =
        cond.Op("compare", {cx, z}, {{DType::kI1, {4}}}, {{"comparison_direction", "LT"}}, d)[0];
    cond.Output("go",
                cond_out == DType::kI1
                    ? cond.Op("reduce",
                              {lt, cond.Op("constant", {}, {{DType::kI1, {}}},
                                           {{"value", std::vector<uint8_t>{0}}}, d)[0]},
                              {{DType::kI1, {}}},
                              {{"dimensions", std::vector<int64_t>{0}}, {"reducer", "or"}}, d)[0]
                    : cond.Op("negate", {cx}, {{DType::kF32, {4}}}, {}, d)[0]);
    FunctionBuilder& body = b.AddFunction("body");
    body.MarkRegion();
    ValueId bx = body.State("x", DType::kF32, {4}, d);
    ValueId by = captured_state ? body.State("y", DType::kF32, {4}, d)
                                : body.Input("y", DType::kF32, {4}, d);
    body.Output("x2", body.Op("add", {bx, by}, {{DType::kF32, {4}}}, {}, d)[0], "x");
    return LoadBuilt(b, TestOptions());
  };
  auto ok = one_loop(1, true, DType::kI1, false);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  ExpectError(one_loop(0, true, DType::kI1, false).status(),
              {"function 'main' op #0 'while'", "names function #0 as a region"});
  ExpectError(one_loop(7, true, DType::kI1, false).status(), {"names function #7"});
  ExpectError(one_loop(1, false, DType::kI1, false).status(),
              {"names function 'cond', which is not marked as a region"});
  ExpectError(one_loop(1, true, DType::kF32, false).status(),
              {"its condition, function 'cond'", "output 'go' is f32[4]", "needs i1[]"});
  ExpectError(one_loop(1, true, DType::kI1, true).status(),
              {"its body, function 'body'", "input 'y' is state, but the region may only read it"});
}

TEST(ControlFlowLoad, RefusesAnExecutableOfRegionsOnly) {
  ExecutableBuilder b("control-flow-test");
  const Device d = TestDevice();
  FunctionBuilder& f = b.AddFunction("only");
  f.MarkRegion();
  ValueId x = f.Input("x", DType::kF32, {4}, d);
  f.Output("y", f.Op("negate", {x}, {{DType::kF32, {4}}}, {}, d)[0]);
  ExpectError(LoadBuilt(b, TestOptions()).status(),
              {"every function of the executable is a region"});
}

TEST(ControlFlowLoad, RefusesACaseIndexOfAnotherType) {
  ExpectError(ThreeBranches(DType::kF32).status(),
              {"op #0 'case'", "operand 0 must be an i32 index or an i1 predicate", "got f32[]"});
}

}  // namespace
}  // namespace brt::test
