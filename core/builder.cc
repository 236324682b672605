#include "brt/builder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "format.h"
#include "memory_planner.h"

namespace brt {

struct FunctionBuilder::Data {
  struct ValueRec {
    std::string name;
    TensorType type;
    Device device;
  };
  struct ArgRec {
    std::string name;
    fb::ArgRole role;
    ValueId value;
    int weight = -1;
    std::string alias_of;
    std::vector<std::string> sharding;
  };
  struct OpRec {
    std::string kind;
    std::vector<ValueId> operands, results;
    std::vector<Attribute> attrs;
    Device device;
    int stream = 0;
  };
  std::string name;
  std::vector<ValueRec> values;
  std::vector<ArgRec> args;
  std::vector<OpRec> ops;
  std::vector<std::pair<std::string, int64_t>> mesh;
  bool region = false;
  std::vector<std::string> constraints;
  // Weights are appended to the executable's list when it is serialized.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> weights;

  ValueId AddValue(std::string value_name, TensorType type, Device device) {
    values.push_back({std::move(value_name), std::move(type), device});
    return static_cast<ValueId>(values.size() - 1);
  }
};

FunctionBuilder::FunctionBuilder(std::string name) : data_(std::make_shared<Data>()) {
  data_->name = std::move(name);
}

ValueId FunctionBuilder::Input(std::string name, DType dtype, std::vector<Dim> dims,
                               Device device) {
  ValueId v = data_->AddValue(name, {dtype, std::move(dims)}, device);
  data_->args.push_back({std::move(name), fb::ArgRole::Input, v, -1, {}, {}});
  return v;
}

ValueId FunctionBuilder::State(std::string name, DType dtype, std::vector<Dim> dims,
                               Device device) {
  ValueId v = data_->AddValue(name, {dtype, std::move(dims)}, device);
  data_->args.push_back({std::move(name), fb::ArgRole::State, v, -1, {}, {}});
  return v;
}

ValueId FunctionBuilder::Weight(std::string name, DType dtype, std::vector<int64_t> dims,
                                std::span<const uint8_t> bytes, Device device) {
  std::vector<Dim> d(dims.begin(), dims.end());
  ValueId v = data_->AddValue(name, {dtype, std::move(d)}, device);
  data_->weights.push_back(
      std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end()));
  data_->args.push_back({std::move(name),
                         fb::ArgRole::Weight,
                         v,
                         static_cast<int>(data_->weights.size() - 1),
                         {},
                         {}});
  return v;
}

std::vector<ValueId> FunctionBuilder::Op(std::string kind, std::vector<ValueId> operands,
                                         std::vector<TensorType> results,
                                         std::vector<Attribute> attrs, Device device, int stream) {
  std::vector<ValueId> ids;
  for (auto& t : results) ids.push_back(data_->AddValue("", std::move(t), device));
  data_->ops.push_back(
      {std::move(kind), std::move(operands), ids, std::move(attrs), device, stream});
  return ids;
}

ValueId FunctionBuilder::Copy(ValueId value, Device to, int stream) {
  const Device from = data_->values.at(value).device;
  const Device runner = to.kind == DeviceKind::kCpu ? from : to;
  ValueId id = data_->AddValue("", data_->values[value].type, to);
  data_->ops.push_back({"brt.copy", {value}, {id}, {}, runner, stream});
  return id;
}

void FunctionBuilder::Output(std::string name, ValueId value, std::string alias_of) {
  data_->args.push_back({std::move(name), fb::ArgRole::Output, value, -1, std::move(alias_of), {}});
}

void FunctionBuilder::MarkRegion() { data_->region = true; }

void FunctionBuilder::AddConstraint(std::string relation) {
  data_->constraints.push_back(std::move(relation));
}

void FunctionBuilder::SetMesh(std::vector<std::pair<std::string, int64_t>> axes) {
  data_->mesh = std::move(axes);
}

Status FunctionBuilder::SetSharding(std::string_view argument, std::vector<std::string> per_dim) {
  for (auto& a : data_->args)
    if (a.name == argument) {
      a.sharding = std::move(per_dim);
      return Status::Ok();
    }
  return Status(StatusCode::kNotFound, "function '" + data_->name + "' has no argument named '" +
                                           std::string(argument) + "'");
}

const TensorType& FunctionBuilder::type(ValueId value) const {
  return data_->values.at(value).type;
}

struct ExecutableBuilder::Impl {
  std::string producer;
  std::deque<FunctionBuilder> functions;
  struct KernelRec {
    std::string name, target, source;
    std::vector<uint8_t> image;
  };
  std::vector<KernelRec> kernels;

