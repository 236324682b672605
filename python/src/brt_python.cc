// The brt Python extension (nanobind): Session, RequestContext, zero-copy
// tensor binding through DLPack (NumPy, JAX, PyTorch, CuPy; host or CUDA
// memory) and outputs that share the runtime's buffers. Over 500 lines:
// nanobind's module definition is one function, which names every binding.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "brt/safetensors.h"
#include "brt/session.h"

namespace nb = nanobind;

namespace {

// Core errors become Python exceptions carrying the core's message.
[[noreturn]] void Raise(const brt::Status& s) {
  if (s.code() == brt::StatusCode::kInvalidArgument || s.code() == brt::StatusCode::kNotFound)
    throw nb::value_error(s.message().c_str());
  throw std::runtime_error(s.message());
}

void Check(const brt::Status& s) {
  if (!s.ok()) Raise(s);
}

template <typename T>
T Take(brt::Expected<T> e) {
  if (!e.ok()) Raise(e.status());
  return std::move(e).value();
}

std::optional<brt::DType> FromDLPack(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(t.code);
  if (t.lanes != 1) return std::nullopt;
  if (code == C::Float && t.bits == 32) return brt::DType::kF32;
  if (code == C::Float && t.bits == 16) return brt::DType::kF16;
  if (code == C::Float && t.bits == 64) return brt::DType::kF64;
  if (code == C::Bfloat && t.bits == 16) return brt::DType::kBF16;
  if (code == C::Bool && t.bits == 8) return brt::DType::kI1;
  if (code == C::Int && t.bits == 8) return brt::DType::kI8;
  if (code == C::Int && t.bits == 16) return brt::DType::kI16;
  if (code == C::Int && t.bits == 32) return brt::DType::kI32;
  if (code == C::Int && t.bits == 64) return brt::DType::kI64;
  if (code == C::UInt && t.bits == 8) return brt::DType::kU8;
  if (code == C::UInt && t.bits == 16) return brt::DType::kU16;
  if (code == C::UInt && t.bits == 32) return brt::DType::kU32;
  if (code == C::UInt && t.bits == 64) return brt::DType::kU64;
  if (code == C::Complex && t.bits == 64) return brt::DType::kC64;
  if (code == C::Complex && t.bits == 128) return brt::DType::kC128;
  return std::nullopt;
}

nb::dlpack::dtype ToDLPack(brt::DType d) {
  using C = nb::dlpack::dtype_code;
  auto make = [](C code, uint8_t bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), bits, 1};
  };
  switch (d) {
    case brt::DType::kF32:
      return make(C::Float, 32);
    case brt::DType::kF16:
      return make(C::Float, 16);
    case brt::DType::kF64:
      return make(C::Float, 64);
    case brt::DType::kBF16:
      return make(C::Bfloat, 16);
    case brt::DType::kI1:
      return make(C::Bool, 8);
    case brt::DType::kI8:
      return make(C::Int, 8);
    case brt::DType::kI16:
      return make(C::Int, 16);
    case brt::DType::kI32:
      return make(C::Int, 32);
    case brt::DType::kI64:
      return make(C::Int, 64);
    case brt::DType::kU16:
      return make(C::UInt, 16);
    case brt::DType::kU32:
      return make(C::UInt, 32);
    case brt::DType::kU64:
      return make(C::UInt, 64);
    case brt::DType::kC64:
      return make(C::Complex, 64);
    case brt::DType::kC128:
      return make(C::Complex, 128);
    default:
      return make(C::UInt, 8);
  }
}

// Where a DLPack array lives, in brt's terms. Pinned host memory is host
// memory; other devices are refused by name.
brt::Device DeviceOf(const std::string& what, const nb::ndarray<nb::ro>& array) {
  const int type = array.device_type();
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value)
    return brt::Device{brt::DeviceKind::kCpu, 0};
  if (type == nb::device::cuda::value)
    return brt::Device{brt::DeviceKind::kCuda, array.device_id()};
  throw nb::type_error((what + ": arrays on DLPack device type " + std::to_string(type) +
                        " are not supported (brt binds host and CUDA memory)")
                           .c_str());
}

// What the element types brt binds are called, for messages.
constexpr char kBindableTypes[] =
    "float32, float16, bfloat16, float64, bool, int8, int16, int32, int64, uint8, uint16, uint32, "
    "uint64, complex64, complex128";

std::string Text(nb::handle h) { return nb::str(h).c_str(); }

