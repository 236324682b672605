// Work queues and transfers of a RequestContext: one queue per provider and
// stream (stream 0 may be the caller's), events ordering ops across streams
// only where their memory meets, and staged copies of host bindings of
// device arguments through page-locked buffers, which the host orders against
// ops of another provider of the device.
#include "session_impl.h"

#include <algorithm>
#include <cstring>

namespace brt {

namespace {

bool HasEvents(const BrtProviderApi* api) {
  return BRT_STRUCT_HAS(BrtProviderApi, api, wait_event) && api->create_event &&
         api->destroy_event && api->record_event && api->wait_event;
}

}  // namespace

bool RequestContext::Impl::Conflict(size_t i, size_t j) const {
  auto range = [&](uint32_t v) {
    return std::pair<int64_t, int64_t>(
        spec->value_offset[v], spec->value_offset[v] + static_cast<int64_t>(spec->bytes[v]));
  };
  auto overlap = [&](uint32_t a, uint32_t b) {
    if (a == b) return true;
    const int arena = spec->value_arena[a];
    if (arena < 0 || arena != spec->value_arena[b]) return false;
    const auto [a0, a1] = range(a);
    const auto [b0, b1] = range(b);
    return a0 < b1 && b0 < a1;
  };
  auto touches = [&](const std::vector<uint32_t>& values, const std::vector<uint32_t>& others) {
    for (uint32_t a : values)
      for (uint32_t b : others)
        if (overlap(a, b)) return true;
    return false;
  };
  const ResolvedOp &a = fs->ops[i], &b = fs->ops[j];
  return touches(b.results, a.operands) || touches(b.results, a.results) ||
         touches(b.operands, a.results);
}

bool RequestContext::Impl::HostWaits(size_t i, size_t j) const {
  auto unplanned = [&](size_t op) {
    for (const auto* values : {&fs->ops[op].operands, &fs->ops[op].results})
      for (uint32_t v : *values)
        if (spec->value_arena[v] < 0) return true;
    return false;
  };
  return Conflict(i, j) || (unplanned(i) && unplanned(j));
}

// Device ops on different queues run concurrently unless ordered: op i waits
// for the latest earlier op j on another queue that writes what i touches or
// touches what i writes (memory ranges: arenas reuse bytes). Events are
// recorded only after such a j. Between providers, or without events, the
// host waits instead.
Status RequestContext::Impl::OrderStreams(const std::vector<QueueSlot*>& slots) {
  const size_t n = spec->ops.size();
  order.assign(n, StreamOrder{});
  std::vector<void*> recorded(n, nullptr);
  // waited[{s, t}]: the latest op on queue t that queue s already waits for.
  std::map<std::pair<QueueSlot*, QueueSlot*>, size_t> waited;
  std::vector<std::vector<void*>> op_waits(n);
  for (size_t i = 0; i < n; ++i) {
    QueueSlot* s = slots[i];
    if (!s) continue;
    for (size_t j = i; j-- > 0;) {
      QueueSlot* t = slots[j];
      if (!t || t == s) continue;
      auto seen = waited.find({s, t});
      if (seen != waited.end() && j <= seen->second) continue;
      if (!Conflict(i, j)) continue;
      waited[{s, t}] = j;
      if (t->provider != s->provider || !HasEvents(s->provider->api)) {
        dispatch[i].sync_before = true;
        continue;
      }
      if (!recorded[j]) {
        auto e = NewEvent(t->provider);
        if (!e.ok()) return e.status();
        recorded[j] = *e;
      }
      op_waits[i].push_back(recorded[j]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    order[i].record = recorded[i];
    order[i].api = fs->ops[i].provider->api;
    order[i].waits_begin = static_cast<uint32_t>(waits.size());
    order[i].waits_count = static_cast<uint32_t>(op_waits[i].size());
    waits.insert(waits.end(), op_waits[i].begin(), op_waits[i].end());
  }
  // Inputs are staged on stream 0 and outputs copied back from it.
  for (const auto& q : queues) {
    if (q->stream == 0) continue;
    auto main = QueueFor(q->provider, 0);
    if (!main.ok()) return main.status();
    if (!HasEvents(q->provider->api))
      return Status(
          StatusCode::kUnsupported,
          "provider '" + q->provider->name() + "' runs ops on several streams but has no events");
    for (auto* edges : {&fork, &join}) {
      auto e = NewEvent(q->provider);
      if (!e.ok()) return e.status();
      const bool forward = edges == &fork;
      edges->push_back({q->provider->api, *e, forward ? (*main)->queue : q->queue,
                        forward ? q->queue : (*main)->queue});
    }
  }
  return Status::Ok();
}

Expected<void*> RequestContext::Impl::NewEvent(const LoadedProvider* p) {
  void* event = nullptr;
  if (const int32_t rc = p->api->create_event(0, &event, &error); rc != BRT_OK)
    return core::ProviderError(
        rc, "provider '" + p->name() + "': cannot create an event: " + error.message);
  events.push_back({p->api, event});
  return event;
}

void RequestContext::Impl::DropEvents() {
  for (const EventRec& e : events) e.api->destroy_event(e.event);
  events.clear();
  order.clear();
  waits.clear();
  fork.clear();
  join.clear();
}

Status RequestContext::Impl::Order(const std::vector<CrossQueue>& edges) {
  for (const CrossQueue& c : edges) {
    int32_t rc = c.api->record_event(c.event, c.from, &error);
    if (rc == BRT_OK) rc = c.api->wait_event(c.to, c.event, &error);
    if (rc != BRT_OK)
      return core::ProviderError(
          rc, "function '" + fs->info.name + "': ordering its streams: " + error.message);
  }
  return Status::Ok();
}

Expected<QueueSlot*> RequestContext::Impl::QueueFor(const LoadedProvider* p, int stream) {
  for (auto& q : queues)
    if (q->provider == p && q->stream == stream) return q.get();
  void* queue = nullptr;
  if (const int32_t rc = p->api->create_queue(0, &queue, &error); rc != BRT_OK)
    return core::ProviderError(
        rc, "provider '" + p->name() + "': cannot create a work queue: " + error.message);
  queues.push_back(std::make_unique<QueueSlot>(QueueSlot{p, queue, stream}));
  return queues.back().get();
}

Expected<void*> RequestContext::Impl::Staging(size_t arg, size_t bytes) {
  if (staging.size() != fs->info.arguments.size()) staging.resize(fs->info.arguments.size());
  StagingBuffers& st = staging[arg];
  // Kept while big enough: a recorded graph reads the staged inputs at
  // their addresses, also after runs at another shape.
  if (!st.device || st.bytes < bytes) {
    st.device = core::AllocateShared(s->AllocatorFor(fs->info.arguments[arg].device), bytes,
                                     core::kArenaAlignment);
    st.pinned.reset();
    st.bytes = bytes;
    if (!st.device)
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate a " + std::to_string(bytes) + "-byte staging buffer on " +
                        DeviceKindName(fs->info.arguments[arg].device.kind) + " for " +
                        ArgName(arg));
  }
  return st.device.get();
}

void* RequestContext::Impl::Pinned(size_t arg) {
  StagingBuffers& st = staging[arg];
  const BrtProviderApi* api = s->ProviderFor(fs->info.arguments[arg].device.kind)->api;
  if (!st.pinned && BRT_STRUCT_HAS(BrtProviderApi, api, free_host) && api->allocate_host &&
      api->free_host) {
    void* p = api->allocate_host(st.bytes);
    // Without page-locked memory the copy reads the binding directly.
    if (p) st.pinned = std::shared_ptr<void>(p, [free = api->free_host](void* q) { free(q); });
  }
  return st.pinned.get();
}

Status RequestContext::Impl::AddTransfer(std::vector<Transfer>& list, Device dst_device, void* dst,
                                         Device src_device, const void* src, size_t bytes) {
  const Device device = dst_device.kind == DeviceKind::kCpu ? src_device : dst_device;
  auto slot = QueueFor(s->ProviderFor(device.kind));
  if (!slot.ok()) return slot.status();
  list.push_back({*slot, device.ordinal, dst, src, bytes,
                  dst_device.kind == DeviceKind::kCpu ? int32_t{1} : int32_t{0}, nullptr, nullptr});
  return Status::Ok();
}

Status RequestContext::Impl::RunTransfers(const std::vector<Transfer>& list) {
  for (const Transfer& t : list) {
    if (!t.bytes) continue;
    const bool bounce_in = t.pinned && t.direction == 0;
    if (bounce_in) std::memcpy(t.pinned, t.binding, t.bytes);
    void* dst = t.pinned && t.direction == 1 ? t.pinned : t.dst;
    const void* src = bounce_in ? t.pinned : t.src;
    const int32_t rc = t.slot->provider->api->copy(t.ordinal, dst, src, t.bytes, t.direction,
                                                   t.slot->queue, &error);
    if (rc != BRT_OK)
      return core::ProviderError(
          rc, "function '" + fs->info.name + "': copying " + std::to_string(t.bytes) + " bytes " +
                  (t.direction ? "to" : "from") + " the host: " + error.message);
  }
  return Status::Ok();
}

// Events order one provider's queues only (and a collectives provider may
// have none), so between copies on one provider's queue and ops on another's
// the host waits: for the copies in (each copying provider's queues) before
// that provider's first op, or for its last ops before the copies back.
Status RequestContext::Impl::OrderCopies(const std::vector<Transfer>& list,
                                         const LoadedProvider* ops, bool copies_first) {
  if (!ops) return Status::Ok();
  const LoadedProvider* waited = nullptr;
  for (const Transfer& t : list) {
    const LoadedProvider* copier = t.slot->provider;
    if (!t.bytes || copier == ops || copier == waited) continue;
    if (!copies_first) return Synchronize(ops);
    BRT_RETURN_IF_ERROR(Synchronize(copier));
    waited = copier;
  }
  return Status::Ok();
}

Status RequestContext::Impl::InstallQueue(Device device, bool wrap, void* native_queue) {
  if (in_flight)
    return Status(StatusCode::kFailedPrecondition, "cannot change queues while a run is in flight");
  const LoadedProvider* p = s->ProviderFor(device.kind);
  if (!p || !p->api->create_queue)
    return Status(
        StatusCode::kInvalidArgument,
        std::string("no loaded provider runs work queues on ") + DeviceKindName(device.kind));
  if (wrap && !(BRT_STRUCT_HAS(BrtProviderApi, p->api, wrap_queue) && p->api->wrap_queue))
    return Status(StatusCode::kUnsupported,
                  "provider '" + p->name() + "' cannot run on a caller's queue");
  void* queue = nullptr;
  BrtErrorBuffer err{};
  const int32_t rc = wrap ? p->api->wrap_queue(device.ordinal, native_queue, &queue, &err)
                          : p->api->create_queue(device.ordinal, &queue, &err);
  if (rc != BRT_OK)
    return core::ProviderError(
        rc, "provider '" + p->name() + "': cannot use that queue: " + err.message);
  DropGraph();
  DropShapeGraphs();  // recorded with the old queue's resources
  auto slot = std::find_if(queues.begin(), queues.end(),
                           [&](const auto& q) { return q->provider == p && q->stream == 0; });
  if (slot == queues.end()) {
    queues.push_back(std::make_unique<QueueSlot>(QueueSlot{p, queue}));
  } else {
    p->api->destroy_queue((*slot)->queue);
    (*slot)->queue = queue;
  }
  dispatch.clear();  // entries and events hold the old queue
  DropEvents();
  return Status::Ok();
}

}  // namespace brt
