#include "format.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "brt/op_registry.h"

namespace brt::core {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr int64_t kMaxBytes = int64_t{1} << 52;
constexpr uint32_t kMaxRank = 16;

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidExecutable, std::move(message));
}

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

std::string_view Str(const flatbuffers::String* s) {
  return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
}

// FlatBuffers (2.0.8) verifies vectors to 4-byte alignment only; vectors of
// 8-byte scalars must also be 8-byte aligned before anything reads them
// (empty ones are not padded, and nothing reads them).
template <typename T>
bool Aligned(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

bool ValidDType(fb::DType d) { return d > fb::DType::Invalid && d <= fb::DType::MAX; }
bool ValidDevice(fb::DeviceKind d) { return d >= fb::DeviceKind::MIN && d <= fb::DeviceKind::MAX; }

struct ValueFacts {
  bool is_static = true;
  int64_t bytes = 0;    // when static
  int defined_by = -1;  // -2: argument, >= 0: op index
};

Status CheckValue(const fb::Value& v, size_t index, std::string_view fn, ValueFacts* facts) {
  auto where = [&] { return "function '" + std::string(fn) + "' value #" + std::to_string(index); };
  if (!ValidDType(v.dtype()))
    return Invalid(where() + ": dtype code " + std::to_string(static_cast<int>(v.dtype())) +
                   " is not a known dtype");
  if (!ValidDevice(v.device()))
    return Invalid(where() + ": unknown device kind " +
                   std::to_string(static_cast<int>(v.device())));
  if (v.device_ordinal() < 0 || v.device_ordinal() > 1024)
    return Invalid(where() + ": device ordinal " + std::to_string(v.device_ordinal()) +
                   " out of range");
  if (Len(v.dims()) > kMaxRank)
    return Invalid(where() + ": rank " + std::to_string(Len(v.dims())) + " exceeds " +
                   std::to_string(kMaxRank));
  int64_t elements = 1;
  for (size_t d = 0; d < Len(v.dims()); ++d) {
    const fb::Dim* dim = v.dims()->Get(d);
    if (dim->size() >= 0) {
      if (__builtin_mul_overflow(elements, dim->size(), &elements) || elements > kMaxElements)
        return Invalid(where() + ": element count overflows");
    } else if (dim->size() == -1 && !Str(dim->symbol()).empty()) {
      facts->is_static = false;
    } else {
      return Invalid(where() + ": dimension " + std::to_string(d) + " has size " +
                     std::to_string(dim->size()) + " and no symbol");
    }
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(DTypeSize(ToDType(v.dtype()))),
                             &bytes) ||
      bytes > kMaxBytes)
    return Invalid(where() + ": byte size overflows");
  facts->bytes = bytes;
  return Status::Ok();
}

bool SameType(const fb::Value& a, const fb::Value& b) {
  if (a.dtype() != b.dtype() || Len(a.dims()) != Len(b.dims())) return false;
  for (size_t i = 0; i < Len(a.dims()); ++i) {
    const fb::Dim* x = a.dims()->Get(i);
    const fb::Dim* y = b.dims()->Get(i);
    if (x->size() != y->size() || Str(x->symbol()) != Str(y->symbol())) return false;
  }
  return true;
}