// An array view of obj, or false; a failed import (numpy's __dlpack__
// refusing, say) leaves no Python error behind.
template <typename Array>
bool TryArray(nb::handle obj, Array& array) {
  if (nb::try_cast(obj, array)) return true;
  PyErr_Clear();
  return false;
}

// Why `obj` cannot be taken as an array, in the user's terms.
std::string WhyNotAnArray(nb::handle obj) {
  const std::string type = Text(obj.type().attr("__name__"));
  if (nb::hasattr(obj, "is_deleted") && nb::cast<bool>(obj.attr("is_deleted")()))
    return "the " + type +
           " has been deleted (donated to a jax.jit call with donate_argnums?); pass a live array";
  if (!nb::hasattr(obj, "dtype"))
    return "expected an array (NumPy, JAX, PyTorch, CuPy: anything with __dlpack__ or the buffer "
           "protocol), got " +
           type;
  const std::string dtype = Text(obj.attr("dtype"));
  nb::object byteorder = nb::getattr(obj.attr("dtype"), "byteorder", nb::none());
  if (!byteorder.is_none() && Text(byteorder) == ">")
    return "the " + type + " has non-native byte order (" + dtype +
           "); pass array.astype(array.dtype.newbyteorder('='))";
  return "element type " + dtype + " is not supported; brt binds " + kBindableTypes;
}

// A Python array (anything DLPack, on the host or a CUDA device) as a tensor
// that keeps the array alive until the runtime lets go of it. No copy:
// non-contiguous arrays are refused. Read-only arrays (what np.asarray gives
// for a JAX array) bind as inputs; an argument the run writes (an output)
// needs a writable one. bfloat16 NumPy arrays (ml_dtypes) bind through a
// uint16 view of the same memory.
brt::Tensor FromArray(const std::string& what, nb::handle obj, bool written) {
  nb::object source = nb::borrow(obj);
  std::optional<brt::DType> dtype;
  nb::ndarray<nb::ro> array;
  if (!TryArray(source, array) && nb::hasattr(obj, "dtype") && nb::hasattr(obj, "view") &&
      Text(obj.attr("dtype")) == "bfloat16") {
    source = obj.attr("view")(nb::module_::import_("numpy").attr("uint16"));
    dtype = brt::DType::kBF16;
    if (!TryArray(source, array)) dtype.reset();
  }
  if (!array.is_valid()) throw nb::type_error((what + ": " + WhyNotAnArray(obj)).c_str());
  if (written) {
    nb::ndarray<> writable;
    if (!TryArray(source, writable))
      throw nb::value_error((what + ": the array is read-only, but the run writes this argument "
                                    "(an output); bind a writable array")
                                .c_str());
  }
  if (!dtype) dtype = FromDLPack(array.dtype());
  if (!dtype) throw nb::type_error((what + ": " + WhyNotAnArray(obj)).c_str());
  const brt::Device device = DeviceOf(what, array);
  std::vector<int64_t> shape;
  int64_t expected = 1;
  // An empty array has no element to lay out: any strides will do (NumPy
  // gives it zeros and flags it contiguous).
  const bool empty = array.size() == 0;
  for (size_t d = array.ndim(); d-- > 0;) {
    if (!empty && array.shape(d) > 1 && array.stride(d) != expected)
      throw nb::value_error(
          (what + ": the array is not C-contiguous (strides in elements do not match its shape); "
                  "pass a contiguous copy (numpy.ascontiguousarray, tensor.contiguous()) -- brt "
                  "binds arrays without copying")
              .c_str());
    expected *= static_cast<int64_t>(array.shape(d));
  }
  for (size_t d = 0; d < array.ndim(); ++d) shape.push_back(static_cast<int64_t>(array.shape(d)));
  PyObject* ref = source.ptr();
  Py_INCREF(ref);
  // Inputs are never written (checked above for what is), so const is cast away here only.
  return brt::Tensor::Adopt(
      const_cast<void*>(array.data()), *dtype, std::move(shape),
      [ref](void*) {
        nb::gil_scoped_acquire gil;  // the runtime may let go on another thread
        Py_DECREF(ref);
      },
      device);
}

