// The MPI provider's engine: one comm thread per process is the only thread
// that calls MPI. Kernels post non-blocking transfers to it and go on
// computing (the overlapped kernels run a GEMM meanwhile); the thread
// progresses them with MPI_Testall, applies the opt-in simulated link, and
// watches the peers: a peer process that is gone, or a wait past the
// timeout, fails the transfer with a message naming the ranks, and aborts
// the communicator so later collectives fail at once instead of hanging.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace brt::mpi {

using Clock = std::chrono::steady_clock;

struct Peer {
  int pid = 0;
  std::string host;
};

// The world's facts every communicator of it shares.
struct World {
  int rank = 0, size = 1;
  std::vector<Peer> peers;  // per world rank
  double timeout_seconds = 300;
  std::atomic<bool> aborted{false};
  std::string abort_reason;  // set once, before `aborted`
};

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::vector<int> world_ranks;  // per member: its world rank
  std::shared_ptr<World> world;
};

// One step of communication: the requests `post` makes on the comm thread.
// Kernels keep one per instance and reuse it.
struct Transfer {
  const Comm* comm = nullptr;
  std::function<void(std::vector<MPI_Request>&)> post;
  // Bytes this rank puts on the wire, for the simulated link.
  size_t wire_bytes = 0;
  // What it is, for messages ("all_reduce"): a literal, so posting one
  // allocates nothing.
  const char* what = "";

  // Owned by the engine while in flight.
  std::vector<MPI_Request> requests;
  Clock::time_point posted, ready_at, completed;
  bool done = false;
  std::string error;
};

class Engine {
 public:
  static Engine& Get();
  ~Engine();

  // Runs fn on the comm thread and waits for it; fn returns an error
  // message, empty on success. Used for setup (init, split, allgather).
  std::string Call(std::function<std::string()> fn);
  // Starts t (its post runs on the comm thread); Wait blocks until it is
  // done and returns its error, empty on success.
  void Start(Transfer& t);
  std::string Wait(Transfer& t);
  // Start + Wait.
  std::string Run(Transfer& t) {
    Start(t);
    return Wait(t);
  }

  // Whether this process has called MPI_Init through the engine (it then
  // finalizes at exit unless a peer was lost).
  bool initialized_here() const { return initialized_here_; }
  void set_initialized_here() { initialized_here_ = true; }
  void NoteAbort() { lost_peer_ = true; }

 private:
  Engine();
  void Loop();
  void Progress(Transfer& t, Clock::time_point now);
  void Watch(Clock::time_point now);
  void Fail(Transfer& t, const std::string& message);

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::function<void()>> calls_;
  std::vector<Transfer*> incoming_, active_;
  bool stop_ = false;
  bool initialized_here_ = false;
  bool lost_peer_ = false;
  Clock::time_point last_watch_{};
  // The simulated link (BRT_MPI_LINK_DELAY_US, BRT_MPI_LINK_GBPS): one link
  // per rank, transfers queued on it; each completes no sooner than its
  // latency plus bytes / bandwidth after the link is free. The comm thread
  // sleeps meanwhile, costing no CPU.
  double link_delay_us_ = 0, link_gbps_ = 0;
  Clock::time_point link_free_{};
  std::thread* thread_ = nullptr;
};

// Removes the note this rank leaves when it gives up on a lost peer (in
// /dev/shm, keyed by rank 0's pid and host), at the start of a job.
void ForgetLostRankNote(const World& w);

// Aborts c's world: later and pending transfers on it fail with `reason`.
void Abort(const Comm& c, const std::string& reason);

}  // namespace brt::mpi
