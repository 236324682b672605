// Session (a loaded executable, shared by threads) and RequestContext (one
// in-flight request on it). Usage: README.md, "Using it".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brt/status.h"
#include "brt/types.h"

namespace brt {

enum class ArgRole : uint8_t { kInput = 0, kOutput = 1, kWeight = 2, kState = 3 };
const char* ArgRoleName(ArgRole role);

struct ArgumentInfo {
  std::string name;
  ArgRole role = ArgRole::kInput;
  DType dtype = DType::kInvalid;
  std::vector<Dim> shape;
  Device device;
  // For an output written in place of an input/state argument: its index.
  int alias_argument = -1;
  // A per-rank program's argument: per dimension, the mesh axes it is split
  // over ("x", "x,y") or "" where whole. Empty: not partitioned.
  std::vector<std::string> sharding;
};

// A dimension's size given its symbols' values (docs/format.md: a symbolic
// dimension is an expression of them, "b" or "2*b"); a static one's size. An
// error names the expression and a symbol without a value.
Expected<int64_t> DimSize(const Dim& dim, const std::map<std::string, int64_t>& symbols);

struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

struct FunctionInfo {
  std::string name;
  std::vector<ArgumentInfo> arguments;  // in the executable's order
  int num_ops = 0;
  // Positions in `arguments` of the inputs/states the caller binds, and of
  // the outputs in result order.
  std::vector<int> input_indices;
  std::vector<int> output_indices;
  // A per-rank program's device mesh (it runs on the product of the sizes
  // ranks); empty for a single-rank program.
  std::vector<MeshAxis> mesh;
};

// How much a diagnostic matters (SessionOptions::log).
enum class LogLevel : uint8_t { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
const char* LogLevelName(LogLevel level);  // "debug", "info", "warning", "error"

// Receives one diagnostic: its level and a message naming the function or op
// it is about (no "brt:" prefix, no newline).
using LogCallback = std::function<void(LogLevel level, std::string_view message)>;

struct SessionOptions {
  // Providers to load: a name ("cpu" -> libbrt_provider_cpu.so, searched in
  // search_paths, then $BRT_PROVIDER_PATH, then next to libbrt) or a path to
  // a .so. Earlier providers are preferred when several can run an op.
  std::vector<std::string> providers = {"cpu"};
  std::vector<std::string> search_paths;
  // Collectives (all_reduce, ...): the first of `providers` whose plugin table
  // declares the device they run on (collective_devices) runs them; when none
  // does, these are loaded in turn (found like `providers`) and the first
  // that declares it runs them. Only these are loaded for it: loading every
  // plugin to read its table would map the CUDA provider's libraries into a
  // CPU program.
  std::vector<std::string> collective_providers = {"mpi", "nccl"};

  // Multi-rank programs (docs/distributed.md). This process's rank and the
  // number of ranks; -1: from the launcher's environment (BRT_RANK /
  // BRT_WORLD_SIZE, then mpirun's OMPI_COMM_WORLD_*, PMI_*, then torchrun's
  // RANK / WORLD_SIZE). Given here and in the environment, they must agree.
  int rank = -1;
  int world_size = -1;
  // "host:port" where rank 0 serves the rendezvous of providers that need
  // one (NCCL without mpirun); empty: MASTER_ADDR:MASTER_PORT.
  std::string rendezvous;
  // A collective waiting longer than this for its peers fails, naming them
  // (a peer seen dead on this host fails it at once). 0: $BRT_COLLECTIVE_TIMEOUT
  // or 300 s.
  double collective_timeout_seconds = 0;

  // Host (CPU) threads. intra_op_threads: how many threads one request's
  // ops share their work among, the calling thread included; 0: one per CPU
  // this process may run on (its affinity mask). Every Session of a process
  // draws on one set of worker threads (oneTBB's), whatever its count, so
  // two Sessions do not double the threads. allow_spinning: after an op's
  // work, worker threads look for the next op's work for a while (oneTBB's
  // bounded wait: about 1 ms of CPU after a request here) before they
  // sleep; false: they leave as soon as the work in hand is done, for a
  // process that must not spend CPU it does not use, at some latency
  // between ops. An idle process uses no CPU either way. 0 threads reads
  // $BRT_NUM_THREADS first. brt sets no environment variables.
  int intra_op_threads = 0;
  bool allow_spinning = true;
  // linger_microseconds: when an op ends and no other op of the Session is
  // under way, up to intra_op_threads - 1 workers wait for the next op, of
  // this request or the next, spinning without yielding their CPU, each for
  // at most this long (0 to 1000; 200 is what was measured), and a worker
  // found on the CPU of the request's thread moves to another of its CPUs.
  // Beside a lower-priority job, where every CPU
  // runs something else, a oneTBB worker out of work yields its CPU within
  // a microsecond and loses it for a time slice; lingering keeps requests
  // at their quiet speed there (an MLP 0.084 ms against 0.114-0.118, a
  // transformer encoder block 0.50 against 0.94-0.96). Beside a job of
  // equal weight (another session or cgroup, where nice does not rank) the
  // process gets its share of the CPUs whatever it does, and lingering
  // costs a scheduler tick, 4-8 ms, in p99
  // (bench/results/2026-11-27-load-bench-cpu.md). Needs allow_spinning and
  // more than one thread, and is off otherwise. 0: off, the default.
  int linger_microseconds = 0;