Status CheckOp(const fb::Op& op, size_t index, std::string_view fn, size_t num_values) {
  std::string kind(Str(op.kind()));
  auto where = [&] {
    return "function '" + std::string(fn) + "' op #" + std::to_string(index) + " '" + kind + "'";
  };
  if (kind.empty()) return Invalid(where() + ": empty op kind");
  if (!ValidDevice(op.device()))
    return Invalid(where() + ": unknown device kind " +
                   std::to_string(static_cast<int>(op.device())));
  for (size_t i = 0; i < Len(op.operands()); ++i)
    if (op.operands()->Get(i) >= num_values)
      return Invalid(where() + ": operand " + std::to_string(i) + " refers to value #" +
                     std::to_string(op.operands()->Get(i)) + " but the function has " +
                     std::to_string(num_values) + " values");
  for (size_t i = 0; i < Len(op.results()); ++i)
    if (op.results()->Get(i) >= num_values)
      return Invalid(where() + ": result " + std::to_string(i) + " refers to value #" +
                     std::to_string(op.results()->Get(i)) + " but the function has " +
                     std::to_string(num_values) + " values");
  for (size_t i = 0; i < Len(op.attrs()); ++i) {
    if (!Aligned(op.attrs()->Get(i)->ints()) || !Aligned(op.attrs()->Get(i)->floats()))
      return Invalid(where() + ": attribute '" + std::string(Str(op.attrs()->Get(i)->name())) +
                     "' holds misaligned 8-byte values");
    auto k = op.attrs()->Get(i)->kind();
    if (k < fb::AttrKind::MIN || k > fb::AttrKind::MAX)
      return Invalid(where() + ": attribute '" + std::string(Str(op.attrs()->Get(i)->name())) +
                     "' has unknown kind " + std::to_string(static_cast<int>(k)));
  }
  const OpSchema* schema = FindOpSchema(kind);
  if (!schema) return Status::Ok();  // a plugin's op: its provider checks it
  int n_in = static_cast<int>(Len(op.operands()));
  int n_out = static_cast<int>(Len(op.results()));
  if (n_in < schema->min_operands || (schema->max_operands >= 0 && n_in > schema->max_operands))
    return Invalid(where() + ": has " + std::to_string(n_in) + " operands, expected " +
                   (schema->min_operands == schema->max_operands
                        ? std::to_string(schema->min_operands)
                        : "at least " + std::to_string(schema->min_operands)));
  if (!schema->TakesResults(n_in, n_out))
    return Invalid(where() + ": has " + std::to_string(n_out) + " results, expected " +
                   schema->ResultsText(n_in));
  for (size_t i = 0; i < Len(op.attrs()); ++i) {
    const fb::Attr* a = op.attrs()->Get(i);
    const AttrSchema* known = schema->FindAttr(Str(a->name()));
    if (known && static_cast<int32_t>(a->kind()) != known->kind)
      return Invalid(where() + ": attribute '" + known->name + "' must be " +
                     AttrKindName(known->kind) + ", got " +
                     AttrKindName(static_cast<int32_t>(a->kind())));
  }
  for (const AttrSchema* req = schema->attrs; req->name; ++req) {
    bool found = false;
    for (size_t i = 0; i < Len(op.attrs()) && !found; ++i)
      found = Str(op.attrs()->Get(i)->name()) == req->name;
    if (req->required && !found)
      return Invalid(where() + ": missing required attribute '" + req->name + "'");
  }
  return Status::Ok();
}