  struct Layout {
    std::vector<uint8_t> header;  // size-prefixed FlatBuffer
    std::vector<std::pair<uint64_t, const std::vector<uint8_t>*>> weights;
    uint64_t total_size = 0;
  };
  Expected<Layout> Build(BuildReport* report) const;
  std::vector<uint8_t> Encode(const std::vector<uint64_t>& weight_offsets,
                              BuildReport* report) const;
};

namespace {

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

flatbuffers::Offset<fb::Attr> EncodeAttr(flatbuffers::FlatBufferBuilder& b, const Attribute& a) {
  auto name = b.CreateString(a.name);
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
  flatbuffers::Offset<flatbuffers::Vector<double>> floats;
  flatbuffers::Offset<flatbuffers::String> s;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> bytes;
  fb::AttrKind kind = fb::AttrKind::Int;
  int64_t i = 0;
  double f = 0;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          kind = fb::AttrKind::Int, i = v;
        } else if constexpr (std::is_same_v<T, double>) {
          kind = fb::AttrKind::Float, f = v;
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          kind = fb::AttrKind::Ints, ints = b.CreateVector(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          kind = fb::AttrKind::Floats, floats = b.CreateVector(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          kind = fb::AttrKind::String, s = b.CreateString(v);
        } else {
          kind = fb::AttrKind::Bytes, bytes = b.CreateVector(v);
        }
      },
      a.value);
  return fb::CreateAttr(b, name, kind, i, f, ints, floats, s, bytes);
}

}  // namespace

