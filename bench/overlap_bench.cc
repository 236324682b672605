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

// Loads the one-function program `body` builds.
template <typename Body>
Program Build(Body body) {
  brt::ExecutableBuilder b;
  body(b.AddFunction("main"));
  return Load(b);
}

// x [m, k] times a new input w [k, n].
brt::ValueId Gemm(brt::FunctionBuilder& f, brt::ValueId x, int64_t m, int64_t k, int64_t n) {
  auto w = f.Input("w", DType::kF32, {k, n});
  return f.Op("dot_general", {x, w}, {{DType::kF32, {m, n}}}, DotAttrs())[0];
}

// The fused op of `kind` over x [x_rows, k] and w [k, n], with its
// collective's dimension attribute.
brt::ValueId Fused(brt::FunctionBuilder& f, const char* kind, const char* dim_attr, int64_t x_rows,
                   int64_t out_rows, int64_t k, int64_t n) {
  auto x = f.Input("x", DType::kF32, {x_rows, k});
  auto w = f.Input("w", DType::kF32, {k, n});
  auto attrs = DotAttrs();
  attrs.push_back({dim_attr, int64_t{0}});
  return f.Op(kind, {x, w}, {{DType::kF32, {out_rows, n}}}, attrs)[0];
}

struct Row {
  std::string op;
  double gemm, comm, sequential, fused;
};

// Program 0 the GEMM alone, 1 the collective alone, 2 the two in sequence,
// 3 the overlapped op: measured together.
Row Run(const char* name, Program (&p)[4], int iters) {
  Row r{name, 0, 0, 0, 0};
  double* out[4] = {&r.gemm, &r.comm, &r.sequential, &r.fused};
  Measure(p, iters, out);
  return r;
}

// AG+GEMM: x [rows, k] per rank, gathered to [ranks*rows, k], times w [k, n].
Row AllGatherMatmul(int ranks, int64_t rows, int64_t k, int64_t n, int iters) {
  const int64_t m = ranks * rows;
  auto gather = [&](brt::FunctionBuilder& f) {
    return f.Op("all_gather", {f.Input("x", DType::kF32, {rows, k})}, {{DType::kF32, {m, k}}},
                {{"all_gather_dim", int64_t{0}}})[0];
  };
  Program p[4] = {
      Build([&](auto& f) {
        f.Output("y", Gemm(f, f.Input("x", DType::kF32, {m, k}), m, k, n));
      }),
      Build([&](auto& f) { f.Output("y", gather(f)); }),
      Build([&](auto& f) { f.Output("y", Gemm(f, gather(f), m, k, n)); }), Build([&](auto& f) {
        f.Output("y", Fused(f, "brt.all_gather_matmul", "all_gather_dim", rows, m, k, n));
      })};
  return Run("AG+GEMM", p, iters);
}

// GEMM+RS: x [ranks*rows, k] times w [k, n] per rank, the partial products
// reduce-scattered to [rows, n].
Row MatmulReduceScatter(int ranks, int64_t rows, int64_t k, int64_t n, int iters) {
  const int64_t m = ranks * rows;
  auto scatter = [&](brt::FunctionBuilder& f, brt::ValueId y) {
    return f.Op("reduce_scatter", {y}, {{DType::kF32, {rows, n}}},
                {{"scatter_dimension", int64_t{0}}, {"reducer", "add"}})[0];
  };
  Program p[4] = {
      Build([&](auto& f) {
        f.Output("y", Gemm(f, f.Input("x", DType::kF32, {m, k}), m, k, n));
      }),
      Build([&](auto& f) {
        f.Output("z", scatter(f, f.Input("y", DType::kF32, {m, n})));
      }),
      Build([&](auto& f) {
        f.Output("z", scatter(f, Gemm(f, f.Input("x", DType::kF32, {m, k}), m, k, n)));
      }),
      Build([&](auto& f) {
        f.Output("z", Fused(f, "brt.matmul_reduce_scatter", "scatter_dimension", m, rows, k, n));
      })};
  return Run("GEMM+RS", p, iters);
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