Status CheckFunction(const fb::Function& f, const fb::Executable& root) {
  std::string_view name = Str(f.name());
  auto where = [&] { return "function '" + std::string(name) + "'"; };
  size_t num_values = Len(f.values());
  if (num_values > (size_t{1} << 24)) return Invalid(where() + ": too many values");
  std::vector<ValueFacts> facts(num_values);
  for (size_t i = 0; i < num_values; ++i)
    BRT_RETURN_IF_ERROR(CheckValue(*f.values()->Get(i), i, name, &facts[i]));

  std::unordered_set<std::string_view> arg_names;
  size_t num_args = Len(f.arguments());
  for (size_t i = 0; i < num_args; ++i) {
    const fb::Argument* a = f.arguments()->Get(i);
    std::string arg =
        where() + " argument #" + std::to_string(i) + " '" + std::string(Str(a->name())) + "'";
    if (!arg_names.insert(Str(a->name())).second) return Invalid(arg + ": duplicate argument name");
    if (a->role() < fb::ArgRole::MIN || a->role() > fb::ArgRole::MAX)
      return Invalid(arg + ": unknown role " + std::to_string(static_cast<int>(a->role())));
    if (a->value() >= num_values)
      return Invalid(arg + ": refers to value #" + std::to_string(a->value()) +
                     " but the function has " + std::to_string(num_values) + " values");
    ValueFacts& vf = facts[a->value()];
    bool defines = a->role() != fb::ArgRole::Output;
    if (defines) {
      if (vf.defined_by != -1)
        return Invalid(arg + ": its value is already bound to another argument");
      vf.defined_by = -2;
    }
    if (a->role() == fb::ArgRole::Weight) {
      if (a->weight() < 0 || static_cast<size_t>(a->weight()) >= Len(root.weights()))
        return Invalid(arg + ": weight segment " + std::to_string(a->weight()) +
                       " does not exist (the file has " + std::to_string(Len(root.weights())) +
                       ")");
      if (!vf.is_static) return Invalid(arg + ": a weight must have a static shape");
      uint64_t length = root.weights()->Get(a->weight())->length();
      if (length != static_cast<uint64_t>(vf.bytes))
        return Invalid(arg + ": weight segment holds " + std::to_string(length) +
                       " bytes, the value needs " + std::to_string(vf.bytes));
    }
    if (a->alias_argument() != -1) {
      if (a->role() != fb::ArgRole::Output)
        return Invalid(arg + ": only outputs may alias another argument");
      if (a->alias_argument() < 0 || static_cast<size_t>(a->alias_argument()) >= num_args)
        return Invalid(arg + ": alias refers to argument #" + std::to_string(a->alias_argument()) +
                       " which does not exist");
      const fb::Argument* target = f.arguments()->Get(a->alias_argument());
      if (target->role() != fb::ArgRole::Input && target->role() != fb::ArgRole::State)
        return Invalid(arg + ": may only alias an input or state argument");
      if (target->value() >= num_values ||
          !SameType(*f.values()->Get(a->value()), *f.values()->Get(target->value())))
        return Invalid(arg + ": aliased argument has a different dtype or shape");
    }
    if (Len(a->sharding())) {
      if (a->value() < num_values && Len(a->sharding()) != Len(f.values()->Get(a->value())->dims()))
        return Invalid(arg + ": its sharding has " + std::to_string(Len(a->sharding())) +
                       " entries, not one per dimension");
      for (size_t d = 0; d < Len(a->sharding()); ++d)
        for (std::string_view axes = Str(a->sharding()->Get(d)); !axes.empty();) {
          const size_t comma = std::min(axes.find(','), axes.size());
          const std::string_view axis = axes.substr(0, comma);
          bool known = false;
          for (size_t m = 0; m < Len(f.mesh()) && !known; ++m)
            known = Str(f.mesh()->Get(m)->name()) == axis;
          if (!known)
            return Invalid(arg + ": its sharding names mesh axis '" + std::string(axis) +
                           "', which the function's mesh does not have");
          axes.remove_prefix(std::min(comma + 1, axes.size()));
        }
    }
  }
  int64_t mesh_ranks = 1;
  for (size_t m = 0; m < Len(f.mesh()); ++m) {
    const int64_t size = f.mesh()->Get(m)->size();
    if (size < 1 || size > (1 << 20) || (mesh_ranks *= size) > (1 << 20))
      return Invalid(where() + ": mesh axis '" + std::string(Str(f.mesh()->Get(m)->name())) +
                     "' has size " + std::to_string(size) +
                     " (the mesh must have 1 to 2^20 ranks)");
  }

  size_t num_ops = Len(f.ops());
  for (size_t i = 0; i < num_ops; ++i) {
    const fb::Op* op = f.ops()->Get(i);
    BRT_RETURN_IF_ERROR(CheckOp(*op, i, name, num_values));
    std::string at =
        where() + " op #" + std::to_string(i) + " '" + std::string(Str(op->kind())) + "'";
    for (size_t k = 0; k < Len(op->operands()); ++k) {
      uint32_t v = op->operands()->Get(k);
      if (facts[v].defined_by == -1)
        return Invalid(at + ": operand " + std::to_string(k) + " (value #" + std::to_string(v) +
                       ") is used before it is defined");
    }
    for (size_t k = 0; k < Len(op->results()); ++k) {
      uint32_t v = op->results()->Get(k);
      if (facts[v].defined_by != -1)
        return Invalid(at + ": result " + std::to_string(k) + " (value #" + std::to_string(v) +
                       ") is defined twice");
      facts[v].defined_by = static_cast<int>(i);
      // A copy moves its value to another device; every other op's results
      // live where it runs.
      if (static_cast<fb::DeviceKind>(f.values()->Get(v)->device()) != op->device() &&
          Str(op->kind()) != "brt.copy")
        return Invalid(at + ": result " + std::to_string(k) +
                       " lives on another device than the op");
    }
  }
  std::vector<bool> is_output(num_values, false);
  for (size_t i = 0; i < num_args; ++i) {
    const fb::Argument* a = f.arguments()->Get(i);
    if (a->role() != fb::ArgRole::Output) continue;
    std::string out = where() + " output '" + std::string(Str(a->name())) + "'";
    if (facts[a->value()].defined_by < 0) return Invalid(out + ": no op produces its value");
    if (is_output[a->value()]) return Invalid(out + ": its value is already another output");
    is_output[a->value()] = true;
  }

  if (const fb::MemoryPlan* plan = f.plan()) {
    size_t num_arenas = Len(plan->arenas());
    if (num_arenas > 64) return Invalid(where() + ": memory plan has too many arenas");
    if (!Aligned(plan->value_offset()))
      return Invalid(where() + ": memory plan offsets are misaligned");
    if (Len(plan->value_arena()) != num_values || Len(plan->value_offset()) != num_values)
      return Invalid(where() + ": memory plan covers " + std::to_string(Len(plan->value_arena())) +
                     " values, the function has " + std::to_string(num_values));
    for (size_t i = 0; i < num_arenas; ++i) {
      const fb::Arena* arena = plan->arenas()->Get(i);
      if (!ValidDevice(arena->device()) || arena->size() > static_cast<uint64_t>(kMaxBytes))
        return Invalid(where() + ": memory plan arena #" + std::to_string(i) + " is invalid");
    }
    for (size_t v = 0; v < num_values; ++v) {
      int32_t arena = plan->value_arena()->Get(v);
      bool needs_storage = facts[v].defined_by >= 0;
      if (arena == -1) continue;
      if (arena < 0 || static_cast<size_t>(arena) >= num_arenas)
        return Invalid(where() + ": memory plan puts value #" + std::to_string(v) + " in arena " +
                       std::to_string(arena) + " which does not exist");
      if (!needs_storage || !facts[v].is_static)
        return Invalid(where() + ": memory plan places value #" + std::to_string(v) +
                       " which is not a static intermediate");
      uint64_t offset = plan->value_offset()->Get(v);
      uint64_t end = 0;
      if (offset % kWeightAlignment != 0 ||
          __builtin_add_overflow(offset, static_cast<uint64_t>(facts[v].bytes), &end) ||
          end > plan->arenas()->Get(arena)->size())
        return Invalid(where() + ": memory plan offset " + std::to_string(offset) + " of value #" +
                       std::to_string(v) + " is misaligned or outside its arena");
    }
  }
  return Status::Ok();
}

