// The collectives, run multi-rank: ctest starts this under mpirun with 2 and
// 4 ranks. Every rank makes every rank's input from the same seeds, so each
// computes the float64 reference of what it must receive by itself.
#include <dlfcn.h>

#include <cstdlib>

#include "../unit/test_util.h"

namespace brt::test {
namespace {

// The world this process is in (the mpi provider would refuse a mismatch).
int WorldRank() { return std::atoi(std::getenv("OMPI_COMM_WORLD_RANK") ?: "0"); }
int WorldSize() { return std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE") ?: "1"); }

// A tensor in float64 with its shape.
struct Ref {
  std::vector<int64_t> shape;
  std::vector<double> v;
};

int64_t Prod(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

Ref Concat(const std::vector<Ref>& parts, int dim) {
  Ref out{parts[0].shape, {}};
  out.shape[dim] *= static_cast<int64_t>(parts.size());
  const int64_t outer = Prod(parts[0].shape, 0, dim);
  const int64_t chunk = Prod(parts[0].shape, dim, parts[0].shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (const Ref& p : parts)
      out.v.insert(out.v.end(), p.v.begin() + o * chunk, p.v.begin() + (o + 1) * chunk);
  return out;
}

std::vector<Ref> Split(const Ref& t, int dim, int n) {
  std::vector<Ref> parts(n, Ref{t.shape, {}});
  for (Ref& p : parts) p.shape[dim] /= n;
  const int64_t outer = Prod(t.shape, 0, dim);
  const int64_t chunk = Prod(parts[0].shape, dim, t.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int k = 0; k < n; ++k) {
      auto from = t.v.begin() + (o * n + k) * chunk;
      parts[k].v.insert(parts[k].v.end(), from, from + chunk);
    }
  return parts;
}

// Every rank's input for a case: seeds differ per case and per rank.
std::vector<HostTensor> Inputs(DType dtype, std::vector<int64_t> shape, int seed) {
  std::vector<HostTensor> all;
  for (int r = 0; r < WorldSize(); ++r) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000 + r);
    all.push_back(Random(dtype, shape, rng, -2, 2));
  }
  return all;
}

Ref ToRef(const HostTensor& t) { return {t.shape, t.ToDouble()}; }

// Runs the one-op program on this rank's input.
HostTensor RunCollective(const std::string& kind, const HostTensor& input,
                         std::vector<int64_t> out_shape, std::vector<Attribute> attrs) {
  OpRun op{kind, {input}, {{input.dtype, Dims(out_shape)}}, std::move(attrs)};
  return MustRunOp(op)[0];
}

// Replica groups to test with: two interleaved groups on 4 ranks, and the
// whole world in reverse order otherwise (the order sets the gather order).
std::vector<std::vector<int64_t>> Groups() {
  const int n = WorldSize();
  if (n == 4) return {{0, 2}, {1, 3}};
  std::vector<int64_t> all;
  for (int r = n - 1; r >= 0; --r) all.push_back(r);
  return {all};
}

std::vector<Attribute> GroupAttrs(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> flat;
  for (const auto& g : groups) flat.insert(flat.end(), g.begin(), g.end());
  return {{"replica_groups", flat}, {"group_size", static_cast<int64_t>(groups[0].size())}};
}

// This rank's group and its position in it.
std::pair<std::vector<int64_t>, int> MyGroup(const std::vector<std::vector<int64_t>>& groups) {
  for (const auto& g : groups)
    for (size_t k = 0; k < g.size(); ++k)
      if (g[k] == WorldRank()) return {g, static_cast<int>(k)};
  return {{}, -1};
}

double Combine(const std::string& reducer, double a, double b) {
  if (reducer == "add") return a + b;
  if (reducer == "mul") return a * b;
  if (reducer == "max") return std::max(a, b);
  return std::min(a, b);
}

Ref ReduceOver(const std::vector<HostTensor>& all, const std::vector<int64_t>& members,
               const std::string& reducer) {
  Ref out = ToRef(all[members[0]]);
  for (size_t m = 1; m < members.size(); ++m) {
    const std::vector<double> v = all[members[m]].ToDouble();
    for (size_t i = 0; i < v.size(); ++i) out.v[i] = Combine(reducer, out.v[i], v[i]);
  }
  return out;
}

std::vector<int64_t> World() {
  std::vector<int64_t> w;
  for (int r = 0; r < WorldSize(); ++r) w.push_back(r);
  return w;
}

TEST(Collectives, AllReduceEveryReducerAndDType) {
  int seed = 1;
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64, DType::kI32})
    for (std::string reducer : {"add", "max", "min", "mul"}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + reducer);
      auto all = Inputs(dtype, {3, 5}, seed++);
      HostTensor out =
          RunCollective("all_reduce", all[WorldRank()], {3, 5}, {{"reducer", reducer}});
      Ref ref = ReduceOver(all, World(), reducer);
      // bf16 sums round at every step of the reduction.
      const double tol = dtype == DType::kBF16 ? 2e-2 : 1e-6;
      if (dtype == DType::kI32) {
        EXPECT_EQ(out.ToDouble(), ref.v);
      } else {
        EXPECT_LE(RelError(out.ToDouble(), ref.v), tol);
      }
    }
}

