#include "engine.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace brt::mpi {
namespace {

double EnvDouble(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atof(v) : 0.0;
}

// A process on this host that has exited (gone, or a zombie not yet reaped).
bool ProcessGone(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  if (!(stat >> pid_field >> name >> state)) return false;
  return state == "Z" || state == "X";
}

// A rank that gives up because a peer is gone leaves a note naming the lost
// rank, so peers that see it leave next blame the rank really lost, not it.
std::string NotePath(const World& w, int rank) {
  const Peer& first = w.peers.empty() ? Peer{} : w.peers[0];
  return "/dev/shm/brt-lost-rank-" + first.host + "-" + std::to_string(first.pid) + "-" +
         std::to_string(rank);
}

int LostRankNoted(const World& w, int rank) {
  std::ifstream note(NotePath(w, rank));
  int lost = -1;
  return note >> lost ? lost : -1;
}

}  // namespace

void ForgetLostRankNote(const World& w) { std::remove(NotePath(w, w.rank).c_str()); }

namespace {

std::string HostName() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace

Engine& Engine::Get() {
  static Engine engine;
  return engine;
}

Engine::Engine() {
  link_delay_us_ = EnvDouble("BRT_MPI_LINK_DELAY_US");
  link_gbps_ = EnvDouble("BRT_MPI_LINK_GBPS");
  thread_ = new std::thread([this] { Loop(); });
}

Engine::~Engine() {
  if (initialized_here_ && !lost_peer_)
    Call([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
      return std::string();
    });
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_->join();
  delete thread_;
}

std::string Engine::Call(std::function<std::string()> fn) {
  std::string result;
  bool finished = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back([&] {
      std::string r = fn();
      std::lock_guard<std::mutex> inner(mu_);
      result = std::move(r);
      finished = true;
    });
  }
  work_cv_.notify_all();
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return finished; });
  return result;
}

void Engine::Start(Transfer& t) {
  t.done = false;
  t.error.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The simulated link starts sending when the kernel posts, as a NIC
    // would, not when the comm thread (which may wait for a core) gets to it.
    const Clock::time_point now = Clock::now();
    t.posted = now;
    const double wire_us =
        link_gbps_ > 0 ? static_cast<double>(t.wire_bytes) / (link_gbps_ * 1e3) : 0;
    const Clock::time_point on_link = std::max(now, link_free_);
    link_free_ = on_link + std::chrono::microseconds(static_cast<int64_t>(wire_us));
    t.ready_at = link_free_ + std::chrono::microseconds(static_cast<int64_t>(link_delay_us_));
    incoming_.push_back(&t);
  }
  work_cv_.notify_all();
}

std::string Engine::Wait(Transfer& t) {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return t.done; });
  return t.error;
}

void Engine::Fail(Transfer& t, const std::string& message) {
  t.error = message;
  t.done = true;
}

void Abort(const Comm& c, const std::string& reason) {
  World& w = *c.world;
  if (!w.aborted.exchange(true)) w.abort_reason = reason;
  Engine::Get().NoteAbort();
}

void Engine::Progress(Transfer& t, Clock::time_point now) {
  if (t.requests.empty()) {
    if (now >= t.ready_at) t.done = true;
    return;
  }
  int complete = 0;
  int rc = MPI_Testall(static_cast<int>(t.requests.size()), t.requests.data(), &complete,
                       MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    Abort(*t.comm, std::string(t.what) + ": MPI: " + std::string(text, len));
    return Fail(t, t.comm->world->abort_reason);
  }
  if (complete) t.requests.clear();
  if (complete && now >= t.ready_at) t.done = true;
}