// An array over the tensor's memory; the capsule keeps the buffer alive (also
// after the Session is gone). Host tensors become NumPy arrays; device tensors
// become DLPack arrays (torch.from_dlpack, cupy.from_dlpack, jax.dlpack).
nb::object ToArray(const brt::Tensor& t) {
  auto* holder = new brt::Tensor(t);
  nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<brt::Tensor*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  if (t.device().kind == brt::DeviceKind::kCuda)
    return nb::cast(nb::ndarray<>(t.data(), shape.size(), shape.data(), owner, nullptr,
                                  ToDLPack(t.dtype()), nb::device::cuda::value,
                                  t.device().ordinal));
  // NumPy has no bfloat16 of its own: such results come back as ml_dtypes'
  // bfloat16, a view of the same memory.
  const bool bf16 = t.dtype() == brt::DType::kBF16;
  nb::object array =
      nb::cast(nb::ndarray<nb::numpy>(t.data(), shape.size(), shape.data(), owner, nullptr,
                                      bf16 ? nb::dtype<uint16_t>() : ToDLPack(t.dtype())));
  if (bf16) array = array.attr("view")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  return array;
}

nb::dict ArgumentDict(const brt::FunctionInfo& f, const brt::ArgumentInfo& a) {
  nb::dict d;
  d["name"] = a.name;
  d["role"] = std::string(brt::ArgRoleName(a.role));
  d["dtype"] = std::string(brt::DTypeName(a.dtype));
  nb::list shape;
  for (const brt::Dim& dim : a.shape)
    if (dim.is_static())
      shape.append(dim.size);
    else
      shape.append(dim.symbol);
  d["shape"] = nb::tuple(shape);
  d["device"] =
      std::string(brt::DeviceKindName(a.device.kind)) + ":" + std::to_string(a.device.ordinal);
  if (!a.sharding.empty()) d["sharding"] = nb::tuple(nb::cast(a.sharding));
  // An output written in place of a state (or input): that argument's name.
  if (a.alias_argument >= 0) d["alias_of"] = f.arguments[a.alias_argument].name;
  return d;
}

int ArgIndex(const brt::FunctionInfo& f, nb::handle key) {
  if (nb::isinstance<nb::int_>(key)) {
    const long long index = nb::cast<long long>(key);
    if (index < 0 || index >= static_cast<long long>(f.arguments.size()))
      throw nb::index_error(("function '" + f.name + "' has " + std::to_string(f.arguments.size()) +
                             " arguments; got index " + std::to_string(index))
                                .c_str());
    return static_cast<int>(index);
  }
  if (!nb::isinstance<nb::str>(key))
    throw nb::type_error(("an argument is named by its index (int) or name (str), got " +
                          Text(key.type().attr("__name__")))
                             .c_str());
  const std::string name = nb::cast<std::string>(key);
  for (size_t i = 0; i < f.arguments.size(); ++i)
    if (f.arguments[i].name == name) return static_cast<int>(i);
  throw nb::value_error(("function '" + f.name + "' has no argument named '" + name + "'").c_str());
}

class PyRequest {
 public:
  PyRequest(std::shared_ptr<brt::Session> s, std::unique_ptr<brt::RequestContext> c)
      : session_(std::move(s)), ctx_(std::move(c)) {}

  void Bind(nb::handle key, nb::handle array) {
    const int index = ArgIndex(ctx_->function(), key);
    const brt::ArgumentInfo& arg = ctx_->function().arguments[index];
    const std::string what = "argument '" + arg.name + "'";
    const bool written = arg.role == brt::ArgRole::kOutput || arg.role == brt::ArgRole::kState;
    Check(ctx_->Bind(index, FromArray(what, array, written), brt::Ownership::kRuntimeOwned));
  }
  void Run() {
    brt::Status s;
    {
      nb::gil_scoped_release release;
      s = ctx_->Run();
    }
    Check(s);
  }
  void RunAsync() { Check(ctx_->RunAsync()); }
  void Wait() {
    brt::Status s;
    {
      nb::gil_scoped_release release;
      s = ctx_->Wait();
    }
    Check(s);
  }
  // Copies of the given arrays (any array, read-only JAX ones included)
  // become the state, on its device; every state argument must be given.
  void BindState(nb::dict values) {
    const brt::FunctionInfo& f = ctx_->function();
    std::vector<std::pair<int, brt::Tensor>> tensors;
    std::string missing;
    for (size_t i = 0; i < f.arguments.size(); ++i) {
      const brt::ArgumentInfo& arg = f.arguments[i];
      if (arg.role != brt::ArgRole::kState) continue;
      if (!values.contains(arg.name.c_str())) {
        missing += (missing.empty() ? "" : ", ") + arg.name;
        continue;
      }
      tensors.emplace_back(static_cast<int>(i),
                           FromArray("state '" + arg.name + "'", values[arg.name.c_str()], false));
    }
    for (auto [key, value] : values) {
      const int index = ArgIndex(f, key);
      if (f.arguments[index].role != brt::ArgRole::kState)
        throw nb::value_error(("bind_state: '" + f.arguments[index].name + "' is " +
                               brt::ArgRoleName(f.arguments[index].role) +
                               ", not state; bind it with bind()")
                                  .c_str());
    }
    if (!missing.empty())
      throw nb::value_error(("bind_state: no value for state " + missing).c_str());
    for (auto& [index, tensor] : tensors) Check(ctx_->Bind(index, tensor, brt::Ownership::kCopied));
  }
  nb::dict State() {
    nb::dict out;
    const brt::FunctionInfo& f = ctx_->function();
    for (size_t i = 0; i < f.arguments.size(); ++i)
      if (f.arguments[i].role == brt::ArgRole::kState)
        out[f.arguments[i].name.c_str()] = ToArray(Take(ctx_->State(static_cast<int>(i))));
    return out;
  }
  nb::list Outputs() {
    nb::list out;
    for (const brt::Tensor& t : Take(ctx_->Outputs())) out.append(ToArray(t));
    return out;
  }
  const brt::FunctionInfo& function() const { return ctx_->function(); }
  brt::RequestContext& context() { return *ctx_; }

