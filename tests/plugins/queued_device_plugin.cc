// A stand-in device provider for testing the core's queue, staging and graph
// logic without a GPU. It claims the CUDA device kind; its "device memory" is
// host memory it tracks, and its queues defer all work until synchronize, so
// a core that reads results before waiting, or hands a kernel host memory,
// fails the tests. Each queue is its own deferred list: work on another
// queue runs first only through an event wait, so missing cross-stream
// ordering fails too. Kernels: negate and add (f32), and exponential, which
// is marked not capturable.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "brt/provider_abi.h"
#include "common/provider_glue.h"

namespace {

using Work = std::function<void()>;

struct Queue {
  std::vector<Work> pending;
  size_t first = 0;  // position of pending[0] among all work ever queued
  size_t next = 0;   // pending[next] runs next
  bool capturing = false;
  std::vector<Work>* capture = nullptr;
  Queue* native = nullptr;  // set when wrapping the caller's queue: the work goes there
};

// The caller's queues: the one behind handle nullptr (the device's default
// queue, like CUDA's stream 0) and any other handle is a Queue it made.
Queue default_native_queue;
Queue* NativeQueue(void* handle) {
  return handle ? static_cast<Queue*>(handle) : &default_native_queue;
}
// Where work queued on q really goes.
Queue* Target(void* q) {
  auto* queue = static_cast<Queue*>(q);
  return queue->native ? queue->native : queue;
}

struct Counters {
  int captures = 0, launches = 0, kernel_runs = 0, copies = 0, native_queue_ops = 0;
  int events_recorded = 0, events_waited = 0, pinned_allocations = 0;
};

// Runs q's work up to (not including) position `end`.
void RunUpTo(Queue* q, size_t end) {
  while (q->next < q->pending.size() && q->first + q->next < end) {
    Work w = q->pending[q->next++];
    w();
  }
}

struct Event {
  Queue* queue = nullptr;
  size_t position = 0;
};

std::mutex mu;
std::map<const char*, size_t> allocations;  // start -> bytes
std::map<const char*, size_t> pinned;       // page-locked host memory: start -> bytes
Counters counters;

bool Inside(const std::map<const char*, size_t>& blocks, const void* p) {
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(mu);
  auto it = blocks.upper_bound(c);
  if (it == blocks.begin()) return false;
  --it;
  return c < it->first + it->second;
}

// Inside some allocation (values live at offsets in the core's arenas).
bool OnDevice(const void* p) { return Inside(allocations, p); }

void Enqueue(Queue* wrapper, Work w) {
  Queue* q = Target(wrapper);
  if (wrapper->native)
    w = [w]() {
      w();
      std::lock_guard<std::mutex> lock(mu);
      ++counters.native_queue_ops;
    };
  (q->capturing ? *q->capture : q->pending).push_back(std::move(w));
}

int32_t Fail(BrtErrorBuffer* e, const char* message) {
  std::snprintf(e->message, sizeof(e->message), "%s", message);
  return BRT_ERROR_INVALID_ARGUMENT;
}

struct OpState {
  int kind;  // 0 negate, 1 add, 2 exponential
  int64_t n;
};

int32_t Prepare(const void* data, const BrtOpDesc* op, void** state, BrtErrorBuffer*) {
  int64_t n = 1;
  for (int i = 0; i < op->results[0].rank; ++i) n *= op->results[0].dims[i];
  *state = new OpState{static_cast<int>(reinterpret_cast<intptr_t>(data)), n};
  return BRT_OK;
}

void Release(void* state) { delete static_cast<OpState*>(state); }

int32_t Run(void* state, void* const* b, void* queue, BrtErrorBuffer* e) {
  const OpState s = *static_cast<OpState*>(state);
  const int n_buffers = s.kind == 1 ? 3 : 2;
  for (int i = 0; i < n_buffers; ++i)
    if (!OnDevice(b[i])) return Fail(e, "a buffer is not in device memory");
  if (!queue) return Fail(e, "no queue");
  auto* in0 = static_cast<const float*>(b[0]);
  auto* in1 = static_cast<const float*>(b[1]);
  auto* out = static_cast<float*>(b[n_buffers - 1]);
  Enqueue(static_cast<Queue*>(queue), [=] {
    for (int64_t i = 0; i < s.n; ++i)
      out[i] = s.kind == 0 ? -in0[i] : s.kind == 1 ? in0[i] + in1[i] : std::exp(in0[i]);
    std::lock_guard<std::mutex> lock(mu);
    ++counters.kernel_runs;
  });
  return BRT_OK;
}

const char* const kKinds[] = {"negate", "add", "exponential"};

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* k, BrtErrorBuffer* e) {
  for (int i = 0; i < 3; ++i)
    if (!std::strcmp(sig->kind, kKinds[i])) {
      *k = {};
      k->struct_size = sizeof(BrtKernel);
      k->kernel_data = reinterpret_cast<const void*>(static_cast<intptr_t>(i));
      k->prepare = Prepare;
      k->release_state = Release;
      k->run = Run;
      k->flags = i == 2 ? BRT_KERNEL_NOT_CAPTURABLE : 0;
      return BRT_OK;
    }
  return Fail(e, "not supported by the queued test device");
}