TEST(Collectives, AllReduceOverReplicaGroups) {
  auto groups = Groups();
  auto all = Inputs(DType::kF32, {4, 3}, 20);
  auto attrs = GroupAttrs(groups);
  attrs.push_back({"reducer", "add"});
  HostTensor out = RunCollective("all_reduce", all[WorldRank()], {4, 3}, attrs);
  EXPECT_LE(RelError(out.ToDouble(), ReduceOver(all, MyGroup(groups).first, "add").v), 1e-6);
}

TEST(Collectives, AllGatherAlongEachDimension) {
  const int n = WorldSize();
  for (int dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    auto all = Inputs(DType::kF32, {2, 3}, 30 + dim);
    std::vector<int64_t> out_shape = {2, 3};
    out_shape[dim] *= n;
    HostTensor out = RunCollective("all_gather", all[WorldRank()], out_shape,
                                   {{"all_gather_dim", int64_t{dim}}});
    std::vector<Ref> parts;
    for (const auto& t : all) parts.push_back(ToRef(t));
    EXPECT_EQ(out.ToDouble(), Concat(parts, dim).v);
  }
}

TEST(Collectives, AllGatherFollowsTheGroupOrder) {
  auto groups = Groups();
  auto [members, position] = MyGroup(groups);
  auto all = Inputs(DType::kF32, {2, 3}, 35);
  auto attrs = GroupAttrs(groups);
  attrs.push_back({"all_gather_dim", int64_t{1}});
  const int64_t g = static_cast<int64_t>(members.size());
  HostTensor out = RunCollective("all_gather", all[WorldRank()], {2, 3 * g}, attrs);
  std::vector<Ref> parts;
  for (int64_t m : members) parts.push_back(ToRef(all[m]));
  EXPECT_EQ(out.ToDouble(), Concat(parts, 1).v);
}

TEST(Collectives, ReduceScatterAlongEachDimension) {
  const int n = WorldSize();
  for (int dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    std::vector<int64_t> in_shape = {2, 3};
    in_shape[dim] *= n;
    auto all = Inputs(DType::kF32, in_shape, 40 + dim);
    HostTensor out = RunCollective("reduce_scatter", all[WorldRank()], {2, 3},
                                   {{"scatter_dimension", int64_t{dim}}, {"reducer", "add"}});
    Ref sum = ReduceOver(all, World(), "add");
    EXPECT_LE(RelError(out.ToDouble(), Split(sum, dim, n)[WorldRank()].v), 1e-6);
  }
}