std::vector<uint8_t> ExecutableBuilder::Impl::Encode(const std::vector<uint64_t>& weight_offsets,
                                                     BuildReport* report) const {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  // Stable sizes across the two encoding passes: no field is ever omitted.
  b.ForceDefaults(true);
  std::vector<flatbuffers::Offset<fb::Function>> fns;
  std::vector<flatbuffers::Offset<fb::WeightSegment>> segments;
  std::set<DeviceKind> targets;
  size_t weight_base = 0;
  for (const FunctionBuilder& fbld : functions) {
    const FunctionBuilder::Data& d = *fbld.data_;
    std::vector<flatbuffers::Offset<fb::Value>> values;
    bool all_static = true;
    for (const auto& v : d.values) {
      std::vector<flatbuffers::Offset<fb::Dim>> dims;
      for (const Dim& dim : v.type.dims) {
        all_static &= dim.is_static();
        dims.push_back(
            fb::CreateDim(b, dim.size, dim.is_static() ? 0 : b.CreateString(dim.symbol)));
      }
      targets.insert(v.device.kind);
      values.push_back(fb::CreateValue(
          b, b.CreateString(v.name), static_cast<fb::DType>(v.type.dtype), b.CreateVector(dims),
          static_cast<fb::DeviceKind>(v.device.kind), v.device.ordinal));
    }
    std::vector<flatbuffers::Offset<fb::Argument>> args;
    std::vector<bool> is_output(d.values.size(), false);
    for (const auto& a : d.args) {
      int alias = -1;
      if (!a.alias_of.empty())
        for (size_t k = 0; k < d.args.size(); ++k)
          if (d.args[k].name == a.alias_of) alias = static_cast<int>(k);
      if (a.role == fb::ArgRole::Output) is_output[a.value] = true;
      int weight = a.weight < 0 ? -1 : static_cast<int>(weight_base + a.weight);
      auto sharding = a.sharding.empty() ? 0 : b.CreateVectorOfStrings(a.sharding);
      args.push_back(
          fb::CreateArgument(b, b.CreateString(a.name), a.role, a.value, weight, alias, sharding));
    }
    for (size_t w = 0; w < d.weights.size(); ++w)
      segments.push_back(
          fb::CreateWeightSegment(b, weight_offsets[weight_base + w], d.weights[w]->size()));
    weight_base += d.weights.size();

    std::vector<flatbuffers::Offset<fb::Op>> ops;
    std::vector<core::PlannedValue> planned(d.values.size());
    std::map<Device, int, bool (*)(const Device&, const Device&)> arenas(
        [](const Device& x, const Device& y) {
          return std::pair(x.kind, x.ordinal) < std::pair(y.kind, y.ordinal);
        });
    for (size_t i = 0; i < d.ops.size(); ++i) {
      const auto& op = d.ops[i];
      std::vector<flatbuffers::Offset<fb::Attr>> attrs;
      for (const auto& a : op.attrs) attrs.push_back(EncodeAttr(b, a));
      ops.push_back(fb::CreateOp(b, b.CreateString(op.kind), b.CreateVector(op.operands),
                                 b.CreateVector(op.results), b.CreateVector(attrs),
                                 static_cast<fb::DeviceKind>(op.device.kind),
                                 static_cast<uint8_t>(op.stream)));
      for (ValueId r : op.results) {
        if (is_output[r]) continue;
        const auto& v = d.values[r];
        auto [it, inserted] = arenas.emplace(v.device, static_cast<int>(arenas.size()));
        planned[r].arena = it->second;
        planned[r].bytes = NumElements([&] {
                             std::vector<int64_t> s;
                             for (const Dim& dim : v.type.dims)
                               s.push_back(std::max<int64_t>(dim.size, 0));
                             return s;
                           }())
                               .value_or(0) *
                           static_cast<int64_t>(DTypeSize(v.type.dtype));
        planned[r].dtype = static_cast<int32_t>(v.type.dtype);
        planned[r].first_use = planned[r].last_use = static_cast<int>(i);
      }
      for (ValueId o : op.operands)
        if (o < planned.size() && planned[o].arena >= 0)
          planned[o].last_use = std::max(planned[o].last_use, static_cast<int>(i));
    }
    core::KeepQueuedOperandsLive(d.ops, planned);
    core::ShareOperandBytes(d.ops, planned);
    flatbuffers::Offset<fb::MemoryPlan> plan = 0;
    if (all_static) {
      core::MemoryPlanResult r =
          core::PlanMemory(planned, static_cast<int>(arenas.size()), core::kArenaAlignment);
      if (report) {
        int64_t total = 0;
        for (int64_t a : r.arena_sizes) total += a;
        const auto shared = std::count_if(planned.begin(), planned.end(),
                                          [](const auto& v) { return v.alias_of >= 0; });
        report->functions.push_back({d.name, static_cast<int>(d.ops.size()), total,
                                     r.live_bytes_lower_bound, r.aligned_live_bytes_lower_bound,
                                     static_cast<int>(shared)});
      }
      std::vector<flatbuffers::Offset<fb::Arena>> arena_tables(arenas.size());
      for (const auto& [dev, idx] : arenas)
        arena_tables[idx] = fb::CreateArena(b, static_cast<fb::DeviceKind>(dev.kind), dev.ordinal,
                                            static_cast<uint64_t>(r.arena_sizes[idx]));
      std::vector<int32_t> value_arena;
      std::vector<uint64_t> value_offset;
      for (size_t v = 0; v < planned.size(); ++v) {
        value_arena.push_back(planned[v].arena);
        value_offset.push_back(planned[v].arena >= 0 ? static_cast<uint64_t>(r.offsets[v]) : 0);
      }
      plan = fb::CreateMemoryPlan(b, b.CreateVector(arena_tables), b.CreateVector(value_arena),
                                  b.CreateVector(value_offset));
    }
    std::vector<flatbuffers::Offset<fb::MeshAxis>> mesh;
    for (const auto& [axis, size] : d.mesh)
      mesh.push_back(fb::CreateMeshAxis(b, b.CreateString(axis), size));
    std::vector<flatbuffers::Offset<flatbuffers::String>> constraints;
    for (const std::string& c : d.constraints) constraints.push_back(b.CreateString(c));
    fns.push_back(fb::CreateFunction(b, b.CreateString(d.name), b.CreateVector(values),
                                     b.CreateVector(args), b.CreateVector(ops), plan,
                                     mesh.empty() ? 0 : b.CreateVector(mesh), d.region,
                                     constraints.empty() ? 0 : b.CreateVector(constraints)));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> target_names;
  for (DeviceKind t : targets) target_names.push_back(b.CreateString(DeviceKindName(t)));
  std::vector<flatbuffers::Offset<fb::Kernel>> kernel_tables;
  for (const auto& k : kernels)
    kernel_tables.push_back(fb::CreateKernel(b, b.CreateString(k.name), b.CreateString(k.target),
                                             b.CreateVector(k.image), b.CreateString(k.source)));
  auto root =
      fb::CreateExecutable(b, core::kFormatMajor, core::kFormatMinor, b.CreateString(producer),
                           b.CreateVector(target_names), b.CreateVector(fns),
                           b.CreateVector(kernel_tables), b.CreateVector(segments), /*checksum=*/0);
  fb::FinishSizePrefixedExecutableBuffer(b, root);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  core::SealExecutable(bytes.data(), bytes.size());
  return bytes;
}

Expected<ExecutableBuilder::Impl::Layout> ExecutableBuilder::Impl::Build(
    BuildReport* report) const {
  std::vector<const std::vector<uint8_t>*> weights;
  for (const FunctionBuilder& f : functions) {
    const auto& d = *f.data_;
    for (const auto& a : d.args) {
      if (!a.alias_of.empty() && std::none_of(d.args.begin(), d.args.end(),
                                              [&](const auto& x) { return x.name == a.alias_of; }))
        return Status(StatusCode::kInvalidArgument, "function '" + d.name + "' output '" + a.name +
                                                        "' aliases unknown argument '" +
                                                        a.alias_of + "'");
    }
    for (size_t i = 0; i < d.ops.size(); ++i)
      if (d.ops[i].stream < 0 || d.ops[i].stream > 255)
        return Status(StatusCode::kInvalidArgument,
                      "function '" + d.name + "' op #" + std::to_string(i) + " '" + d.ops[i].kind +
                          "': stream " + std::to_string(d.ops[i].stream) + " is outside [0, 255]");
    for (const auto& w : d.weights) weights.push_back(w.get());
  }
  // Pass 1 measures the FlatBuffer; pass 2 writes the real weight offsets.
  std::vector<uint64_t> offsets(weights.size(), 0);
  Layout layout;
  layout.header = Encode(offsets, nullptr);
  const size_t measured = layout.header.size();
  uint64_t pos = AlignUp(measured, core::kWeightAlignment);
  layout.total_size = measured;
  // Equal weights (the functions of one model at several input shapes) are
  // stored once; their segments share the offset.
  std::unordered_map<std::string_view, uint64_t> stored;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string_view bytes(reinterpret_cast<const char*>(weights[i]->data()),
                                 weights[i]->size());
    auto [it, added] = stored.emplace(bytes, pos);
    offsets[i] = it->second;
    if (!added) continue;
    layout.weights.emplace_back(pos, weights[i]);
    layout.total_size = pos + weights[i]->size();
    pos = AlignUp(layout.total_size, core::kWeightAlignment);
  }
  if (report) report->functions.clear();
  layout.header = Encode(offsets, report);
  if (layout.header.size() != measured)
    return Status(StatusCode::kInternal, "executable header size changed between passes");
  return layout;
}

