// brt-bench: load time, first run, steady-state latency percentiles,
// throughput, CPU time, peak memory, allocator statistics and a per-op
// profile of one function of a .brtx. Exit codes as brt-run's.
//
//   brt-bench model.brtx [--function NAME] [--provider cpu|cuda|PATH] [--warmup N]
//             [--iters N | --duration S] [--concurrency K] [--inputs DIR | --random-inputs SEED]
//             [--threads N] [--no-spinning] [--linger US]
//             [--json out.json] [--trace out.json] [--symbols NAME=SIZE,...]
//             [--shapes NAME=SIZE,...;NAME=SIZE,...]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "brt/session.h"
#include "inputs.h"
#include "npy.h"
#include "shape_sweep.h"
#include "timing.h"

namespace {

using brt::tools::Ms;
using brt::tools::Percentile;

using Clock = std::chrono::steady_clock;

constexpr int kUsageError = 2;
constexpr int kExecutableError = 3;

const char kUsage[] =
    "usage: brt-bench model.brtx [--function NAME] [--provider cpu|cuda|PATH] [--warmup N]\n"
    "                 [--iters N | --duration S] [--concurrency K] [--inputs DIR | --random-inputs "
    "SEED]\n"
    "                 [--threads N] [--no-spinning] [--linger US] [--json out.json]\n"
    "                 [--trace out.json] [--all-ranks] [--symbols NAME=SIZE,...]\n"
    "                 [--shapes NAME=SIZE,...;...]\n"
    "--symbols: the sizes of symbolic dimensions, for random inputs (b=8,s=128).\n"
    "--shapes: time each set of sizes in turn (b=1,s=16;b=1,s=128), one line each.\n"
    "--threads: intra-op threads per request (default: $BRT_NUM_THREADS, else one per CPU);\n"
    "--linger US: after a request, workers wait US microseconds (0-1000) for the next one\n"
    "  spinning without yielding their CPU (SessionOptions::linger_microseconds; default 0).\n"
    "--concurrency K: K threads each running requests on the one Session.\n"
    "Under mpirun every rank runs the same --iters, one request at a time; rank 0 prints\n"
    "(all ranks with --all-ranks) and --json/--trace files get a .rank<r> suffix.\n";

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "brt-bench: %s\n", message.c_str());
  return code;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

bool ShapeIsSymbolic(const brt::FunctionInfo& fn) {
  for (const brt::ArgumentInfo& a : fn.arguments)
    for (const brt::Dim& d : a.shape)
      if (!d.is_static()) return true;
  return false;
}

struct Options {
  std::string model, function, provider = "cpu", inputs_dir, json, trace;
  std::map<std::string, int64_t> symbols;  // --symbols: sizes of random inputs' symbolic dims
  std::vector<std::map<std::string, int64_t>> shapes;  // --shapes: a sweep of them
  int warmup = 10, concurrency = 1, threads = 0, linger_us = 0;
  bool all_ranks = false, spinning = true;
  int64_t iters = 100;
  double duration = 0;  // seconds; overrides iters when set
  uint64_t seed = 0;
};

bool ParseArgs(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto number = [&](auto* out) {
      const char* v = value();
      if (!v) return *error = a + " needs a value", false;
      try {
        size_t used = 0;
        const double d = std::stod(v, &used);
        if (used != std::string(v).size() || d < 0) throw 0;
        *out = static_cast<std::remove_pointer_t<decltype(out)>>(d);
      } catch (...) {
        return *error = a + " takes a non-negative number, got '" + v + "'", false;
      }
      return true;
    };
    auto text = [&](std::string* out) {
      const char* v = value();
      if (!v) return *error = a + " needs a value", false;
      *out = v;
      return true;
    };
    bool ok = true;
    if (a == "--function")
      ok = text(&o->function);
    else if (a == "--provider")
      ok = text(&o->provider);
    else if (a == "--inputs")
      ok = text(&o->inputs_dir);
    else if (a == "--json")
      ok = text(&o->json);
    else if (a == "--trace")
      ok = text(&o->trace);
    else if (a == "--warmup")
      ok = number(&o->warmup);
    else if (a == "--iters")
      ok = number(&o->iters);
    else if (a == "--duration")
      ok = number(&o->duration);
    else if (a == "--concurrency")
      ok = number(&o->concurrency);
    else if (a == "--threads")
      ok = number(&o->threads);
    else if (a == "--no-spinning")
      o->spinning = false;
    else if (a == "--linger")
      ok = number(&o->linger_us);
    else if (a == "--random-inputs")
      ok = number(&o->seed);
    else if (a == "--symbols") {
      std::string given;
      if (!text(&given)) return false;
      auto parsed = brt::tools::ParseSymbols(given);
      if (!parsed.ok()) return *error = parsed.status().message(), false;
      o->symbols = *parsed;
    } else if (a == "--shapes") {
      std::string given;
      if (!text(&given)) return false;
      auto parsed = brt::tools::ParseShapeSweep(given);
      if (!parsed.ok()) return *error = parsed.status().message(), false;
      o->shapes = *parsed;
    } else if (a == "--all-ranks")
      o->all_ranks = true;
    else if (a.rfind("-", 0) == 0)
      return *error = "unknown option '" + a + "'", false;
    else if (o->model.empty())
      o->model = a;
    else
      return *error = "unexpected argument '" + a + "'", false;
    if (!ok) return false;
  }
  if (o->model.empty()) return *error = "no model given", false;
  if (o->concurrency < 1) return *error = "--concurrency must be at least 1", false;
  if (o->iters < 1 && o->duration <= 0) return *error = "--iters must be at least 1", false;
  return true;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// The threading a run had, for the record: the Session's intra-op threads