TEST(Collectives, AllToAll) {
  const int n = WorldSize();
  auto all = Inputs(DType::kF32, {2, 3 * n}, 50);
  HostTensor out = RunCollective("all_to_all", all[WorldRank()], {2 * n, 3},
                                 {{"split_dimension", int64_t{1}},
                                  {"concat_dimension", int64_t{0}},
                                  {"split_count", int64_t{n}}});
  std::vector<Ref> received;
  for (int src = 0; src < n; ++src) received.push_back(Split(ToRef(all[src]), 1, n)[WorldRank()]);
  EXPECT_EQ(out.ToDouble(), Concat(received, 0).v);
}

TEST(Collectives, CollectivePermuteRingAndPartial) {
  const int n = WorldSize(), me = WorldRank();
  auto all = Inputs(DType::kF32, {3, 2}, 60);
  std::vector<int64_t> ring;
  for (int r = 0; r < n; ++r) ring.insert(ring.end(), {r, (r + 1) % n});
  HostTensor out =
      RunCollective("collective_permute", all[me], {3, 2}, {{"source_target_pairs", ring}});
  EXPECT_EQ(out.ToDouble(), all[(me - 1 + n) % n].ToDouble());
  // Only 0 -> 1: everyone else receives zeros.
  HostTensor partial = RunCollective("collective_permute", all[me], {3, 2},
                                     {{"source_target_pairs", std::vector<int64_t>{0, 1}}});
  EXPECT_EQ(partial.ToDouble(), me == 1 ? all[0].ToDouble() : std::vector<double>(6, 0.0));
}

TEST(Collectives, PartitionIdIsTheRank) {
  OpRun op{"partition_id", {}, {{DType::kI32, {}}}};
  EXPECT_EQ(MustRunOp(op)[0].ToDouble(), std::vector<double>{double(WorldRank())});
}

// x[rows, K] @ w (w given as [K, N], or as [N, K] when transposed).
Ref Matmul(const Ref& x, const Ref& w, bool transposed) {
  const int64_t rows = x.shape[0], k = x.shape[1];
  const int64_t n = transposed ? w.shape[0] : w.shape[1];
  Ref out{{rows, n}, std::vector<double>(rows * n, 0.0)};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out.v[i * n + j] += x.v[i * k + p] * (transposed ? w.v[j * k + p] : w.v[p * n + j]);
  return out;
}

