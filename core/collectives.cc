// Multi-rank setup, at load. A program with collectives needs to know which
// rank this process is (the options, else the launcher's environment) and a
// communicator per collectives provider (per device its collectives run on,
// a provider whose plugin table declares that device in collective_devices):
// the world is joined once per Session, then every distinct replica-group
// set is split from it in program order, which is the same on every rank
// because every rank loads the same executable (comm_create checks that).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "brt/op_registry.h"
#include "session_impl.h"

namespace brt {
namespace {

bool IsCollective(std::string_view kind) {
  const OpSchema* schema = FindOpSchema(kind);
  return schema && (schema->flags & op_flags::kCollective);
}

std::optional<int> EnvInt(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > (1 << 24)) return std::nullopt;
  return static_cast<int>(x);
}

struct RankSource {
  const char* rank;
  const char* size;
  const char* local_rank;
};
// In the order they are believed.
constexpr RankSource kRankSources[] = {
    {"BRT_RANK", "BRT_WORLD_SIZE", "BRT_LOCAL_RANK"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

struct Ranks {
  int rank = -1, world_size = -1, local_rank = 0;
};

Expected<Ranks> DiscoverRanks(const SessionOptions& options, const std::string& needed_by) {
  Ranks env;
  const RankSource* from = nullptr;
  for (const RankSource& s : kRankSources) {
    auto r = EnvInt(s.rank), n = EnvInt(s.size);
    if (!r && !n) continue;
    if (!r || !n)
      return Status(StatusCode::kInvalidArgument,
                    std::string("the environment sets only one of ") + s.rank + " and " + s.size +
                        " (or one is not a number): set both or neither");
    env = {*r, *n, EnvInt(s.local_rank).value_or(0)};
    from = &s;
    break;
  }
  Ranks out = env;
  if (options.rank >= 0 || options.world_size >= 0) {
    if (options.rank < 0 || options.world_size < 1)
      return Status(StatusCode::kInvalidArgument,
                    "SessionOptions: set both rank and world_size (got rank " +
                        std::to_string(options.rank) + ", world_size " +
                        std::to_string(options.world_size) + ")");
    if (from && (env.rank != options.rank || env.world_size != options.world_size))
      return Status(StatusCode::kInvalidArgument,
                    "SessionOptions say rank " + std::to_string(options.rank) + " of " +
                        std::to_string(options.world_size) + ", but the launcher's environment (" +
                        from->rank + "/" + from->size + ") says rank " + std::to_string(env.rank) +
                        " of " + std::to_string(env.world_size));
    out.rank = options.rank;
    out.world_size = options.world_size;
  }
  if (out.rank < 0)
    return Status(StatusCode::kInvalidArgument,
                  needed_by +
                      " exchanges data between ranks, but this process does not know its rank: "
                      "launch it with mpirun (or torchrun), set BRT_RANK and BRT_WORLD_SIZE, or "
                      "set SessionOptions rank and world_size");
  if (out.world_size < 1 || out.rank >= out.world_size)
    return Status(StatusCode::kInvalidArgument, "rank " + std::to_string(out.rank) +
                                                    " is outside a world of " +
                                                    std::to_string(out.world_size) + " ranks");
  return out;
}

bool ServesCollectivesOn(const BrtProviderApi& api, int32_t device) {
  return BRT_STRUCT_HAS(BrtProviderApi, &api, collective_devices) &&
         (api.collective_devices & BRT_DEVICE_BIT(device));
}

std::string DeviceName(int32_t device) { return DeviceKindName(static_cast<DeviceKind>(device)); }

const BrtAttr* FindAttr(const ResolvedOp& r, std::string_view name) {
  for (const BrtAttr& a : r.attrs)
    if (name == a.name) return &a;
  return nullptr;
}

}  // namespace

Communicators::~Communicators() {
  const BrtProviderApi* api = provider->api;
  for (auto& [key, comm] : groups)
    if (comm && comm != world) api->comm_destroy(comm);
  if (world) api->comm_destroy(world);
}

Expected<const LoadedProvider*> Session::Impl::CollectivesProviderFor(
    int32_t device, const SessionOptions& options) {
  for (const auto& p : providers)
    if (ServesCollectivesOn(*p->api, device)) return p.get();
  std::string tried;
  for (const std::string& name : options.collective_providers) {
    auto p = core::LoadProvider(name, options.search_paths);
    if (p.ok() && ServesCollectivesOn(*(*p)->api, device)) {
      providers.push_back(*p);
      return providers.back().get();
    }
    tried += "\n  " + name + ": " +
             (p.ok() ? "its table does not declare collectives on " + DeviceName(device)
                     : p.status().message());
  }
  return Status(StatusCode::kNotFound,
                "no provider declares collectives on " + DeviceName(device) +
                    (tried.empty() ? " (SessionOptions::collective_providers is empty)"
                                   : "; SessionOptions::collective_providers tried:" + tried));
}

Status Session::Impl::LoadCollectiveProviders(const SessionOptions& options) {
  std::set<int32_t> devices;
  const fb::Executable& root = *exe.root;
  for (size_t f = 0; f < Len(root.functions()); ++f) {
    const fb::Function* fn = root.functions()->Get(f);
    for (size_t i = 0; i < Len(fn->ops()); ++i) {
      const fb::Op* op = fn->ops()->Get(i);
      if (IsCollective(Str(op->kind()))) devices.insert(static_cast<int32_t>(op->device()));
    }
  }
  for (int32_t device : devices) {
    auto p = CollectivesProviderFor(device, options);
    if (!p.ok())
      return Status(p.status().code(),
                    "the executable has collectives on " + DeviceName(device) +
                        ", and no provider serves them: " + p.status().message());
  }
  return Status::Ok();
}

// A provider may need rank 0's blob (NCCL's unique id) on every rank before
// its world exists. Without a rendezvous address the blob, host bytes,
// travels over the world of the provider serving the CPU's collectives
// (loaded for this when the program does not use it): rank 0 makes it,
// every rank gets it.
Expected<std::vector<uint8_t>> Session::Impl::ShareBootstrapBlob(const LoadedProvider& needs,
                                                                 const BrtCommConfig& config,
                                                                 const SessionOptions& options) {
  auto it = std::find_if(comms.begin(), comms.end(), [](const auto& c) {
    const BrtProviderApi* a = c->provider->api;
    return BRT_STRUCT_HAS(BrtProviderApi, a, comm_broadcast) && a->comm_broadcast;
  });
  if (it == comms.end()) {
    const std::string why = "provider '" + needs.name() +
                            "' needs a blob shared by rank 0 and there is no rendezvous address "
                            "(MASTER_ADDR and MASTER_PORT)";
    auto host = CollectivesProviderFor(BRT_DEVICE_CPU, options);
    if (!host.ok()) return Status(host.status().code(), why + ": " + host.status().message());
    const BrtProviderApi* a = (*host)->api;
    if (!BRT_STRUCT_HAS(BrtProviderApi, a, comm_broadcast) || !a->comm_broadcast)
      return Status(StatusCode::kUnsupported, why + ": provider '" + (*host)->name() +
                                                  "', serving the cpu's collectives, " +
                                                  "cannot broadcast it");
    auto c = std::make_unique<Communicators>();
    c->provider = *host;
    BrtErrorBuffer err{};
    if (const int32_t rc = a->comm_create(&config, &c->world, &err); rc != BRT_OK)
      return core::ProviderError(rc, "rank " + std::to_string(rank) + ": joining the world of '" +
                                         (*host)->name() + "' to share '" + needs.name() +
                                         "''s blob: " + err.message);
    comms.push_back(std::move(c));
    it = comms.end() - 1;
  }
  // [size as 8 bytes][blob], at most 4 KiB: one broadcast.
  std::vector<uint8_t> message(4096 + 8, 0);
  BrtErrorBuffer err{};
  if (rank == 0) {
    size_t size = 4096;
    if (const int32_t rc = needs.api->comm_bootstrap_blob(message.data() + 8, &size, &err);
        rc != BRT_OK)
      return core::ProviderError(
          rc, "provider '" + needs.name() + "' making its bootstrap blob: " + err.message);
    const uint64_t size64 = size;
    std::memcpy(message.data(), &size64, 8);
  }
  const BrtProviderApi* via = (*it)->provider->api;
  if (const int32_t rc = via->comm_broadcast((*it)->world, message.data(), message.size(), 0, &err);
      rc != BRT_OK)
    return core::ProviderError(rc, "rank " + std::to_string(rank) + ": sharing provider '" +
                                       needs.name() + "''s blob: " + err.message);
  uint64_t size = 0;
  std::memcpy(&size, message.data(), 8);
  if (size > 4096) return Status(StatusCode::kInternal, "a bootstrap blob larger than 4 KiB");
  return std::vector<uint8_t>(message.begin() + 8,
                              message.begin() + 8 + static_cast<ptrdiff_t>(size));
}

Status Session::Impl::SetUpCollectives(const SessionOptions& options) {
  std::string first;  // the first collective op, for messages
  for (auto& fs : functions)
    for (size_t i = 0; i < fs->ops.size(); ++i) {
      ResolvedOp& r = fs->ops[i];
      r.collective = IsCollective(r.kind);
      if (r.collective && first.empty())
        first = "function '" + fs->info.name + "' (op #" + std::to_string(i) + " '" + r.kind + "')";
    }
  if (first.empty()) return Status::Ok();
  auto ranks = DiscoverRanks(options, first);
  if (!ranks.ok()) return ranks.status();
  rank = ranks->rank;
  world_size = ranks->world_size;
  for (auto& fs : functions) {
    int64_t mesh_ranks = 1;
    std::string mesh_text;
    for (const MeshAxis& a : fs->info.mesh) {
      mesh_ranks *= a.size;
      mesh_text += (mesh_text.empty() ? "" : ", ") + a.name + "=" + std::to_string(a.size);
    }
    if (!fs->info.mesh.empty() && mesh_ranks != world_size)
      return Status(StatusCode::kInvalidArgument,
                    "function '" + fs->info.name + "' was compiled for a mesh of " +
                        std::to_string(mesh_ranks) + " ranks (" + mesh_text + "), but it runs on " +
                        std::to_string(world_size) + " ranks");
  }

  const char* timeout_env = std::getenv("BRT_COLLECTIVE_TIMEOUT");
  double timeout = options.collective_timeout_seconds;
  if (timeout <= 0) timeout = timeout_env ? std::atof(timeout_env) : 0;
  if (timeout <= 0) timeout = 300;
  std::string rendezvous = options.rendezvous;
  if (rendezvous.empty() && std::getenv("MASTER_ADDR") && std::getenv("MASTER_PORT"))
    rendezvous = std::string(std::getenv("MASTER_ADDR")) + ":" + std::getenv("MASTER_PORT");
  BrtCommConfig config{};
  config.struct_size = sizeof(BrtCommConfig);
  config.rank = rank;
  config.world_size = world_size;
  config.local_rank = ranks->local_rank;
  config.program_hash = exe.root->checksum();
  config.rendezvous = rendezvous.empty() ? nullptr : rendezvous.c_str();
  config.timeout_seconds = timeout;

  BrtErrorBuffer err{};
  for (auto& fs : functions)
    for (size_t i = 0; i < fs->ops.size(); ++i) {
      ResolvedOp& r = fs->ops[i];
      if (!r.collective) continue;
      const std::string where =
          "function '" + fs->info.name + "' op #" + std::to_string(i) + " '" + r.kind + "'";
      const BrtProviderApi* api = r.provider->api;
      if (!BRT_STRUCT_HAS(BrtProviderApi, api, comm_destroy) || !api->comm_create ||
          !api->comm_split || !api->comm_destroy)
        return Status(StatusCode::kUnsupported, where + ": provider '" + r.provider->name() +
                                                    "' took it but has no communicators");
      auto it = std::find_if(comms.begin(), comms.end(),
                             [&](const auto& c) { return c->provider == r.provider; });
      if (it == comms.end()) {
        std::vector<uint8_t> blob;
        if (world_size > 1 && !config.rendezvous &&
            BRT_STRUCT_HAS(BrtProviderApi, api, comm_broadcast) && api->comm_bootstrap_blob) {
          auto shared = ShareBootstrapBlob(*r.provider, config, options);
          if (!shared.ok()) return shared.status();
          blob = std::move(shared).value();
        }
        BrtCommConfig with_blob = config;
        with_blob.bootstrap = blob.empty() ? nullptr : blob.data();
        with_blob.bootstrap_size = blob.size();
        auto c = std::make_unique<Communicators>();
        c->provider = r.provider;
        if (const int32_t rc = api->comm_create(&with_blob, &c->world, &err); rc != BRT_OK)
          return core::ProviderError(rc, "rank " + std::to_string(rank) + " of " +
                                             std::to_string(world_size) + ": provider '" +
                                             r.provider->name() + "': " + err.message);
        comms.push_back(std::move(c));
        it = comms.end() - 1;
      }
      Communicators& c = **it;
      r.comm = c.world;
      r.comm_rank = rank;
      r.comm_size = world_size;
      const BrtAttr* groups = FindAttr(r, "replica_groups");
      if (!groups || groups->num_ints == 0) continue;
      const BrtAttr* size_attr = FindAttr(r, "group_size");
      const int64_t group_size = size_attr ? size_attr->i : groups->num_ints;
      if (group_size < 1 || groups->num_ints % group_size != 0)
        return Status(StatusCode::kInvalidExecutable,
                      where + ": replica_groups has " + std::to_string(groups->num_ints) +
                          " entries, not a multiple of group_size " + std::to_string(group_size));
      std::vector<int> seen(world_size, 0);
      int color = -1, key = 0;
      for (int64_t k = 0; k < groups->num_ints; ++k) {
        const int64_t id = groups->ints[k];
        if (id < 0 || id >= world_size)
          return Status(StatusCode::kInvalidArgument,
                        where + ": its replica_groups name rank " + std::to_string(id) +
                            ", outside the world of " + std::to_string(world_size) + " ranks");
        if (seen[id]++)
          return Status(StatusCode::kInvalidExecutable,
                        where + ": rank " + std::to_string(id) + " is in two replica groups");
        if (id == rank) color = static_cast<int>(k / group_size), key = k % group_size;
      }
      if (color < 0)
        return Status(StatusCode::kInvalidArgument, where + ": rank " + std::to_string(rank) +
                                                        " is in none of its replica groups");
      std::vector<int64_t> cache_key(groups->ints, groups->ints + groups->num_ints);
      cache_key.push_back(group_size);
      void*& comm = c.groups[cache_key];
      bool whole_world = group_size == world_size;
      for (int64_t k = 0; k < groups->num_ints && whole_world; ++k)
        whole_world = groups->ints[k] == k;
      if (!comm && whole_world) comm = c.world;
      const int32_t rc = comm ? BRT_OK : api->comm_split(c.world, color, key, &comm, &err);
      if (rc != BRT_OK)
        return core::ProviderError(
            rc, where + ": splitting its replica groups: " + std::string(err.message));
      r.comm = comm;
      r.comm_rank = key;
      r.comm_size = static_cast<int>(group_size);
    }
  return Status::Ok();
}

int Session::rank() const { return impl_->rank; }
int Session::world_size() const { return impl_->world_size; }

}  // namespace brt