void* Allocate(int32_t, size_t bytes, size_t alignment) {
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment + alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  std::lock_guard<std::mutex> lock(mu);
  allocations[static_cast<const char*>(p)] = rounded;
  return p;
}

void Deallocate(int32_t, void* p) {
  {
    std::lock_guard<std::mutex> lock(mu);
    allocations.erase(static_cast<const char*>(p));
  }
  std::free(p);
}

int32_t Copy(int32_t, void* dst, const void* src, size_t bytes, int32_t direction, void* queue,
             BrtErrorBuffer* e) {
  if (direction == 0 && !OnDevice(dst)) return Fail(e, "host->device copy into host memory");
  if (direction == 1 && !OnDevice(src)) return Fail(e, "device->host copy from host memory");
  // Like cudaMemcpyAsync: a pageable host source is read now; page-locked
  // host memory and device memory are read in queue order.
  std::vector<char> snapshot;
  if (direction == 0 && !Inside(pinned, src))
    snapshot.assign(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
  auto work = [dst, src, bytes, snapshot] {
    std::memcpy(dst, snapshot.empty() ? src : snapshot.data(), bytes);
    std::lock_guard<std::mutex> lock(mu);
    ++counters.copies;
  };
  if (queue)
    Enqueue(static_cast<Queue*>(queue), work);
  else
    work();
  return BRT_OK;
}

int32_t CreateQueue(int32_t, void** q, BrtErrorBuffer*) {
  *q = new Queue;
  return BRT_OK;
}

int32_t WrapQueue(int32_t, void* native, void** q, BrtErrorBuffer*) {
  auto* queue = new Queue;
  queue->native = NativeQueue(native);
  *q = queue;
  return BRT_OK;
}

void DestroyQueue(void* q) { delete static_cast<Queue*>(q); }

int32_t SynchronizeQueue(void* q, BrtErrorBuffer* e) {
  Queue* queue = Target(q);
  if (queue->capturing) return Fail(e, "synchronize during capture");
  RunUpTo(queue, queue->first + queue->pending.size());
  queue->first += queue->pending.size();
  queue->pending.clear();
  queue->next = 0;
  return BRT_OK;
}

int32_t CreateEvent(int32_t, void** event, BrtErrorBuffer*) {
  *event = new Event;
  return BRT_OK;
}

void DestroyEvent(void* event) { delete static_cast<Event*>(event); }

int32_t RecordEvent(void* event, void* q, BrtErrorBuffer* e) {
  Queue* queue = Target(q);
  if (queue->capturing) return Fail(e, "event recorded during capture");
  *static_cast<Event*>(event) = {queue, queue->first + queue->pending.size()};
  std::lock_guard<std::mutex> lock(mu);
  ++counters.events_recorded;
  return BRT_OK;
}

int32_t WaitEvent(void* q, void* event, BrtErrorBuffer* e) {
  const Event at = *static_cast<Event*>(event);
  if (!at.queue) return Fail(e, "waiting for an event never recorded");
  Enqueue(static_cast<Queue*>(q), [at] { RunUpTo(at.queue, at.position); });
  std::lock_guard<std::mutex> lock(mu);
  ++counters.events_waited;
  return BRT_OK;
}

int32_t BeginCapture(void* q, BrtErrorBuffer*) {
  Queue* queue = Target(q);
  queue->capturing = true;
  queue->capture = new std::vector<Work>;
  return BRT_OK;
}

int32_t EndCapture(void* q, void** graph, BrtErrorBuffer*) {
  Queue* queue = Target(q);
  queue->capturing = false;
  *graph = queue->capture;
  queue->capture = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  ++counters.captures;
  return BRT_OK;
}

int32_t LaunchGraph(void* graph, void* q, BrtErrorBuffer*) {
  for (const Work& w : *static_cast<std::vector<Work>*>(graph)) Target(q)->pending.push_back(w);
  std::lock_guard<std::mutex> lock(mu);
  ++counters.launches;
  return BRT_OK;
}

void DestroyGraph(void* graph) { delete static_cast<std::vector<Work>*>(graph); }

void* AllocateHost(size_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  std::lock_guard<std::mutex> lock(mu);
  pinned[static_cast<const char*>(p)] = bytes ? bytes : 1;
  ++counters.pinned_allocations;
  return p;
}

void FreeHost(void* p) {
  {
    std::lock_guard<std::mutex> lock(mu);
    pinned.erase(static_cast<const char*>(p));
  }
  std::free(p);
}

int32_t DeviceCount() { return 1; }
int32_t KernelCount() { return 3; }
int32_t KernelInfo(int32_t i, BrtKernelInfo* info) {
  *info = {kKinds[i], BRT_DEVICE_CUDA, "f32"};
  return BRT_OK;
}

BrtProviderApi MakeApi() {
  BrtProviderApi a = brt::ops::ProviderApiHeader("queued_test_device", BRT_DEVICE_CUDA);
  BRT_SET_ENTRIES(a, BRT_MEMORY_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_QUEUE_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_KERNEL_TABLE_ENTRIES);
  a.wrap_queue = WrapQueue;
  BRT_SET_ENTRIES(a, BRT_GRAPH_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_EVENT_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_PINNED_HOST_ENTRIES);
  return a;
}

}  // namespace

BRT_DEFINE_PROVIDER_ENTRY_POINT(MakeApi)

// For the test: counters, and device memory it can bind directly.
extern "C" __attribute__((visibility("default"))) void queued_device_counters(int* out) {
  std::lock_guard<std::mutex> lock(mu);
  out[0] = counters.captures, out[1] = counters.launches, out[2] = counters.kernel_runs;
  out[3] = counters.copies, out[4] = counters.native_queue_ops;
  out[5] = counters.events_recorded, out[6] = counters.events_waited;
  out[7] = counters.pinned_allocations;
}
extern "C" __attribute__((visibility("default"))) void* queued_device_alloc(size_t bytes) {
  return Allocate(0, bytes, 256);
}
extern "C" __attribute__((visibility("default"))) void queued_device_free(void* p) {
  Deallocate(0, p);
}
// The caller queues its own work (a host->device write) on a native queue
// (nullptr: the default queue); it runs when that queue is synchronized.
extern "C" __attribute__((visibility("default"))) void queued_device_write_on_native(
    void* native, void* dst, const void* src, size_t bytes) {
  std::vector<char> data(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
  NativeQueue(native)->pending.push_back(
      [dst, data] { std::memcpy(dst, data.data(), data.size()); });
}
