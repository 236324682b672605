// Dispatch: BuildDispatch flattens the prepared ops into (run, state,
// buffers, queue) entries; RunOps is the hot loop: op by op (eager or
// profiled) or one recorded graph replayed on a single queue. It does not
// allocate or look anything up by name.
#include "session_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

namespace brt {

Status RequestContext::Impl::BuildDispatch() {
  DropGraph();
  DropEvents();
  dispatch.clear();
  graph_queue = nullptr;
  ran_eagerly = false;
  graph_off_reason.clear();
  first_device_provider = last_device_provider = nullptr;
  const size_t n = spec->ops.size();
  std::vector<QueueSlot*> slots(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const LoadedProvider* p = fs->ops[i].provider;
    if (!p->api->create_queue) continue;
    auto q = QueueFor(p, fs->ops[i].stream);
    if (!q.ok()) return q.status();
    slots[i] = *q;
  }
  // Queued work the host has not waited for, and the provider it is queued
  // on. A host op waits for it only where it touches the same memory (so a
  // gradient's all_reduce runs on while the backward pass goes on); events
  // order one provider's queues, so work moving to another provider's queue
  // (a collective's provider after the compute provider) waits on the host.
  std::vector<size_t> unsynced;
  const LoadedProvider* pending = nullptr;
  QueueSlot* only = nullptr;  // the one queue every op runs on, if there is one
  bool one_queue = true;
  for (size_t i = 0; i < n; ++i) {
    QueueSlot* slot = slots[i];
    bool sync = slot && pending && slot->provider != pending;
    if (!slot)
      sync =
          std::any_of(unsynced.begin(), unsynced.end(), [&](size_t j) { return HostWaits(i, j); });
    if (sync) unsynced.clear(), pending = nullptr;
    if (slot) unsynced.push_back(i), pending = slot->provider;
    if (slot && !first_device_provider) first_device_provider = slot->provider;
    DispatchEntry e{spec->ops[i].kernel.run, instances[i],
                    buffers.data() + spec->ops[i].buffers_begin, slot ? slot->queue : nullptr,
                    sync};
    dispatch.push_back(e);

    const BrtKernel& k = spec->ops[i].kernel;
    if (!slot || (only && slot != only)) one_queue = false;
    only = slot;
    if (graph_off_reason.empty() && BRT_STRUCT_HAS(BrtKernel, &k, flags) &&
        (k.flags & BRT_KERNEL_NOT_CAPTURABLE))
      graph_off_reason =
          "op #" + std::to_string(i) + " '" + fs->ops[i].kind + "' cannot be recorded into a graph";
  }
  last_device_provider = pending;
  const bool several_streams =
      std::any_of(queues.begin(), queues.end(), [](const auto& q) { return q->stream != 0; });
  if (several_streams) BRT_RETURN_IF_ERROR(OrderStreams(slots));
  // Host work only, or a host-memory provider's queue: nothing to record.
  if (!only || only->provider->api->device_kind == BRT_DEVICE_CPU) {
    graph_off_reason.clear();
    return Status::Ok();
  }
  const BrtProviderApi* api = only->provider->api;
  if (!one_queue && graph_off_reason.empty())
    graph_off_reason = "its ops run on more than one queue or on the host";
  if (graph_off_reason.empty() &&
      !(BRT_STRUCT_HAS(BrtProviderApi, api, begin_capture) && api->begin_capture &&
        api->end_capture && api->launch_graph && api->destroy_graph))
    graph_off_reason = "provider '" + only->provider->name() + "' cannot record graphs";
  if (graph_off_reason.empty()) graph_queue = only;
  return Status::Ok();
}

Status RequestContext::Impl::Synchronize(const LoadedProvider* only) {
  for (auto& q : queues) {
    if (only && q->provider != only) continue;
    if (const int32_t rc = q->provider->api->synchronize_queue(q->queue, &error); rc != BRT_OK)
      return core::ProviderError(rc, "function '" + fs->info.name + "': waiting for '" +
                                         q->provider->name() + "': " + error.message);
  }
  return Status::Ok();
}

void RequestContext::Impl::DropGraph() {
  if (graph && graph_queue) graph_queue->provider->api->destroy_graph(graph);
  graph = nullptr;
  graph_buffers.clear();
}

void RequestContext::Impl::SetShapeAside() {
  if (!spec || fs->symbols.empty() || !graphs_enabled || !graph_queue || !ran_eagerly ||
      s->max_shape_graphs < 1) {
    DropGraph();
    ReleaseInstances();
    arenas.clear();
    spec = nullptr;
    return;
  }
  if (static_cast<int>(shape_graphs.size()) >= s->max_shape_graphs) {
    auto oldest = std::min_element(shape_graphs.begin(), shape_graphs.end(),
                                   [](const auto& a, const auto& b) { return a.left < b.left; });
    DropShapeGraph(*oldest);
    shape_graphs.erase(oldest);
    ++graph_stats.evictions;
  }
  shape_graphs.push_back({spec_key, std::move(spec), std::move(arenas), std::move(instances),
                          graph_queue->provider->api, std::exchange(graph, nullptr),
                          std::move(graph_buffers), ++shape_changes});
  spec = nullptr;
  arenas.clear();
  instances.clear();
  graph_buffers.clear();
}

std::optional<RequestContext::Impl::ShapeGraph> RequestContext::Impl::TakeShapeGraph(
    const std::vector<int64_t>& key) {
  auto it = std::find_if(shape_graphs.begin(), shape_graphs.end(),
                         [&](const ShapeGraph& g) { return g.key == key; });
  if (it == shape_graphs.end()) return std::nullopt;
  ShapeGraph g = std::move(*it);
  shape_graphs.erase(it);
  return g;
}

void RequestContext::Impl::DropShapeGraph(ShapeGraph& g) {
  if (g.graph) g.api->destroy_graph(g.graph);
  g.graph = nullptr;
  for (size_t i = 0; i < g.instances.size(); ++i) {
    const PreparedOp& op = g.spec->ops[i];
    if (op.kernel.release_instance && g.instances[i] != op.state)
      op.kernel.release_instance(g.instances[i]);
  }
  g.instances.clear();
}

void RequestContext::Impl::DropShapeGraphs() {
  for (ShapeGraph& g : shape_graphs) DropShapeGraph(g);
  shape_graphs.clear();
}

Status RequestContext::Impl::Execute() {
  return s->InHostPool([this] { return ExecuteHere(); });
}

Status RequestContext::Impl::ExecuteHere() {
  replayed = false;
  Status status = RunTransfers(before);
  // Host ops read what came from a device: wait for it first. Otherwise wait
  // only where the first device op is another provider's than the copies'.
  if (status.ok())
    status = std::any_of(before.begin(), before.end(),
                         [](const Transfer& t) { return t.direction == 1; })
                 ? Synchronize()
                 : OrderCopies(before, first_device_provider, true);
  if (status.ok()) status = Order(fork);
  if (status.ok()) status = RunOps();
  if (status.ok()) status = Order(join);
  if (status.ok()) status = OrderCopies(after, last_device_provider, false);
  if (status.ok()) status = RunTransfers(after);
  Status synced = Synchronize();
  if (status.ok() && synced.ok())
    for (const Transfer& t : after)
      if (t.pinned && t.bytes) std::memcpy(t.binding, t.pinned, t.bytes);
  return status.ok() ? synced : status;
}

Status RequestContext::Impl::RunOps() {
  const size_t n = dispatch.size();
  const DispatchEntry* ops = dispatch.data();
  int32_t rc = BRT_OK;  // the failing call's code, kept in the Status
  auto failed = [&](size_t i) {
    return core::ProviderError(rc, "function '" + fs->info.name + "' op #" + std::to_string(i) +
                                       " '" + fs->ops[i].kind + "' failed: " + error.message);
  };
  if (profiling) {
    last_profile.resize(n);
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if ((rc = ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error)) != BRT_OK)
        return failed(i);
      // Device ops are timed to completion.
      if (ops[i].queue &&
          (rc = fs->ops[i].provider->api->synchronize_queue(ops[i].queue, &error)) != BRT_OK)
        return failed(i);
      const auto t1 = std::chrono::steady_clock::now();
      last_profile[i] = {static_cast<int>(i), fs->ops[i].kind.c_str(),
                         std::chrono::duration_cast<std::chrono::nanoseconds>(t0 - start).count(),
                         std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count(),
                         fs->ops[i].control ? ControlFlowIterations(ops[i].instance) : -1};
    }
    return Status::Ok();
  }
  if (graph_queue && graphs_enabled && ran_eagerly) {
    const BrtProviderApi* api = graph_queue->provider->api;
    if (!graph || graph_buffers != buffers) {
      DropGraph();
      if (api->begin_capture(graph_queue->queue, &error) != BRT_OK) {
        s->Log(LogLevel::kWarning,
               "function '" + fs->info.name +
                   "' runs op by op: starting a graph capture: " + error.message);
        graph_queue = nullptr;
        return RunOps();
      }
      for (size_t i = 0; i < n; ++i)
        if ((rc = ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error)) != BRT_OK) {
          Status s = failed(i);
          BrtErrorBuffer ignored{};
          void* partial = nullptr;
          if (api->end_capture(graph_queue->queue, &partial, &ignored) == BRT_OK && partial)
            api->destroy_graph(partial);
          return s;
        }
      if ((rc = api->end_capture(graph_queue->queue, &graph, &error)) != BRT_OK) {
        graph = nullptr;
        return core::ProviderError(
            rc, "function '" + fs->info.name + "': recording its graph: " + error.message);
      }
      graph_buffers = buffers;
      ++graph_stats.misses;
    } else {
      ++graph_stats.hits;
    }
    if ((rc = api->launch_graph(graph, graph_queue->queue, &error)) != BRT_OK)
      return core::ProviderError(
          rc, "function '" + fs->info.name + "': replaying its graph: " + error.message);
    replayed = true;
    return Status::Ok();
  }
  if (graphs_enabled && !graph_off_reason.empty() && !graph_fallback_said) {
    graph_fallback_said = true;
    s->Log(LogLevel::kWarning,
           "function '" + fs->info.name + "' runs op by op, not as a graph: " + graph_off_reason);
  }
  if (order.empty()) {  // one queue per provider: the hot loop
    for (size_t i = 0; i < n; ++i) {
      if (ops[i].sync_before) BRT_RETURN_IF_ERROR(Synchronize());
      if ((rc = ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error)) != BRT_OK)
        return failed(i);
    }
    ran_eagerly = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) {
    const DispatchEntry& op = ops[i];
    const StreamOrder& o = order[i];
    if (op.sync_before) BRT_RETURN_IF_ERROR(Synchronize());
    for (uint32_t w = 0; w < o.waits_count; ++w)
      if ((rc = o.api->wait_event(op.queue, waits[o.waits_begin + w], &error)) != BRT_OK)
        return failed(i);
    if ((rc = op.run(op.instance, op.buffers, op.queue, &error)) != BRT_OK) return failed(i);
    if (o.record && (rc = o.api->record_event(o.record, op.queue, &error)) != BRT_OK)
      return failed(i);
  }
  return Status::Ok();
}

}  // namespace brt