// FNV-1a 64 over the FlatBuffer with the checksum field's bytes as zeros.
uint64_t MetadataChecksum(const uint8_t* data, size_t fb_end, const uint8_t* field) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < fb_end; ++i) {
    const uint8_t* p = data + i;
    const uint8_t byte = (field && p >= field && p < field + sizeof(uint64_t)) ? 0 : *p;
    h = (h ^ byte) * 0x100000001b3ull;
  }
  return h;
}

const uint8_t* ChecksumField(const fb::Executable* root) {
  // Generated tables derive privately from flatbuffers::Table.
  return reinterpret_cast<const flatbuffers::Table*>(root)->GetAddressOf(
      fb::Executable::VT_CHECKSUM);
}

}  // namespace

bool SealExecutable(uint8_t* data, size_t size) {
  if (size < 12) return false;
  uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(data);
  if (fb_size > size - sizeof(uint32_t)) return false;
  flatbuffers::Verifier verifier(data, sizeof(uint32_t) + fb_size, 64, 1u << 22);
  if (!fb::VerifySizePrefixedExecutableBuffer(verifier)) return false;
  fb::Executable* root = fb::GetMutableSizePrefixedExecutable(data);
  const uint8_t* field = ChecksumField(root);
  if (!field) return false;
  return root->mutate_checksum(MetadataChecksum(data, sizeof(uint32_t) + fb_size, field));
}