  // A while loop that runs this many iterations without its condition
  // turning false fails the request, naming the loop (a guard against
  // runaway loops, e.g. on inputs no one checked); 0: no limit.
  int64_t max_loop_iterations = 0;

  // A function with symbolic dimensions is planned (memory, kernels) once
  // per set of symbol values; this many plans are kept per function, the
  // least recently used dropped first (a request running a dropped plan
  // keeps it until it moves on). At least 1.
  int max_shape_plans = 32;

  // CUDA graphs of a function with symbolic dimensions are kept per set of
  // symbol values: a request context that leaves a shape keeps that shape's
  // graph, with the arenas and kernel instances it replays against (memory
  // the context holds), for up to this many shapes, the least recently left
  // dropped first; coming back to one replays it. 0: a shape change drops
  // the graph, and the new shape runs op by op once, then records again.
  int max_shape_graphs = 8;

  // Verifies the executable and describes its functions (functions(),
  // meshes, shardings) without loading providers, uploading weights,
  // preparing kernels or joining a world: e.g. to slice global inputs for
  // every rank of a per-rank program in one process. NewRequest refuses.
  bool inspect_only = false;

  // Where the Session's diagnostics go (e.g. a function that runs op by op
  // instead of as a CUDA graph, and why): every one, at every level, to this
  // callback instead of stderr. It is called on the thread that runs the
  // request (RunAsync's worker for an asynchronous run), possibly from
  // several requests at once, so it must be thread-safe; it must not call
  // into the Session. Unset: warnings and errors go to stderr
  // ("brt: <message>"), each distinct message once per Session, and debug
  // and info messages nowhere.
  LogCallback log;
};

// A function's plans per set of symbol values (SessionOptions::
// max_shape_plans): a run whose shapes have a plan is a hit, one that plans
// them a miss, which pays plan_ns (memory planning and kernel preparation).
struct ShapePlanStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t evictions = 0;
  int64_t plans = 0;          // held now
  int64_t total_plan_ns = 0;  // spent planning, over every miss
  int64_t last_plan_ns = 0;   // the latest miss's
};

// A request context's CUDA graphs (RequestContext::graph_stats): a run
// that replayed a graph recorded by an earlier run is a hit, one that
// recorded (its shape's first graph, or new bound addresses) a miss.
struct ShapeGraphStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t evictions = 0;  // kept shapes dropped beyond max_shape_graphs
  int64_t kept = 0;       // shapes left and kept now (the current one not counted)
};

struct AllocatorStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_reserved = 0;  // held from the system, in use or cached
  int64_t num_allocations = 0;
};

// Refers to an argument by position (in FunctionInfo::arguments) or by name.
class ArgRef {
 public:
  ArgRef(size_t index) : index_(static_cast<int64_t>(index)) {}  // NOLINT
  ArgRef(int index) : index_(index) {}                           // NOLINT
  ArgRef(std::string_view name) : name_(name) {}                 // NOLINT
  ArgRef(const char* name) : name_(name) {}                      // NOLINT
  ArgRef(const std::string& name) : name_(name) {}               // NOLINT
  bool by_name() const { return index_ < 0; }
  int64_t index() const { return index_; }
  std::string_view name() const { return name_; }

 private:
  int64_t index_ = -1;
  std::string_view name_;
};

enum class Ownership : uint8_t {
  kBorrowed,      // the caller keeps the memory alive until the run is waited on
  kCopied,        // the runtime copies the data now; the caller may reuse it
  kRuntimeOwned,  // the runtime holds the tensor's owner until rebound/destroyed
};

class Session;

// Wall time of one op in a profiled run.
struct OpProfile {
  int index = 0;     // position in the function
  const char* kind;  // op kind (owned by the session)
  int64_t start_ns;  // from the start of the run
  int64_t duration_ns;
  // A while's trip count, or the branch a case took; -1 for other ops.
  int64_t iterations = -1;
};

class RequestContext {
 public:
  ~RequestContext();
  RequestContext(const RequestContext&) = delete;
  RequestContext& operator=(const RequestContext&) = delete;

  const FunctionInfo& function() const;

  // Binds an input, state or output argument. Checks dtype, shape (its own
  // symbolic dims consistent; across arguments, expressions and constraints
  // when the run starts, so a new shape's arguments can be bound one after
  // another), device, and alignment to the element size.
  Status Bind(ArgRef arg, const Tensor& tensor, Ownership ownership = Ownership::kBorrowed);
  // Forgets a binding (an unbound output is allocated by the runtime).
  Status Unbind(ArgRef arg);

  // Starts the run and returns; Wait() blocks until it is done.
  Status RunAsync();
  Status Wait();
  // RunAsync() + Wait(), executed on the calling thread.
  Status Run();