TEST(Collectives, AllGatherMatmulEqualsGatherThenMatmul) {
  const int n = WorldSize();
  // 3 rows move as one piece, 256 rows in four pieces of 64.
  for (int64_t rows : {3, 256})
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(std::to_string(rows) + (transposed ? " rows, rhs [N, K]" : " rows, rhs [K, N]"));
      auto xs = Inputs(DType::kF32, {rows, 8}, 70);
      std::mt19937_64 rng(71);
      HostTensor w = Random(
          DType::kF32, transposed ? std::vector<int64_t>{5, 8} : std::vector<int64_t>{8, 5}, rng);
      OpRun op{"brt.all_gather_matmul",
               {xs[WorldRank()], w},
               {{DType::kF32, Dims({rows * n, 5})}},
               {{"all_gather_dim", int64_t{0}},
                {"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                {"rhs_contracting_dimensions", std::vector<int64_t>{transposed ? 1 : 0}}}};
      HostTensor out = MustRunOp(op)[0];
      std::vector<Ref> parts;
      for (const auto& x : xs) parts.push_back(ToRef(x));
      EXPECT_LE(RelError(out.ToDouble(), Matmul(Concat(parts, 0), ToRef(w), transposed).v), 1e-5);
    }
}

TEST(Collectives, MatmulReduceScatterEqualsMatmulThenScatter) {
  const int n = WorldSize();
  // 2 rows per block move whole, 256 in four pieces of 64.
  for (int64_t rows : {2, 256}) {
    SCOPED_TRACE(std::to_string(rows) + " rows per rank");
    auto xs = Inputs(DType::kF32, {rows * n, 8}, 80);
    // Each rank holds its own slice of the contraction: w differs per rank.
    auto ws = Inputs(DType::kF32, {8, 5}, 82);
    OpRun op{"brt.matmul_reduce_scatter",
             {xs[WorldRank()], ws[WorldRank()]},
             {{DType::kF32, Dims({rows, 5})}},
             {{"scatter_dimension", int64_t{0}},
              {"lhs_contracting_dimensions", std::vector<int64_t>{1}},
              {"rhs_contracting_dimensions", std::vector<int64_t>{0}}}};
    HostTensor out = MustRunOp(op)[0];
    Ref sum{{rows * n, 5}, std::vector<double>(rows * n * 5, 0.0)};
    for (int r = 0; r < n; ++r) {
      Ref p = Matmul(ToRef(xs[r]), ToRef(ws[r]), false);
      for (size_t i = 0; i < p.v.size(); ++i) sum.v[i] += p.v[i];
    }
    EXPECT_LE(RelError(out.ToDouble(), Split(sum, 0, n)[WorldRank()].v), 1e-5);
  }
}

// The mpi provider's comm_broadcast, which shares rank 0's bootstrap blob
// (NCCL's unique id) under mpirun: driven through the plugin ABI directly.
TEST(Collectives, BroadcastSharesRankZerosBytes) {
  void* lib = dlopen(BRT_TEST_MPI_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto get = reinterpret_cast<BrtProviderGetFn>(dlsym(lib, BRT_PROVIDER_ENTRY_SYMBOL));
  const BrtProviderApi* api = get(BRT_PROVIDER_ABI_VERSION);
  ASSERT_TRUE(api && api->comm_broadcast);
  BrtCommConfig config{};
  config.struct_size = sizeof(config);
  config.rank = WorldRank();
  config.world_size = WorldSize();
  config.program_hash = 42;
  config.timeout_seconds = 60;
  BrtErrorBuffer err{};
  void* world = nullptr;
  ASSERT_EQ(api->comm_create(&config, &world, &err), BRT_OK) << err.message;
  std::vector<uint8_t> blob(300, 0);
  if (WorldRank() == 0)
    for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(api->comm_broadcast(world, blob.data(), blob.size(), 0, &err), BRT_OK) << err.message;
  for (size_t i = 0; i < blob.size(); ++i) ASSERT_EQ(blob[i], static_cast<uint8_t>(i * 7 + 1));
  api->comm_destroy(world);
}

// Run with BRT_TEST_MISMATCH=1: rank 1 loads a different program; every rank
// must refuse it, naming both hashes.
TEST(Collectives, MismatchedExecutablesAreRefusedOnEveryRank) {
  if (!std::getenv("BRT_TEST_MISMATCH")) GTEST_SKIP() << "run by the mismatch ctest entry";
  HostTensor x = Inputs(DType::kF32, {2, 3}, 90)[WorldRank()];
  const std::string reducer = WorldRank() == 1 ? "max" : "add";
  OpRun op{"all_reduce", {x}, {{DType::kF32, Dims({2, 3})}}, {{"reducer", reducer}}};
  auto result = RunOp(op);
  ASSERT_FALSE(result.ok());
  ExpectError(result.status(), {"loaded different programs", "executable hash"});
}

// Without a launcher (run by a plain ctest entry).
TEST(RankDiscovery, AProgramWithCollectivesNeedsARank) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  std::mt19937_64 rng(5);
  OpRun op{"all_reduce",
           {Random(DType::kF32, {2}, rng)},
           {{DType::kF32, Dims({2})}},
           {{"reducer", "add"}}};
  ExpectError(RunOp(op).status(),
              {"op #0 'all_reduce'", "does not know its rank", "mpirun", "BRT_RANK"});
}

TEST(RankDiscovery, OptionsAndEnvironmentMustAgree) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  ExecutableBuilder b;
  auto& f = b.AddFunction("main");
  auto x = f.Input("x", DType::kF32, {2});
  f.Output("y", f.Op("all_reduce", {x}, {{DType::kF32, {2}}}, {{"reducer", "add"}})[0]);
  setenv("BRT_RANK", "1", 1);
  setenv("BRT_WORLD_SIZE", "2", 1);
  SessionOptions options;
  options.rank = 0;
  options.world_size = 1;
  ExpectError(LoadBuilt(b, options).status(),
              {"SessionOptions say rank 0 of 1", "BRT_RANK/BRT_WORLD_SIZE", "rank 1 of 2"});
  unsetenv("BRT_RANK");
  unsetenv("BRT_WORLD_SIZE");
}

// An all_reduce of an f32[3] "x" into "y", and options for a world of one.
void AllReduceInAWorldOfOne(ExecutableBuilder& b, SessionOptions& options) {
  auto& f = b.AddFunction("main");
  auto x = f.Input("x", DType::kF32, {3});
  f.Output("y", f.Op("all_reduce", {x}, {{DType::kF32, {3}}}, {{"reducer", "add"}})[0]);
  options.rank = 0;
  options.world_size = 1;
}

// A single process is a world of one: MPI starts as a singleton.
TEST(RankDiscovery, AWorldOfOneRunsWithoutALauncher) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  ExecutableBuilder b;
  SessionOptions options;
  AllReduceInAWorldOfOne(b, options);
  auto session = LoadBuilt(b, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_EQ((*session)->world_size(), 1);
  // Only cpu was named: the first of collective_providers whose table
  // declares the CPU's collectives was loaded for them.
  EXPECT_EQ((*session)->provider_names(), (std::vector<std::string>{"cpu", "mpi"}));
  std::vector<float> in = {1.5f, -2.0f, 3.25f}, out(3, 0.0f);
  auto ctx = (*session)->NewRequest();
  ASSERT_TRUE(ctx.ok());
  ASSERT_TRUE((*ctx)->Bind("x", Tensor::Borrow(in.data(), DType::kF32, {3})).ok());
  ASSERT_TRUE((*ctx)->Bind("y", Tensor::Borrow(out.data(), DType::kF32, {3})).ok());
  ASSERT_TRUE((*ctx)->Run().ok());
  EXPECT_EQ(out, in);
}

// Candidates that do not declare the device are passed over, and when none
// does the error names each one and why.
TEST(RankDiscovery, CollectiveProvidersThatDoNotDeclareTheDeviceAreNamed) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  ExecutableBuilder b;
  SessionOptions options;
  AllReduceInAWorldOfOne(b, options);
  options.collective_providers = {"no_such_plugin", "cpu"};
  ExpectError(LoadBuilt(b, options).status(),
              {"no provider declares collectives on cpu", "no_such_plugin:", "not found",
               "cpu: its table does not declare collectives on cpu"});
  options.collective_providers = {"cpu", "mpi"};
  auto session = LoadBuilt(b, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_EQ((*session)->provider_names(), (std::vector<std::string>{"cpu", "mpi"}));
}

// Shapes and attributes a group of ranks cannot satisfy are refused at load,
// before any byte moves (the mpi and nccl providers share these checks).
TEST(RankDiscovery, MalformedCollectivesAreRefusedAtLoad) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  struct Case {
    std::string kind;
    std::vector<int64_t> out_shape;
    std::vector<Attribute> attrs;
    DType out_dtype;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"all_reduce", {4, 6}, {{"reducer", "xor"}}, DType::kF32, "reducer 'xor' is not add"},
      {"all_reduce", {6, 4}, {{"reducer", "add"}}, DType::kF32, "result shape differs"},
      {"all_gather",
       {8, 6},
       {{"all_gather_dim", int64_t{0}}},
       DType::kF32,
       "result shape [8,6] is not the operand's [4,6] gathered over 1 ranks"},
      {"all_gather", {4, 6}, {{"all_gather_dim", int64_t{2}}}, DType::kF32, "out of range"},
      {"reduce_scatter",
       {2, 6},
       {{"scatter_dimension", int64_t{0}}, {"reducer", "add"}},
       DType::kF32,
       "result shape [2,6] is not the operand's scattered over 1 ranks"},
      {"all_to_all",
       {4, 6},
       {{"split_dimension", int64_t{0}},
        {"concat_dimension", int64_t{1}},
        {"split_count", int64_t{2}}},
       DType::kF32,
       "split_count 2 is not the group size 1"},
      {"collective_permute",
       {4, 6},
       {{"source_target_pairs", std::vector<int64_t>{0, 3}}},
       DType::kF32,
       "source_target_pairs names a rank outside the world of 1"},
      {"collective_permute",
       {4, 6},
       {{"source_target_pairs", std::vector<int64_t>{0, 0, 0, 0}}},
       DType::kF32,
       "this rank is a source twice"},
      {"partition_id", {2}, {}, DType::kU32, "the result must be one u32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + ": " + c.error);
    ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    std::vector<ValueId> operands;
    if (c.kind != "partition_id") operands.push_back(f.Input("x", DType::kF32, {4, 6}));
    f.Output("y", f.Op(c.kind, operands, {{c.out_dtype, Dims(c.out_shape)}}, c.attrs)[0]);
    SessionOptions options;
    options.rank = 0;
    options.world_size = 1;
    ExpectError(LoadBuilt(b, options).status(), {"op #0 '" + c.kind + "'", c.error});
  }
}

