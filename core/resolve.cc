// Resolution, at load: each op to the first loaded provider for its device
// whose kernel table takes its kind and dtypes; an op no provider takes, or
// a kind neither the op registry nor any provider knows, fails the load with
// the op, its signature and each provider's reason.
#include "session_impl.h"

#include "brt/op_registry.h"

namespace brt {

namespace {

// Whether a provider's kernel table lists `kind` (how a plugin declares a
// kind the op registry does not have).
bool AnyProviderDeclares(const std::vector<std::shared_ptr<const LoadedProvider>>& providers,
                         const std::string& kind) {
  for (const auto& p : providers)
    for (int32_t k = 0; k < p->api->kernel_count(); ++k) {
      BrtKernelInfo info{};
      if (p->api->kernel_info(k, &info) == BRT_OK && info.kind && kind == info.kind) return true;
    }
  return false;
}

// "(f32,i32) -> (f32)"
std::string SignatureText(const std::vector<DType>& in, const std::vector<DType>& out) {
  std::string s = "(";
  for (size_t i = 0; i < in.size(); ++i) s += (i ? "," : "") + std::string(DTypeName(in[i]));
  s += ") -> (";
  for (size_t i = 0; i < out.size(); ++i) s += (i ? "," : "") + std::string(DTypeName(out[i]));
  return s + ")";
}

}  // namespace

Status Session::Impl::ResolveOps(const fb::Function& fn, FunctionState* fs,
                                 const std::string& where) {
  for (size_t i = 0; i < Len(fn.ops()); ++i) {
    const fb::Op* op = fn.ops()->Get(i);
    ResolvedOp r;
    r.kind = Str(op->kind());
    r.stream = op->stream();
    for (size_t k = 0; k < Len(op->operands()); ++k) r.operands.push_back(op->operands()->Get(k));
    for (size_t k = 0; k < Len(op->results()); ++k) r.results.push_back(op->results()->Get(k));
    for (size_t k = 0; k < Len(op->attrs()); ++k) {
      const fb::Attr* a = op->attrs()->Get(k);
      BrtAttr b{};
      b.name = a->name()->c_str();
      b.kind = static_cast<int32_t>(a->kind());
      b.i = a->i();
      b.f = a->f();
      // Empty vectors stay null: FlatBuffers does not align them.
      if (Len(a->ints())) b.ints = a->ints()->data(), b.num_ints = a->ints()->size();
      if (Len(a->floats())) b.floats = a->floats()->data(), b.num_floats = a->floats()->size();
      b.str = a->s() ? a->s()->c_str() : "";
      if (a->bytes()) b.bytes = a->bytes()->data(), b.num_bytes = a->bytes()->size();
      r.attrs.push_back(b);
      if (b.kind == BRT_ATTR_STRING && std::string_view(b.name) == "kernel") {
        for (size_t g = 0; g < Len(exe.root->kernels()) && !r.generated; ++g)
          if (Str(exe.root->kernels()->Get(g)->name()) == b.str)
            r.generated = exe.root->kernels()->Get(g);
        if (!r.generated)
          return Status(StatusCode::kInvalidExecutable,
                        where + " op #" + std::to_string(i) + " '" + r.kind + "' names kernel '" +
                            b.str + "', which the executable's kernel table does not have");
      }
    }
    std::vector<int32_t> in_codes, out_codes;
    std::vector<DType> in_types, out_types;
    for (uint32_t v : r.operands)
      in_types.push_back(fs->values[v].dtype),
          in_codes.push_back(static_cast<int32_t>(fs->values[v].dtype));
    for (uint32_t v : r.results)
      out_types.push_back(fs->values[v].dtype),
          out_codes.push_back(static_cast<int32_t>(fs->values[v].dtype));
    BrtOpSignature sig{sizeof(BrtOpSignature),
                       r.kind.c_str(),
                       static_cast<int32_t>(op->device()),
                       static_cast<int32_t>(in_codes.size()),
                       in_codes.data(),
                       static_cast<int32_t>(out_codes.size()),
                       out_codes.data()};
    if (IsControlFlowKind(r.kind)) {
      // The core runs it; LinkControlFlow finds its regions once all are loaded.
      r.provider = ControlFlowProvider();
      r.control = std::make_shared<ControlFlowOp>();
      r.control->where = where + " op #" + std::to_string(i) + " '" + r.kind + "'";
      fs->ops.push_back(std::move(r));
      continue;
    }
    if (!FindOpSchema(r.kind) && !AnyProviderDeclares(providers, r.kind))
      return Status(StatusCode::kInvalidExecutable,
                    where + " op #" + std::to_string(i) + " '" + r.kind +
                        "': unknown op kind (not in brt's op registry, brt/ops.def, and no "
                        "loaded provider declares it in its kernel table)");
    std::string tried;
    for (const auto& p : providers) {
      if (p->api->device_kind != sig.device) continue;
      if (p->api->device_count() < 1) {
        tried += (tried.empty() ? "" : "; ") + p->name() + ": it sees no " +
                 DeviceKindName(static_cast<DeviceKind>(sig.device)) + " device";
        continue;
      }
      BrtErrorBuffer err{};
      BrtKernel kernel{};
      if (p->api->resolve_kernel(&sig, &kernel, &err) == BRT_OK && kernel.run && kernel.prepare) {
        r.provider = p.get();
        r.kernel = kernel;
        break;
      }
      tried += (tried.empty() ? "" : "; ") + p->name() + ": " + err.message;
    }
    if (!r.provider)
      return Status(
          StatusCode::kUnsupported,
          where + " op #" + std::to_string(i) + " '" + r.kind + "' " +
              SignatureText(in_types, out_types) + " on " +
              DeviceKindName(static_cast<DeviceKind>(sig.device)) +
              ": no loaded provider can run it (" +
              (tried.empty() ? "no provider for this device is loaded" : "tried " + tried) + ")");
    fs->ops.push_back(std::move(r));
  }
  fs->info.num_ops = static_cast<int>(fs->ops.size());
  return Status::Ok();
}

}  // namespace brt