 private:
  std::shared_ptr<brt::Session> session_;
  std::unique_ptr<brt::RequestContext> ctx_;
};

// The function of `s` whose inputs have the shapes of the arrays given
// (positional in input order, or by name): how an executable holding one
// model compiled for several input shapes is run without naming one.
std::string FunctionForShapes(const brt::Session& s, const nb::args& inputs,
                              const nb::kwargs& named) {
  auto shape_of = [](nb::handle array) {
    if (!nb::hasattr(array, "shape"))
      throw nb::type_error(("an input is a " + nb::cast<std::string>(nb::str(array.type())) +
                            ", not an array with a shape: the function to run is picked by the "
                            "inputs' shapes")
                               .c_str());
    std::vector<int64_t> shape;
    for (nb::handle d : nb::iter(array.attr("shape"))) shape.push_back(nb::cast<int64_t>(d));
    return shape;
  };
  auto fits = [](const std::vector<brt::Dim>& dims, const std::vector<int64_t>& shape) {
    if (dims.size() != shape.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i].is_static() && dims[i].size != shape[i]) return false;
    return true;
  };
  std::vector<std::vector<int64_t>> positional;
  std::vector<std::pair<std::string, std::vector<int64_t>>> by_name;
  std::string given;
  for (nb::handle a : inputs) {
    positional.push_back(shape_of(a));
    given += (given.empty() ? "" : ", ") + brt::FormatShape(positional.back());
  }
  for (auto [key, value] : named) {
    by_name.emplace_back(nb::cast<std::string>(key), shape_of(value));
    given += (given.empty() ? "" : ", ") + by_name.back().first + "=" +
             brt::FormatShape(by_name.back().second);
  }
  std::vector<std::string> matches;
  std::string offered;
  for (const brt::FunctionInfo& f : s.functions()) {
    bool ok = positional.size() <= f.input_indices.size();
    std::string shapes;
    for (size_t i = 0; i < f.input_indices.size(); ++i) {
      const brt::ArgumentInfo& a = f.arguments[f.input_indices[i]];
      shapes += (shapes.empty() ? "" : ", ") + brt::FormatDims(a.shape);
      if (ok && i < positional.size()) ok = fits(a.shape, positional[i]);
      for (const auto& [name, shape] : by_name)
        if (ok && name == a.name) ok = fits(a.shape, shape);
    }
    offered += "; " + f.name + " (" + shapes + ")";
    if (ok) matches.push_back(f.name);
  }
  if (matches.size() == 1) return matches[0];
  throw nb::value_error(((matches.empty() ? "no function of this executable takes inputs of shapes "
                                          : "several functions of this executable take inputs "
                                            "of shapes ") +
                         given + ": pass function=NAME. It has" + offered)
                            .c_str());
}

}  // namespace

