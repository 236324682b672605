// AG+GEMM and GEMM+RS under mpirun: the GEMM alone, the collective alone,
// the two in sequence (unfused ops) and the overlapped op
// (brt.all_gather_matmul / brt.matmul_reduce_scatter), medians of --iters
// runs. Rank 0 prints a markdown table. With the mpi provider's simulated
// link (BRT_MPI_LINK_DELAY_US, BRT_MPI_LINK_GBPS) a transfer takes the time
// a real link would, sleeping without CPU, so overlap shows on few cores.
//
//   mpirun -np 4 build/bench/overlap_bench --rows 256 --k 1024 --n 1024
//   --trace: prints the overlapped ops' per-step timestamps (BRT_MPI_TRACE)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "brt/builder.h"
#include "brt/session.h"

namespace {

using brt::DType;

struct Program {
  std::shared_ptr<brt::Session> session;
  std::unique_ptr<brt::RequestContext> ctx;
  std::vector<std::vector<float>> buffers;
};

// Loads `b` and binds random inputs and outputs of the given sizes.
Program Load(const brt::ExecutableBuilder& b) {
  Program p;
  auto bytes = b.Serialize();
  auto s = brt::Session::LoadMemory(*bytes);
  if (!s.ok()) {
    std::fprintf(stderr, "overlap_bench: %s\n", s.status().message().c_str());
    std::exit(2);
  }
  p.session = *s;
  p.ctx = std::move(p.session->NewRequest().value());
  std::mt19937 rng(7 + p.session->rank());
  std::uniform_real_distribution<float> u(-1, 1);
  const auto& args = p.ctx->function().arguments;
  p.buffers.resize(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (const brt::Dim& d : args[a].shape) dims.push_back(d.size), n *= d.size;
    p.buffers[a].resize(n);
    for (float& x : p.buffers[a]) x = u(rng);
    if (!p.ctx->Bind(a, brt::Tensor::Borrow(p.buffers[a].data(), DType::kF32, dims)).ok())
      std::exit(2);
  }
  return p;
}

double RunMs(Program& p) {
  auto start = std::chrono::steady_clock::now();
  brt::Status s = p.ctx->Run();
  if (!s.ok()) {
    std::fprintf(stderr, "overlap_bench: %s\n", s.message().c_str());
    std::exit(3);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double Median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The four variants run round-robin, so the machine's slow phases (a shared
// host) hit them alike; medians of each.
void Measure(Program (&p)[4], int iters, double* out[4]) {
  std::vector<double> t[4];
  for (int i = 0; i < iters + 2; ++i)
    for (int v = 0; v < 4; ++v) {
      const double ms = RunMs(p[v]);
      if (i >= 2) t[v].push_back(ms);  // the first runs prepare and warm up
    }
  for (int v = 0; v < 4; ++v) *out[v] = Median(t[v]);
}

std::vector<brt::Attribute> DotAttrs() {
  return {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
          {"rhs_contracting_dimensions", std::vector<int64_t>{0}}};
}

struct Row {
  std::string op;
  double gemm, comm, sequential, fused;
};

// AG+GEMM: x [rows, k] per rank, gathered to [ranks*rows, k], times w [k, n].
Row AllGatherMatmul(int ranks, int64_t rows, int64_t k, int64_t n, int iters) {
  const int64_t m = ranks * rows;
  Row r{"AG+GEMM", 0, 0, 0, 0};
  Program p[4];
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {m, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    f.Output("y", f.Op("dot_general", {x, w}, {{DType::kF32, {m, n}}}, DotAttrs())[0]);
    p[0] = Load(b);
  }
  auto gather = [&](brt::FunctionBuilder& f, brt::ValueId x) {
    return f.Op("all_gather", {x}, {{DType::kF32, {m, k}}}, {{"all_gather_dim", int64_t{0}}})[0];
  };
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    f.Output("y", gather(f, f.Input("x", DType::kF32, {rows, k})));
    p[1] = Load(b);
  }
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {rows, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    f.Output("y", f.Op("dot_general", {gather(f, x), w}, {{DType::kF32, {m, n}}}, DotAttrs())[0]);
    p[2] = Load(b);
  }
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {rows, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    auto attrs = DotAttrs();
    attrs.push_back({"all_gather_dim", int64_t{0}});
    f.Output("y", f.Op("brt.all_gather_matmul", {x, w}, {{DType::kF32, {m, n}}}, attrs)[0]);
    p[3] = Load(b);
  }
  double* out[4] = {&r.gemm, &r.comm, &r.sequential, &r.fused};
  Measure(p, iters, out);
  return r;
}

// GEMM+RS: x [ranks*rows, k] times w [k, n] per rank, the partial products
// reduce-scattered to [rows, n].
Row MatmulReduceScatter(int ranks, int64_t rows, int64_t k, int64_t n, int iters) {
  const int64_t m = ranks * rows;
  Row r{"GEMM+RS", 0, 0, 0, 0};
  Program p[4];
  auto scatter = [&](brt::FunctionBuilder& f, brt::ValueId y) {
    return f.Op("reduce_scatter", {y}, {{DType::kF32, {rows, n}}},
                {{"scatter_dimension", int64_t{0}}, {"reducer", "add"}})[0];
  };
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {m, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    f.Output("y", f.Op("dot_general", {x, w}, {{DType::kF32, {m, n}}}, DotAttrs())[0]);
    p[0] = Load(b);
  }
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    f.Output("z", scatter(f, f.Input("y", DType::kF32, {m, n})));
    p[1] = Load(b);
  }
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {m, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    auto y = f.Op("dot_general", {x, w}, {{DType::kF32, {m, n}}}, DotAttrs())[0];
    f.Output("z", scatter(f, y));
    p[2] = Load(b);
  }
  {
    brt::ExecutableBuilder b;
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {m, k});
    auto w = f.Input("w", DType::kF32, {k, n});
    auto attrs = DotAttrs();
    attrs.push_back({"scatter_dimension", int64_t{0}});
    f.Output("z", f.Op("brt.matmul_reduce_scatter", {x, w}, {{DType::kF32, {rows, n}}}, attrs)[0]);
    p[3] = Load(b);
  }
  double* out[4] = {&r.gemm, &r.comm, &r.sequential, &r.fused};
  Measure(p, iters, out);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 256, k = 1024, n = 1024;
  int iters = 15;
  bool trace = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : 0; };
    if (a == "--rows")
      rows = next();
    else if (a == "--k")
      k = next();
    else if (a == "--n")
      n = next();
    else if (a == "--iters")
      iters = static_cast<int>(next());
    else if (a == "--trace")
      trace = true;
    else {
      std::fprintf(stderr,
                   "usage: overlap_bench [--rows R] [--k K] [--n N] [--iters I] [--trace]\n");
      return 1;
    }
  }
  if (trace) setenv("BRT_MPI_TRACE", "1", 1);
  const char* size_env = std::getenv("OMPI_COMM_WORLD_SIZE");
  const int ranks = size_env ? std::atoi(size_env) : 1;
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  const bool leader = !rank_env || std::atoi(rank_env) == 0;
  std::vector<Row> table = {AllGatherMatmul(ranks, rows, k, n, iters),
                            MatmulReduceScatter(ranks, rows, k, n, iters)};
  if (!leader) return 0;
  const char* delay = std::getenv("BRT_MPI_LINK_DELAY_US");
  const char* gbps = std::getenv("BRT_MPI_LINK_GBPS");
  std::printf(
      "ranks %d, per-rank rows %lld, K %lld, N %lld; link: delay %s us, %s GB/s; medians "
      "of %d runs (ms)\n\n",
      ranks, static_cast<long long>(rows), static_cast<long long>(k), static_cast<long long>(n),
      delay ? delay : "0", gbps ? gbps : "unlimited", iters);
  std::printf(
      "| op | GEMM alone | comm alone | sequential | overlapped | exposed comm | "
      "overlapped / max(comm, GEMM) | overlapped / sequential |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : table)
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.op.c_str(), r.gemm,
                r.comm, r.sequential, r.fused, r.fused - r.gemm, r.fused / std::max(r.comm, r.gemm),
                r.fused / r.sequential);
  return 0;
}