Expected<ExecutableBytes> MapFile(const std::string& path, bool copy_on_write) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
                  "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::kInvalidArgument, "'" + path + "' is not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return Status(StatusCode::kInvalidExecutable, "'" + path + "' is empty");
  }
  void* p = ::mmap(nullptr, size, PROT_READ | (copy_on_write ? PROT_WRITE : 0), MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    return Status(StatusCode::kResourceExhausted,
                  "cannot map '" + path + "': " + std::strerror(err));
  ExecutableBytes bytes;
  bytes.owner = std::shared_ptr<const void>(
      p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
  bytes.data = static_cast<const uint8_t*>(p);
  bytes.size = size;
  return bytes;
}

ExecutableBytes CopyBytes(std::span<const uint8_t> in) {
  // 64-byte aligned so weight segments keep their alignment in memory.
  size_t rounded = (in.size() + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) return {};
  if (!in.empty()) std::memcpy(p, in.data(), in.size());
  ExecutableBytes bytes;
  bytes.owner =
      std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  bytes.data = static_cast<const uint8_t*>(p);
  bytes.size = in.size();
  return bytes;
}

std::vector<Dim> ValueDims(const fb::Value& value) {
  std::vector<Dim> dims;
  for (size_t i = 0; i < Len(value.dims()); ++i) {
    const fb::Dim* d = value.dims()->Get(i);
    if (d->size() >= 0)
      dims.emplace_back(d->size());
    else
      dims.emplace_back(std::string(Str(d->symbol())));
  }
  return dims;
}

Expected<VerifiedExecutable> VerifyExecutable(ExecutableBytes bytes) {
  if (!bytes.data)
    return Status(StatusCode::kResourceExhausted, "out of memory copying executable");
  if (bytes.size < 12)
    return Invalid("file is " + std::to_string(bytes.size) +
                   " bytes, too small to be a brt executable");
  if (!flatbuffers::BufferHasIdentifier(bytes.data, fb::ExecutableIdentifier(), true))
    return Invalid("not a brt executable: file identifier is not 'BRTX'");
  uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(bytes.data);
  if (fb_size > bytes.size - sizeof(uint32_t))
    return Invalid("FlatBuffer claims " + std::to_string(fb_size) + " bytes but the file has " +
                   std::to_string(bytes.size));
  size_t fb_end = sizeof(uint32_t) + fb_size;
  flatbuffers::Verifier verifier(bytes.data, fb_end, /*max_depth=*/64, /*max_tables=*/1u << 22);
  if (!fb::VerifySizePrefixedExecutableBuffer(verifier))
    return Invalid("FlatBuffer structure is corrupt (verification failed)");
  const fb::Executable* root = fb::GetSizePrefixedExecutable(bytes.data);
  const uint8_t* checksum_field = ChecksumField(root);
  if (!checksum_field || MetadataChecksum(bytes.data, fb_end, checksum_field) != root->checksum())
    return Invalid("metadata checksum mismatch: the file is corrupt or was edited");

  if (root->format_major() != kFormatMajor || root->format_minor() > kFormatMinor)
    return Status(StatusCode::kUnsupported,
                  "executable format version " + std::to_string(root->format_major()) + "." +
                      std::to_string(root->format_minor()) +
                      " is not supported by this runtime (format " + std::to_string(kFormatMajor) +
                      "." + std::to_string(kFormatMinor) + "); " +
                      (root->format_major() > kFormatMajor || root->format_minor() > kFormatMinor
                           ? "upgrade brt"
                           : "recompile the model"));

  for (size_t i = 0; i < Len(root->weights()); ++i) {
    const fb::WeightSegment* w = root->weights()->Get(i);
    uint64_t end = 0;
    if (w->offset() < fb_end || w->offset() % kWeightAlignment != 0 ||
        __builtin_add_overflow(w->offset(), w->length(), &end) || end > bytes.size)
      return Invalid("weight segment #" + std::to_string(i) + " (offset " +
                     std::to_string(w->offset()) + ", length " + std::to_string(w->length()) +
                     ") is misaligned or outside the file (" + std::to_string(bytes.size) +
                     " bytes)");
  }
  if (Len(root->functions()) == 0) return Invalid("executable has no functions");
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < Len(root->functions()); ++i) {
    const fb::Function* f = root->functions()->Get(i);
    if (!names.insert(Str(f->name())).second)
      return Invalid("duplicate function name '" + std::string(Str(f->name())) + "'");
    BRT_RETURN_IF_ERROR(CheckFunction(*f, *root));
  }
  VerifiedExecutable out;
  out.bytes = std::move(bytes);
  out.root = root;
  return out;
}

}  // namespace brt::core