NB_MODULE(_brt, m) {
  m.doc() = "brt runtime: sessions, request contexts and zero-copy tensor binding";

  nb::class_<PyRequest>(m, "RequestContext")
      .def(
          "bind", [](PyRequest& r, nb::handle key, nb::handle array) { r.Bind(key, array); },
          nb::arg("arg"), nb::arg("array"), "Binds an input (by name or index) without copying it.")
      .def("run", &PyRequest::Run, "Runs and waits; the GIL is released meanwhile.")
      .def("run_async", &PyRequest::RunAsync)
      .def("wait", &PyRequest::Wait)
      .def("outputs", &PyRequest::Outputs,
           "Outputs sharing the runtime's buffers: NumPy arrays, or DLPack arrays on a GPU.")
      .def("bind_state", &PyRequest::BindState, nb::arg("values"),
           "Binds every state argument (name -> array) to a copy on its device, kept by the "
           "context across runs: each run updates it in place.")
      .def("state", &PyRequest::State,
           "The state (name -> array), sharing the live buffers like outputs(): the next run "
           "overwrites them.")
      .def(
          "save_state",
          [](PyRequest& r, const std::string& path) { Check(r.context().SaveState(path)); },
          nb::arg("path"),
          "Writes the state to a .safetensors file (readable by safetensors, "
          "PyTorch, JAX through NumPy).")
      .def(
          "load_state",
          [](PyRequest& r, const std::string& path) { Check(r.context().LoadState(path)); },
          nb::arg("path"),
          "Binds every state argument to a copy of the same-named tensor of a .safetensors file.")
      .def_prop_ro("function", [](const PyRequest& r) { return r.function().name; })
      .def(
          "set_graph_capture",
          [](PyRequest& r, bool enabled) { r.context().SetGraphCapture(enabled); },
          nb::arg("enabled"), "CUDA graphs: record the device ops once, replay them after.")
      .def(
          "set_stream",
          [](PyRequest& r, std::optional<uintptr_t> stream) {
            const brt::Device cuda{brt::DeviceKind::kCuda, 0};
            Check(stream ? r.context().SetQueue(cuda, reinterpret_cast<void*>(*stream))
                         : r.context().UseOwnQueue(cuda));
          },
          nb::arg("stream").none(),
          "Runs on the caller's CUDA stream (e.g. torch.cuda.current_stream().cuda_stream; 0 is "
          "the default stream, used as given); None goes back to the context's own.")
      .def_prop_ro("last_run_replayed_graph",
                   [](PyRequest& r) { return r.context().last_run_replayed_graph(); });

  m.def(
      "load_safetensors",
      [](const std::string& path) {
        nb::dict out;
        for (const brt::NamedTensor& t : Take(brt::ReadSafetensors(path)).tensors)
          out[t.name.c_str()] = ToArray(t.tensor);
        return out;
      },
      nb::arg("path"),
      "Reads a .safetensors file: name -> NumPy array over a copy-on-write mapping of it.");
  m.def(
      "save_safetensors",
      [](const std::string& path, nb::dict tensors, std::map<std::string, std::string> metadata) {
        std::vector<brt::NamedTensor> named;
        for (auto [key, value] : tensors) {
          const std::string name = nb::cast<std::string>(key);
          named.push_back({name, FromArray("tensor '" + name + "'", value, false)});
        }
        brt::Status s;
        {
          nb::gil_scoped_release release;
          s = brt::WriteSafetensors(path, named, metadata);
        }
        Check(s);
      },
      nb::arg("path"), nb::arg("tensors"),
      nb::arg("metadata") = std::map<std::string, std::string>(),
      "Writes name -> host array (contiguous) to a .safetensors file.");

  nb::class_<brt::Session>(m, "Session")
      .def(nb::new_([](const std::string& path, std::optional<std::vector<std::string>> providers,
                       std::optional<int> rank, std::optional<int> world_size, bool inspect_only,
                       int threads, bool spinning, int linger_us, int64_t max_loop_iterations,
                       int max_shape_plans) {
             brt::SessionOptions options;
             if (providers) options.providers = *providers;
             if (rank) options.rank = *rank;
             if (world_size) options.world_size = *world_size;
             options.inspect_only = inspect_only;
             options.intra_op_threads = threads;
             options.allow_spinning = spinning;
             options.linger_microseconds = linger_us;
             options.max_loop_iterations = max_loop_iterations;
             options.max_shape_plans = max_shape_plans;
             return Take(brt::Session::LoadFile(path, options));
           }),
           nb::arg("path"), nb::arg("providers") = nb::none(), nb::arg("rank") = nb::none(),
           nb::arg("world_size") = nb::none(), nb::arg("inspect_only") = false,
           nb::arg("threads") = 0, nb::arg("spinning") = true, nb::arg("linger_us") = 0,
           nb::arg("max_loop_iterations") = 0, nb::arg("max_shape_plans") = 32,
           "Loads a .brtx (memory-mapped). A program with collectives takes its rank and world "
           "size from mpirun's (or torchrun's) environment, or from rank= and world_size=. "
           "inspect_only=True only describes it (functions, meshes, shardings): no providers, "
           "no world, nothing runs. threads: the CPU threads one request's ops share their "
           "work among (0: $BRT_NUM_THREADS, else one per CPU); every Session of the process "
           "draws on the same worker threads. spinning=False sends workers to sleep as soon as "
           "an op's work is done instead of after a short wait for the next op's. "
           "linger_us (SessionOptions.linger_microseconds, 0 to 1000; 0: off): with spinning on "
           "and more than one thread, when a "
           "request ends up to threads - 1 workers wait this long for the next request spinning "
           "without yielding their CPU; beside a lower-priority job that keeps requests at their "
           "quiet speed, beside a job of equal weight it costs a scheduler tick in p99. "
           "max_loop_iterations: a while loop running this many iterations fails the run, "
           "naming it (0: no limit). max_shape_plans: a function with symbolic dimensions "
           "keeps this many plans (one per set of symbol values), the least recently used "
           "dropped first.")
      .def_prop_ro("rank", &brt::Session::rank)
      .def_prop_ro("world_size", &brt::Session::world_size)
      .def_prop_ro("threads", &brt::Session::intra_op_threads,
                   "The CPU threads one request's ops share their work among.")
      .def_prop_ro("spinning", &brt::Session::allow_spinning)
      .def_prop_ro("linger_us", &brt::Session::linger_microseconds,
                   "Microseconds workers linger after a request (0 without spinning, with one "
                   "thread, or off).")
      .def_prop_ro("functions",
                   [](const brt::Session& s) {
                     nb::list fns;
                     for (const brt::FunctionInfo& f : s.functions()) {
                       nb::dict d;
                       d["name"] = f.name;
                       nb::list args;
                       for (const auto& a : f.arguments) args.append(ArgumentDict(f, a));
                       d["arguments"] = args;
                       nb::list mesh;
                       for (const brt::MeshAxis& axis : f.mesh)
                         mesh.append(nb::make_tuple(axis.name, axis.size));
                       d["mesh"] = mesh;
                       fns.append(d);
                     }
                     return fns;
                   })
      .def_prop_ro("providers", &brt::Session::provider_names)
      .def(
          "shape_plan_stats",
          [](const brt::Session& s, std::optional<std::string> function) {
            const brt::ShapePlanStats stats = Take(s.shape_plan_stats(function.value_or("")));
            nb::dict d;
            d["plans"] = stats.plans;
            d["hits"] = stats.hits;
            d["misses"] = stats.misses;
            d["evictions"] = stats.evictions;
            d["last_plan_ms"] = static_cast<double>(stats.last_plan_ns) / 1e6;
            d["total_plan_ms"] = static_cast<double>(stats.total_plan_ns) / 1e6;
            return d;
          },
          nb::arg("function") = nb::none(),
          "A function's plans per set of symbol values: held, hits, misses (each a new "
          "shape's planning: memory and kernels, last_plan_ms of the latest), evictions.")
      .def(
          "new_request",
          [](brt::Session& s, std::optional<std::string> function) {
            std::shared_ptr<brt::Session> shared = s.shared_from_this();
            return PyRequest(shared, Take(s.NewRequest(function.value_or(""))));
          },
          nb::arg("function") = nb::none())
      .def(
          "run",
          [](brt::Session& s, nb::args inputs, nb::kwargs named) {
            std::string function;
            if (named.contains("function"))
              function = nb::cast<std::string>(named["function"]);
            else if (s.functions().size() > 1)
              function = FunctionForShapes(s, inputs, named);
            PyRequest r(s.shared_from_this(), Take(s.NewRequest(function)));
            const brt::FunctionInfo& f = r.function();
            if (inputs.size() > f.input_indices.size())
              throw nb::value_error(("got " + std::to_string(inputs.size()) +
                                     " inputs, function '" + f.name + "' takes " +
                                     std::to_string(f.input_indices.size()))
                                        .c_str());
            for (size_t i = 0; i < inputs.size(); ++i)
              r.Bind(nb::int_(f.input_indices[i]), inputs[i]);
            for (auto [key, value] : named)
              if (nb::cast<std::string>(key) != "function") r.Bind(key, value);
            r.Run();
            return r.Outputs();
          },
          "session.run(*inputs, function=None, **named) -> list of outputs. Without function= "
          "in an executable of several functions (one model compiled for several input "
          "shapes), the one whose input shapes the arrays have.");
}
