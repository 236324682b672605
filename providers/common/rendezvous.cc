#include "common/rendezvous.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace brt::ops {
namespace {

using Clock = std::chrono::steady_clock;

// What a rank sends rank 0, and rank 0's answer (then the blob's bytes).
struct Hello {
  int32_t rank;
  uint64_t program_hash;
};
struct Answer {
  int32_t mismatch_rank;  // -1: every rank loaded the same program
  uint64_t mismatch_hash;
  uint64_t root_hash;
  uint32_t blob_size;
};

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

double Left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// Waits for fd to be readable (or writable) until the deadline.
bool Ready(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  const double left = Left(deadline);
  return left > 0 && poll(&p, 1, static_cast<int>(left * 1000) + 1) == 1;
}

bool SendAll(int fd, const void* data, size_t bytes, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes) {
    if (!Ready(fd, POLLOUT, deadline)) return false;
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n <= 0 && errno != EINTR) return false;
    if (n > 0) p += n, bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool RecvAll(int fd, void* data, size_t bytes, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (bytes) {
    if (!Ready(fd, POLLIN, deadline)) return false;
    const ssize_t n = recv(fd, p, bytes, 0);
    if (n == 0 || (n < 0 && errno != EINTR)) return false;
    if (n > 0) p += n, bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool Resolve(const std::string& address, addrinfo** out, std::string* error) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    *error = "rendezvous address '" + address + "' is not host:port (MASTER_ADDR:MASTER_PORT)";
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, out)) {
    *error = "rendezvous address '" + address + "': " + gai_strerror(rc);
    return false;
  }
  return true;
}

std::string Hex(uint64_t v) {
  char text[20];
  std::snprintf(text, sizeof(text), "%016" PRIx64, v);
  return text;
}

RendezvousResult Serve(const std::string& address, int world_size, uint64_t hash,
                       const std::vector<uint8_t>& blob, Clock::time_point deadline) {
  RendezvousResult r;
  const size_t colon = address.rfind(':');
  const int port = colon == std::string::npos ? 0 : std::atoi(address.c_str() + colon + 1);
  Socket listener(socket(AF_INET6, SOCK_STREAM, 0));
  int on = 1, off = 0;
  setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  setsockopt(listener.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_any;
  any.sin6_port = htons(static_cast<uint16_t>(port));
  if (listener.fd() < 0 || port <= 0 ||
      bind(listener.fd(), reinterpret_cast<sockaddr*>(&any), sizeof(any)) != 0 ||
      listen(listener.fd(), world_size) != 0) {
    r.error = "rank 0 cannot listen on port " + std::to_string(port) + " (" + address +
              "): " + std::strerror(errno);
    return r;
  }
  std::vector<Socket> peers;
  std::vector<Hello> hellos;
  while (static_cast<int>(peers.size()) < world_size - 1) {
    if (!Ready(listener.fd(), POLLIN, deadline)) {
      r.error = "rank 0 waited for the other ranks at " + address + ": only " +
                std::to_string(peers.size()) + " of " + std::to_string(world_size - 1) +
                " arrived in time";
      return r;
    }
    Socket peer(accept(listener.fd(), nullptr, nullptr));
    Hello hello{};
    if (peer.fd() < 0 || !RecvAll(peer.fd(), &hello, sizeof(hello), deadline)) continue;
    hellos.push_back(hello);
    peers.push_back(std::move(peer));
  }
  Answer answer{-1, 0, hash, static_cast<uint32_t>(blob.size())};
  for (const Hello& h : hellos)
    if (h.program_hash != hash && answer.mismatch_rank < 0)
      answer.mismatch_rank = h.rank, answer.mismatch_hash = h.program_hash;
  for (const Socket& peer : peers)
    if (!SendAll(peer.fd(), &answer, sizeof(answer), deadline) ||
        !SendAll(peer.fd(), blob.data(), blob.size(), deadline)) {
      r.error = "rank 0 lost a rank during the rendezvous at " + address;
      return r;
    }
  if (answer.mismatch_rank >= 0)
    r.error = "the ranks loaded different programs: executable hash " + Hex(hash) + " on rank 0, " +
              Hex(answer.mismatch_hash) + " on rank " + std::to_string(answer.mismatch_rank) +
              " (every rank must load the same .brtx)";
  r.blob = blob;
  return r;
}

RendezvousResult Join(const std::string& address, int rank, uint64_t hash,
                      Clock::time_point deadline) {
  RendezvousResult r;
  addrinfo* info = nullptr;
  if (!Resolve(address, &info, &r.error)) return r;
  Socket s;
  // Rank 0 may not listen yet: retry until the deadline.
  while (s.fd() < 0) {
    for (addrinfo* a = info; a && s.fd() < 0; a = a->ai_next) {
      Socket attempt(socket(a->ai_family, a->ai_socktype, a->ai_protocol));
      if (attempt.fd() >= 0 && connect(attempt.fd(), a->ai_addr, a->ai_addrlen) == 0)
        s = std::move(attempt);
    }
    if (s.fd() >= 0 || Left(deadline) <= 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  freeaddrinfo(info);
  if (s.fd() < 0) {
    r.error = "rank " + std::to_string(rank) + " cannot reach rank 0 at " + address;
    return r;
  }
  Hello hello{rank, hash};
  Answer answer{};
  if (!SendAll(s.fd(), &hello, sizeof(hello), deadline) ||
      !RecvAll(s.fd(), &answer, sizeof(answer), deadline) || answer.blob_size > (1u << 20)) {
    r.error = "rank " + std::to_string(rank) + ": rank 0 did not answer at " + address;
    return r;
  }
  r.blob.resize(answer.blob_size);
  if (!RecvAll(s.fd(), r.blob.data(), r.blob.size(), deadline)) {
    r.error = "rank " + std::to_string(rank) + ": the rendezvous at " + address + " broke off";
    return r;
  }
  if (answer.mismatch_rank >= 0)
    r.error = "the ranks loaded different programs: executable hash " + Hex(answer.root_hash) +
              " on rank 0, " + Hex(answer.mismatch_hash) + " on rank " +
              std::to_string(answer.mismatch_rank) + " (every rank must load the same .brtx)";
  return r;
}

}  // namespace

RendezvousResult Rendezvous(const std::string& address, int rank, int world_size,
                            uint64_t program_hash, const std::vector<uint8_t>& blob,
                            double timeout_seconds) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  if (world_size <= 1) return {blob, ""};
  return rank == 0 ? Serve(address, world_size, program_hash, blob, deadline)
                   : Join(address, rank, program_hash, deadline);
}

}  // namespace brt::ops