// and the ISA caps in the environment.
std::string Threading(const brt::Session& s) {
  std::string text = s.intra_op_threads()
                         ? std::to_string(s.intra_op_threads()) + " intra-op thread(s), spinning " +
                               (s.allow_spinning() ? "on" : "off") + ", linger " +
                               std::to_string(s.linger_microseconds()) + " us"
                         : std::string("no host thread pool");
  for (const char* cap : {"ONEDNN_MAX_CPU_ISA", "BRT_CPU_ISA"})
    if (const char* v = std::getenv(cap)) text += std::string(", ") + cap + "=" + v;
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help")
      return std::fputs(kUsage, stdout), 0;
  if (!ParseArgs(argc, argv, &o, &error)) return Fail(kUsageError, error + "\n" + kUsage);

  brt::SessionOptions options;
  options.providers = {o.provider};
  options.intra_op_threads = o.threads;
  options.allow_spinning = o.spinning;
  options.linger_microseconds = o.linger_us;
  const auto load_start = Clock::now();
  auto session = brt::Session::LoadFile(o.model, options);
  const double load_ms = Ms(Clock::now() - load_start);
  if (!session.ok()) {
    const auto code = session.status().code();
    return Fail(code == brt::StatusCode::kInvalidExecutable || code == brt::StatusCode::kUnsupported
                    ? kExecutableError
                    : kUsageError,
                session.status().message());
  }
  auto info = (*session)->function(o.function);
  if (!info.ok()) return Fail(kUsageError, info.status().message());
  const brt::FunctionInfo& fn = **info;
  // Ranks of a multi-rank program must issue the same collectives in the
  // same order: the same number of runs, one at a time.
  const int rank = (*session)->rank(), world_size = (*session)->world_size();
  if (world_size > 1 && (o.duration > 0 || o.concurrency > 1))
    return Fail(kUsageError,
                "a multi-rank program runs the same number of requests on every rank, one at a "
                "time: use --iters (not --duration) and --concurrency 1");
  if (!o.shapes.empty()) {
    if (world_size > 1 || o.concurrency > 1 || !o.inputs_dir.empty())
      return Fail(kUsageError, "--shapes sweeps random inputs on one rank, one request at a time");
    brt::Status swept = brt::tools::SweepShapes(**session, fn, o.shapes, o.warmup,
                                                std::max<int64_t>(o.iters, 1), o.seed);
    return swept.ok() ? 0 : Fail(1, swept.message());
  }
  if (world_size > 1 && rank != 0 && !o.all_ranks && !std::freopen("/dev/null", "w", stdout))
    return Fail(1, "cannot silence rank " + std::to_string(rank));
  o.json = o.json.empty() ? o.json : brt::tools::RankSuffixed(o.json, rank, world_size);
  o.trace = o.trace.empty() ? o.trace : brt::tools::RankSuffixed(o.trace, rank, world_size);

  // Inputs: DIR/<argument name>.npy, or random data.
  std::vector<brt::Tensor> inputs;
  std::mt19937_64 rng(o.seed);
  for (int k : fn.input_indices) {
    const brt::ArgumentInfo& arg = fn.arguments[k];
    auto t = o.inputs_dir.empty() ? brt::tools::RandomTensor(arg, rng, o.symbols)
                                  : brt::tools::ReadNpy(o.inputs_dir + "/" + arg.name + ".npy");
    if (!t.ok()) return Fail(kUsageError, "input '" + arg.name + "': " + t.status().message());
    inputs.push_back(*t);
  }
  std::vector<std::unique_ptr<brt::RequestContext>> contexts;
  for (int c = 0; c < o.concurrency; ++c) {
    auto ctx = (*session)->NewRequest(fn.name);
    if (!ctx.ok()) return Fail(kUsageError, ctx.status().message());
    for (size_t i = 0; i < inputs.size(); ++i) {
      brt::Status s = (*ctx)->Bind(fn.input_indices[i], inputs[i]);
      if (!s.ok()) return Fail(kUsageError, s.message());
    }
    contexts.push_back(std::move(ctx).value());
  }

  double first_run_ms = 0;  // measured by thread 0, below

  // Steady state. Each thread warms up and times its own context on the same
  // OS thread; all start together. Thread 0 then records the per-op profile, after the timing.
  const int profiled_runs = 20;
  std::vector<std::vector<double>> latencies(o.concurrency);
  std::vector<std::vector<brt::OpProfile>> traces;
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false}, failed{false};
  std::mutex error_mu;
  auto fail = [&](const brt::Status& s) {
    std::lock_guard<std::mutex> lock(error_mu);
    error = s.message(), failed = true, stop = true;
  };
  // The clock starts as the last thread arrives, before any is released:
  // the timing threads read the deadline right after the barrier.
  Clock::time_point start, deadline;
  auto start_clock = [&]() noexcept {
    start = Clock::now();
    deadline = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(o.duration));
  };
  std::barrier warmed(o.concurrency + 1, start_clock);
  std::barrier timed(o.concurrency + 1);
  std::vector<std::thread> threads;
  for (int c = 0; c < o.concurrency; ++c)
    threads.emplace_back([&, c] {
      // Only these threads run the model, each on its own context.
      if (c == 0) {
        const auto t0 = Clock::now();
        if (brt::Status s = contexts[0]->Run(); !s.ok()) fail(s);
        first_run_ms = Ms(Clock::now() - t0);
      }
      for (int w = 0; w < o.warmup && !stop; ++w)
        if (brt::Status s = contexts[c]->Run(); !s.ok()) fail(s);
      warmed.arrive_and_wait();
      latencies[c].reserve(o.duration > 0 ? 1024
                                          : static_cast<size_t>(o.iters / o.concurrency + 1));
      while (!stop) {
        if (o.duration > 0 ? Clock::now() >= deadline : done.fetch_add(1) >= o.iters) break;
        const auto t0 = Clock::now();
        brt::Status s = contexts[c]->Run();
        latencies[c].push_back(Ms(Clock::now() - t0));
        if (o.duration > 0) done.fetch_add(1);
        if (!s.ok()) fail(s);
      }
      timed.arrive_and_wait();
      if (c != 0) return;
      contexts[0]->SetProfiling(true);
      for (int r = 0; r <= profiled_runs && !stop; ++r) {
        if (brt::Status s = contexts[0]->Run(); !s.ok()) fail(s);
        if (r > 0) traces.push_back(contexts[0]->profile());  // run 0 warms the profiled loop
      }
    });
  warmed.arrive_and_wait();
  const double cpu_start = CpuSeconds();
  // A live progress line once the run takes more than a couple of seconds.
  const bool tty = isatty(STDERR_FILENO);
  const bool report = world_size == 1 || rank == 0 || o.all_ranks;
  auto last_report = start;
  while (!stop && (o.duration > 0 ? Clock::now() < deadline : done.load() < o.iters)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = Clock::now();
    if (report && now - start > std::chrono::seconds(2) &&
        now - last_report > std::chrono::milliseconds(tty ? 500 : 5000)) {
      last_report = now;
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const int64_t runs = o.duration > 0 ? done.load() : std::min<int64_t>(done.load(), o.iters);
      std::fprintf(stderr, "%s[brt-bench] %.1f s, %lld runs, %.1f runs/s%s", tty ? "\r" : "",
                   elapsed, static_cast<long long>(runs), static_cast<double>(runs) / elapsed,
                   tty ? "" : "\n");
      std::fflush(stderr);
    }
  }
  timed.arrive_and_wait();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = CpuSeconds() - cpu_start;
  for (auto& t : threads) t.join();
  if (report && tty && wall > 2) std::fputs("\n", stderr);
  if (failed) return Fail(1, error);
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  if (all.empty()) return Fail(1, "no timed run finished within --duration; give it more time");

  std::map<std::string, std::pair<int64_t, int64_t>> by_kind;  // kind -> (ns, count)
  int64_t profiled_ns = 0;
  for (const auto& run : traces)
    for (const brt::OpProfile& p : run) {
      by_kind[p.kind].first += p.duration_ns, by_kind[p.kind].second += 1;
      profiled_ns += p.duration_ns;
    }
  // Loops and branches: their time holds their regions' ops, which the
  // profile does not list one by one; per op, (ns, iterations) summed.
  struct ControlFlowEntry {
    std::string kind;
    int64_t ns = 0, iterations = 0, least = INT64_MAX, most = 0;
  };
  std::map<int, ControlFlowEntry> control_flow;
  for (const auto& run : traces)
    for (const brt::OpProfile& p : run) {
      if (p.iterations < 0) continue;
      ControlFlowEntry& e = control_flow[p.index];
      e.kind = p.kind;
      e.ns += p.duration_ns, e.iterations += p.iterations;
      e.least = std::min(e.least, p.iterations), e.most = std::max(e.most, p.iterations);
    }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> kinds(by_kind.begin(),
                                                                         by_kind.end());
  std::sort(kinds.begin(), kinds.end(),
            [](auto& a, auto& b) { return a.second.first > b.second.first; });

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const brt::AllocatorStats mem = (*session)->allocator_stats();
  const double runs_per_s = static_cast<double>(all.size()) / wall;

  if (world_size > 1) std::printf("rank %d of %d\n", rank, world_size);
  std::printf("model %s, function %s, provider %s, %d request thread(s)\n", o.model.c_str(),
              fn.name.c_str(), o.provider.c_str(), o.concurrency);
  std::printf("threading: %s\n", Threading(**session).c_str());
  std::printf("load %.3f ms, first run %.3f ms, %zu timed runs in %.3f s\n", load_ms, first_run_ms,
              all.size(), wall);
  std::printf("latency ms: min %.4f  p50 %.4f  p90 %.4f  p99 %.4f  p999 %.4f  max %.4f\n",
              all.front(), Percentile(all, 0.5), Percentile(all, 0.9), Percentile(all, 0.99),
              Percentile(all, 0.999), all.back());
  std::printf("throughput %.1f runs/s, process CPU %.3f s (%.2f cores), peak RSS %.1f MiB\n",
              runs_per_s, cpu, cpu / wall, static_cast<double>(usage.ru_maxrss) / 1024.0);
  std::printf(
      "host allocator: in use %lld B, peak %lld B, reserved %lld B, %lld allocations\n",
      static_cast<long long>(mem.bytes_in_use), static_cast<long long>(mem.peak_bytes_in_use),
      static_cast<long long>(mem.bytes_reserved), static_cast<long long>(mem.num_allocations));
  std::printf("per-op profile (%d runs, top %zu kinds of %zu):\n", profiled_runs,
              std::min<size_t>(10, kinds.size()), kinds.size());
  for (size_t i = 0; i < kinds.size() && i < 10; ++i)
    std::printf("  %-24s %10.4f ms/run  %5.1f%%  (%lld ops/run)\n", kinds[i].first.c_str(),
                static_cast<double>(kinds[i].second.first) / profiled_runs / 1e6,
                100.0 * static_cast<double>(kinds[i].second.first) /
                    static_cast<double>(std::max<int64_t>(profiled_ns, 1)),
                static_cast<long long>(kinds[i].second.second / profiled_runs));

  // Functions with symbolic dimensions: their plans per shape; the first
  // run of a new shape pays the plan.
  const brt::ShapePlanStats plans = (*session)->shape_plan_stats(fn.name).value();
  if (ShapeIsSymbolic(fn))
    std::printf(
        "shape plans: %lld held, %lld hits, %lld misses, %lld evictions, last plan %.3f ms\n",
        static_cast<long long>(plans.plans), static_cast<long long>(plans.hits),
        static_cast<long long>(plans.misses), static_cast<long long>(plans.evictions),
        static_cast<double>(plans.last_plan_ns) / 1e6);

  if (!control_flow.empty())
    std::printf(
        "loops (iterations per run) and branches (the branch taken), each with its "
        "regions' ops:\n");
  for (const auto& [index, e] : control_flow)
    std::printf("  op #%-4d %-8s %10.4f ms/run  %s min %lld, mean %.1f, max %lld\n", index,
                e.kind.c_str(), static_cast<double>(e.ns) / profiled_runs / 1e6,
                e.kind == "while" ? "iterations" : "branch", static_cast<long long>(e.least),
                static_cast<double>(e.iterations) / profiled_runs, static_cast<long long>(e.most));

  if (!o.trace.empty()) {
    // Chrome trace / Perfetto: one event per op, profiled runs back to back.
    std::ofstream f(o.trace);
    f << "{\"traceEvents\": [\n";
    double offset_us = 0;
    bool first = true;
    for (size_t r = 0; r < traces.size(); ++r) {
      double run_end = offset_us;
      for (const brt::OpProfile& p : traces[r]) {
        const double ts = offset_us + static_cast<double>(p.start_ns) / 1e3,
                     dur = static_cast<double>(p.duration_ns) / 1e3;
        f << (first ? "" : ",\n") << "{\"name\": " << JsonString(p.kind)
          << ", \"cat\": \"op\", \"ph\": \"X\", \"ts\": " << ts << ", \"dur\": " << dur
          << ", \"pid\": 1, \"tid\": 1, \"args\": {\"op\": " << p.index << ", \"run\": " << r;
        if (p.iterations >= 0) f << ", \"iterations\": " << p.iterations;
        f << "}}";
        first = false;
        run_end = std::max(run_end, ts + dur);
      }
      offset_us = run_end + 1;
    }
    f << "\n]}\n";
    if (!f) return Fail(1, "cannot write '" + o.trace + "'");
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f.precision(10);  // shares sum to 1 within 1e-9, not the default 6 digits' 1e-6
    f << "{\n  \"model\": " << JsonString(o.model) << ",\n  \"function\": " << JsonString(fn.name)
      << ",\n  \"provider\": " << JsonString(o.provider)
      << ",\n  \"concurrency\": " << o.concurrency
      << ",\n  \"threading\": " << JsonString(Threading(**session))
      << ",\n  \"load_ms\": " << load_ms << ",\n  \"first_run_ms\": " << first_run_ms
      << ",\n  \"runs\": " << all.size() << ",\n  \"wall_s\": " << wall
      << ",\n  \"latency_ms\": {\"min\": " << all.front() << ", \"p50\": " << Percentile(all, 0.5)
      << ", \"p90\": " << Percentile(all, 0.9) << ", \"p99\": " << Percentile(all, 0.99)
      << ", \"p999\": " << Percentile(all, 0.999) << ", \"max\": " << all.back()
      << "},\n  \"throughput_runs_per_s\": " << runs_per_s << ",\n  \"process_cpu_s\": " << cpu
      << ",\n  \"peak_rss_bytes\": " << usage.ru_maxrss * 1024LL
      << ",\n  \"allocator\": {\"cpu\": {\"bytes_in_use\": " << mem.bytes_in_use
      << ", \"peak_bytes_in_use\": " << mem.peak_bytes_in_use
      << ", \"bytes_reserved\": " << mem.bytes_reserved
      << ", \"num_allocations\": " << mem.num_allocations
      << "}},\n  \"shape_plans\": {\"held\": " << plans.plans << ", \"hits\": " << plans.hits
      << ", \"misses\": " << plans.misses << ", \"evictions\": " << plans.evictions
      << ", \"last_plan_ms\": " << static_cast<double>(plans.last_plan_ns) / 1e6
      << "},\n  \"profile\": [";
    for (size_t i = 0; i < kinds.size(); ++i)
      f << (i ? ", " : "") << "{\"kind\": " << JsonString(kinds[i].first)
        << ", \"ms_per_run\": " << static_cast<double>(kinds[i].second.first) / profiled_runs / 1e6
        << ", \"share\": "
        << static_cast<double>(kinds[i].second.first) /
               static_cast<double>(std::max<int64_t>(profiled_ns, 1))
        << ", \"ops_per_run\": " << kinds[i].second.second / profiled_runs << "}";
    f << "],\n  \"control_flow\": [";
    bool first_entry = true;
    for (const auto& [index, e] : control_flow) {
      f << (first_entry ? "" : ", ") << "{\"op\": " << index << ", \"kind\": " << JsonString(e.kind)
        << ", \"ms_per_run\": " << static_cast<double>(e.ns) / profiled_runs / 1e6
        << ", \"iterations_per_run\": " << static_cast<double>(e.iterations) / profiled_runs
        << ", \"min\": " << e.least << ", \"max\": " << e.most << "}";
      first_entry = false;
    }
    f << "]\n}\n";
    if (!f) return Fail(1, "cannot write '" + o.json + "'");
  }
  return 0;
}