// One process describes a 4-rank program (to slice inputs for every rank)
// without a launcher, providers or a GPU; running it is refused.
TEST(RankDiscovery, InspectOnlyDescribesAPerRankProgramInOneProcess) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) GTEST_SKIP() << "runs outside mpirun";
  const Device gpu{DeviceKind::kCuda, 0};
  std::mt19937_64 rng(9);
  HostTensor w = Random(DType::kF32, {8, 6}, rng);
  ExecutableBuilder b;
  auto& f = b.AddFunction("tp");
  auto x = f.Input("x", DType::kF32, {4, 8}, gpu);
  auto wv = f.Weight("w", DType::kF32, {8, 6},
                     {reinterpret_cast<const uint8_t*>(w.data()), w.num_bytes()}, gpu);
  auto y = f.Op("brt.all_gather_matmul", {x, wv}, {{DType::kF32, {16, 6}}},
                {{"all_gather_dim", int64_t{0}},
                 {"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                 {"rhs_contracting_dimensions", std::vector<int64_t>{0}}},
                gpu)[0];
  f.Output("y", y);
  f.SetMesh({{"model", 4}});
  ASSERT_TRUE(f.SetSharding("x", {"model", ""}).ok());
  SessionOptions options;
  options.inspect_only = true;
  options.providers = {};
  auto session = LoadBuilt(b, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  const FunctionInfo& info = (*session)->functions()[0];
  ASSERT_EQ(info.mesh.size(), 1u);
  EXPECT_EQ(info.mesh[0].name, "model");
  EXPECT_EQ(info.mesh[0].size, 4);
  EXPECT_EQ(info.arguments[0].sharding, (std::vector<std::string>{"model", ""}));
  EXPECT_EQ(info.arguments[0].device.kind, DeviceKind::kCuda);
  ExpectError((*session)->NewRequest().status(), {"inspect_only", "runs nothing", "'tp'"});
  // Without inspect_only the same bytes need a device for the weight.
  options.inspect_only = false;
  options.providers = {"cpu"};
  options.rank = 0;
  options.world_size = 1;
  ExpectError(LoadBuilt(b, options).status(), {"weight 'w' lives on cuda"});
}

}  // namespace
}  // namespace brt::test