  // The output after a run: the caller's bound tensor, or a runtime-allocated
  // one that stays valid as long as the returned handle lives.
  Expected<Tensor> Output(ArgRef arg) const;
  // All outputs in result order.
  Expected<std::vector<Tensor>> Outputs() const;
  // The output in host memory: Output() itself when it is on the CPU, else a
  // copy of it made through its device's provider (a GPU output's data
  // pointer is device memory, which the host must not read).
  Expected<Tensor> OutputOnHost(ArgRef arg) const;

  // Train state (docs/training.md). A state argument is a value each run
  // updates in place: a donated argument of a JAX train step (parameters,
  // optimizer state). Bind it once and run N steps; its bound buffer holds
  // the latest value and nothing is copied between steps. Bound with
  // Ownership::kCopied, a host tensor is copied into memory the runtime owns
  // on the state's device (uploaded when that is a GPU).
  // The state's current value: its bound tensor, on the state's device.
  Expected<Tensor> State(ArgRef arg) const;
  // Writes every state argument under its name to a .safetensors file
  // (brt/safetensors.h); device state is copied to the host first.
  Status SaveState(const std::string& path) const;
  // Binds every state argument to a copy of the file's tensor of the same
  // name, on the state's device. The file must hold exactly the state's
  // names, with their dtypes and shapes; otherwise nothing is bound.
  Status LoadState(const std::string& path);

  // Runs this context's work for `device` on the caller's native queue (a
  // cudaStream_t for CUDA, e.g. PyTorch's current stream) instead of a queue
  // of its own. Every handle is the caller's, nullptr included: for CUDA it
  // is the default stream (what torch.cuda.current_stream() gives by
  // default). Runs are ordered after what the caller queued before them;
  // Run() still waits for completion. The legacy default stream cannot be
  // recorded into a CUDA graph, so such a context runs op by op (said once).
  Status SetQueue(Device device, void* native_queue);
  // Goes back to a queue of the context's own for `device`.
  Status UseOwnQueue(Device device);
  // CUDA graphs (on by default): at a shape, the first run goes op by op
  // (modules load and libraries make their first calls outside a
  // recording); the second records the device ops and replays the
  // recording, and later runs replay it; new bound addresses re-record
  // (host bindings go through staging buffers that keep their addresses).
  // A function with symbolic dimensions has a graph per shape: leaving a
  // shape keeps its graph (SessionOptions::max_shape_graphs), so runs that
  // alternate between shapes replay. An op that cannot be recorded makes
  // the context run op by op, said once as a warning (SessionOptions::log).
  // Disabling drops the graphs.
  void SetGraphCapture(bool enabled);
  // Whether the last run replayed a recorded graph.
  bool last_run_replayed_graph() const;
  // This context's graph hits, misses and kept shapes.
  ShapeGraphStats graph_stats() const;

  // Records per-op wall time on the following runs (a separate, timed copy
  // of the dispatch loop: unprofiled runs pay nothing).
  void SetProfiling(bool enabled);
  // The per-op times of the last profiled run, in execution order.
  const std::vector<OpProfile>& profile() const;

  struct Impl;  // libbrt's own (a loop's regions run in contexts of their own)

 private:
  friend class Session;
  explicit RequestContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // Maps the file read-only; CPU weights are used in place.
  static Expected<std::shared_ptr<Session>> LoadFile(const std::string& path,
                                                     const SessionOptions& options = {});
  // Copies the bytes.
  static Expected<std::shared_ptr<Session>> LoadMemory(std::span<const uint8_t> bytes,
                                                       const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<FunctionInfo>& functions() const;
  // By name; an empty name means the only function (an error if several).
  Expected<const FunctionInfo*> function(std::string_view name = {}) const;
  const std::string& producer() const;
  // Names of the loaded providers, in preference order.
  std::vector<std::string> provider_names() const;
  // This process's rank and the world size (0 and 1 unless the executable
  // has collectives).
  int rank() const;
  int world_size() const;
  // The host threads a request's ops share their work among (the resolved
  // SessionOptions::intra_op_threads), whether they spin between ops, and
  // how long they linger after a request (0 where allow_spinning is off or
  // there is one thread); 0, false and 0 where no loaded provider runs host
  // work in a pool.
  int intra_op_threads() const;
  bool allow_spinning() const;
  int linger_microseconds() const;

  Expected<std::unique_ptr<RequestContext>> NewRequest(std::string_view function = {}) const;

  AllocatorStats allocator_stats(Device device = {}) const;
  // The shape plans of a function (by name; empty: the only one).
  Expected<ShapePlanStats> shape_plan_stats(std::string_view function = {}) const;
  // Returns cached memory to the system.
  void Trim();

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What a provider plugin can run: one entry per kernel of its registry.
struct KernelListing {
  std::string kind;
  DeviceKind device = DeviceKind::kCpu;
  std::vector<DType> dtypes;
};
Expected<std::vector<KernelListing>> ListProviderKernels(
    const std::string& provider, const std::vector<std::string>& search_paths = {});

}  // namespace brt