// Every 100 ms while transfers wait: a member on this host whose process is
// gone fails them (and aborts the world); so does a wait past the timeout.
void Engine::Watch(Clock::time_point now) {
  if (now - last_watch_ < std::chrono::milliseconds(100)) return;
  last_watch_ = now;
  static const std::string here = HostName();
  for (Transfer* t : active_) {
    const Comm& c = *t->comm;
    World& w = *c.world;
    if (w.aborted) {
      Fail(*t, std::string(t->what) + ": " + w.abort_reason);
      continue;
    }
    if (now - t->posted < std::chrono::milliseconds(200)) continue;
    for (int member : c.world_ranks) {
      if (member == w.rank || member >= static_cast<int>(w.peers.size())) continue;
      const Peer& p = w.peers[member];
      if (p.host != here || !ProcessGone(p.pid)) continue;
      const int noted = LostRankNoted(w, member);
      const int lost = noted >= 0 ? noted : member;
      std::string reason = noted >= 0 ? "rank " + std::to_string(member) +
                                            " left after it lost rank " + std::to_string(noted)
                                      : "rank " + std::to_string(member) + " (pid " +
                                            std::to_string(p.pid) + " on " + p.host + ") is gone";
      Abort(c, reason + ": lost rank " + std::to_string(lost));
      std::ofstream(NotePath(w, w.rank)) << lost << "\n";
      Fail(*t, std::string(t->what) + " on rank " + std::to_string(w.rank) + ": " + w.abort_reason);
      break;
    }
    if (t->done) continue;
    const double waited = std::chrono::duration<double>(now - t->posted).count();
    if (waited > w.timeout_seconds) {
      std::string members;
      for (int m : c.world_ranks)
        if (m != w.rank) members += (members.empty() ? "" : ", ") + std::to_string(m);
      Abort(c, "no progress for " + std::to_string(static_cast<int>(waited)) +
                   " s waiting for ranks " + members +
                   " (BRT_COLLECTIVE_TIMEOUT; a lost rank on another host?)");
      Fail(*t, std::string(t->what) + " on rank " + std::to_string(w.rank) + ": " + w.abort_reason);
    }
  }
}

void Engine::Loop() {
  // A poll late by up to kMaxPoll is paid by every collective whose peer
  // posts after it: 500 us made a 42-all_reduce train step twice as slow.
  constexpr auto kMinPoll = std::chrono::microseconds(20),
                 kMaxPoll = std::chrono::microseconds(100);
  std::chrono::microseconds backoff = kMinPoll;
  std::vector<std::function<void()>> calls;
  std::vector<Transfer*> incoming;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active_.empty())
        work_cv_.wait(lock, [&] { return stop_ || !calls_.empty() || !incoming_.empty(); });
      if (stop_ && calls_.empty() && incoming_.empty() && active_.empty()) return;
      calls.swap(calls_);
      incoming.swap(incoming_);
    }
    const bool got_work = !calls.empty() || !incoming.empty();
    for (auto& call : calls) call();
    if (!calls.empty()) done_cv_.notify_all();
    calls.clear();
    const Clock::time_point now = Clock::now();
    bool finished = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Transfer* t : incoming) {
        if (t->comm->world->aborted) {
          Fail(*t, std::string(t->what) + ": " + t->comm->world->abort_reason);
          finished = true;
          continue;
        }
        t->requests.clear();
        t->post(t->requests);
        active_.push_back(t);
      }
      incoming.clear();
      for (Transfer* t : active_)
        if (!t->done) Progress(*t, now);
      Watch(now);
      for (size_t i = 0; i < active_.size();)
        if (active_[i]->done) {
          active_[i]->completed = now;
          finished = true;
          active_[i] = active_.back();
          active_.pop_back();
        } else {
          ++i;
        }
    }
    if (finished) done_cv_.notify_all();
    if (active_.empty()) continue;
    // Poll with backoff: the ranks' compute shares the cores. A transfer whose
    // data has arrived only waits out the simulated link: sleep to that.
    backoff = finished || got_work ? kMinPoll : std::min(backoff * 2, kMaxPoll);
    Clock::time_point wake = Clock::now() + backoff;
    {
      std::lock_guard<std::mutex> lock(mu_);
      bool all_arrived = true;
      Clock::time_point first_ready = Clock::time_point::max();
      for (Transfer* t : active_) {
        all_arrived &= t->requests.empty();
        first_ready = std::min(first_ready, t->ready_at);
      }
      if (all_arrived) wake = first_ready;
    }
    std::unique_lock<std::mutex> lock(mu_);
    work_cv_.wait_until(lock, wake, [&] { return stop_ || !calls_.empty() || !incoming_.empty(); });
  }
}

}  // namespace brt::mpi