ExecutableBuilder::ExecutableBuilder(std::string producer) : impl_(std::make_unique<Impl>()) {
  impl_->producer = std::move(producer);
}
ExecutableBuilder::~ExecutableBuilder() = default;

FunctionBuilder& ExecutableBuilder::AddFunction(std::string name) {
  impl_->functions.push_back(FunctionBuilder(std::move(name)));
  return impl_->functions.back();
}

int ExecutableBuilder::function_count() const { return static_cast<int>(impl_->functions.size()); }

void ExecutableBuilder::AddKernel(std::string name, std::string target, std::vector<uint8_t> image,
                                  std::string source) {
  impl_->kernels.push_back(
      {std::move(name), std::move(target), std::move(source), std::move(image)});
}

Expected<std::vector<uint8_t>> ExecutableBuilder::Serialize(BuildReport* report) const {
  auto layout = impl_->Build(report);
  if (!layout.ok()) return layout.status();
  std::vector<uint8_t> out(layout->total_size, 0);
  std::memcpy(out.data(), layout->header.data(), layout->header.size());
  for (auto [offset, w] : layout->weights)
    if (!w->empty()) std::memcpy(out.data() + offset, w->data(), w->size());
  return out;
}

Status ExecutableBuilder::Save(const std::string& path, BuildReport* report) const {
  auto layout = impl_->Build(report);
  if (!layout.ok()) return layout.status();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(StatusCode::kInvalidArgument,
                  "cannot write '" + path + "': " + std::strerror(errno));
  auto write_at = [&](const uint8_t* p, size_t n, uint64_t offset) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
      if (w <= 0) return false;
      p += w, n -= static_cast<size_t>(w), offset += static_cast<uint64_t>(w);
    }
    return true;
  };
  bool ok = write_at(layout->header.data(), layout->header.size(), 0);
  constexpr size_t kChunk = 1 << 16;
  static const std::vector<uint8_t> zeros(kChunk, 0);
  for (auto [offset, w] : layout->weights) {
    for (size_t pos = 0; ok && pos < w->size(); pos += kChunk) {
      size_t n = std::min(kChunk, w->size() - pos);
      // All-zero chunks stay holes: the file is sparse, reads still give zeros.
      if (std::memcmp(w->data() + pos, zeros.data(), n) == 0) continue;
      ok = write_at(w->data() + pos, n, offset + pos);
    }
  }
  ok = ok && ::ftruncate(fd, static_cast<off_t>(layout->total_size)) == 0;
  int err = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok)
    return Status(StatusCode::kInternal, "writing '" + path + "' failed: " + std::strerror(err));
  return Status::Ok();
}

}  // namespace brt
