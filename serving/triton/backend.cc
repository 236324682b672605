// The Triton backend entry points (TRITONBACKEND_*) for brt executables, and
// loading a model version. No exception crosses into the server: each entry
// point catches and answers with a TRITONSERVER_Error.
#include <exception>
#include <filesystem>

#include "backend_state.h"

namespace brt::triton {

Status FromTriton(TRITONSERVER_Error* error) {
  if (!error) return Status::Ok();
  Status status(StatusCode::kInternal, TRITONSERVER_ErrorMessage(error));
  TRITONSERVER_ErrorDelete(error);
  return status;
}

TRITONSERVER_Error* ToTriton(const Status& status) {
  if (status.ok()) return nullptr;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidExecutable:
      code = TRITONSERVER_ERROR_INVALID_ARG;
      break;
    case StatusCode::kNotFound:
      code = TRITONSERVER_ERROR_NOT_FOUND;
      break;
    case StatusCode::kUnsupported:
      code = TRITONSERVER_ERROR_UNSUPPORTED;
      break;
    case StatusCode::kResourceExhausted:
      code = TRITONSERVER_ERROR_UNAVAILABLE;
      break;
    default:
      break;
  }
  return TRITONSERVER_ErrorNew(code, status.message().c_str());
}

void Log(TRITONSERVER_LogLevel level, const std::string& message, std::source_location where) {
  if (!TRITONSERVER_LogIsEnabled(level)) return;
  const std::string file = std::filesystem::path(where.file_name()).filename().string();
  TRITONSERVER_Error* error =
      TRITONSERVER_LogMessage(level, file.c_str(), static_cast<int>(where.line()), message.c_str());
  if (error) TRITONSERVER_ErrorDelete(error);
}

namespace {

Expected<nlohmann::json> ReadConfig(TRITONBACKEND_Model* model) {
  TRITONSERVER_Message* message = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelConfig(model, kTritonModelConfigVersion, &message));
  const char* text = nullptr;
  size_t size = 0;
  Status status = FromTriton(TRITONSERVER_MessageSerializeToJson(message, &text, &size));
  nlohmann::json config;
  if (status.ok()) config = nlohmann::json::parse(text, text + size);
  FromTriton(TRITONSERVER_MessageDelete(message)).ok();
  if (!status.ok()) return status;
  return config;
}

Status WriteConfig(TRITONBACKEND_Model* model, const nlohmann::json& config) {
  const std::string text = config.dump();
  TRITONSERVER_Message* message = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(
      TRITONSERVER_MessageNewFromSerializedJson(&message, text.data(), text.size()));
  Status status =
      FromTriton(TRITONBACKEND_ModelSetConfig(model, kTritonModelConfigVersion, message));
  FromTriton(TRITONSERVER_MessageDelete(message)).ok();
  return status;
}

// The providers for the executable: the `provider` parameter's, else the
// CUDA provider where the executable's inputs live on a GPU (read without
// loading it). A CUDA executable still runs its host ops on the CPU provider.
Expected<std::vector<std::string>> ProvidersFor(const ModelState& state) {
  std::string provider = state.parameters.provider;
  if (provider.empty()) {
    SessionOptions inspect;
    inspect.inspect_only = true;
    auto session = Session::LoadFile(state.executable, inspect);
    if (!session.ok()) return session.status();
    provider = "cpu";
    for (const FunctionInfo& f : (*session)->functions())
      for (int i : f.input_indices)
        if (f.arguments[i].device.kind == DeviceKind::kCuda) provider = "cuda";
  }
  if (provider == "cuda") return std::vector<std::string>{"cuda", "cpu"};
  return std::vector<std::string>{"cpu"};
}

SessionOptions OptionsFor(const ModelState& state, std::vector<std::string> providers) {
  SessionOptions options;
  options.providers = std::move(providers);
  options.intra_op_threads = state.parameters.threads;
  options.allow_spinning = state.parameters.spinning;
  options.linger_microseconds = state.parameters.linger_us;
  const std::string prefix = state.Describe() + ": ";
  options.log = [prefix](LogLevel level, std::string_view message) {
    const TRITONSERVER_LogLevel triton = level == LogLevel::kError     ? TRITONSERVER_LOG_ERROR
                                         : level == LogLevel::kWarning ? TRITONSERVER_LOG_WARN
                                         : level == LogLevel::kInfo    ? TRITONSERVER_LOG_INFO
                                                                       : TRITONSERVER_LOG_VERBOSE;
    Log(triton, prefix + std::string(message));
  };
  return options;
}

// Runs an entry point's body, turning a failed Status or any exception into
// the TRITONSERVER_Error the server expects.
template <typename Body>
TRITONSERVER_Error* Guard(const char* entry_point, Body&& body) {
  try {
    return ToTriton(body());
  } catch (const std::exception& e) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                 (std::string(entry_point) + ": " + e.what()).c_str());
  } catch (...) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                 (std::string(entry_point) + ": unknown exception").c_str());
  }
}

}  // namespace

std::string ModelState::Describe() const {
  return "model '" + name + "' version " + std::to_string(version) + " (" +
         std::filesystem::path(executable).filename().string() + ")";
}

Expected<std::unique_ptr<ModelState>> ModelState::Create(TRITONBACKEND_Model* model) {
  auto state = std::make_unique<ModelState>();
  const char* name = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelName(model, &name));
  state->name = name;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelVersion(model, &state->version));
  TRITONBACKEND_ArtifactType artifact = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  const char* location = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelRepository(model, &artifact, &location));

  auto config = ReadConfig(model);
  if (!config.ok()) return config.status();
  const std::string file = config->value("default_model_filename", "");
  state->executable = (std::filesystem::path(location) / std::to_string(state->version) /
                       (file.empty() ? "model.brtx" : file))
                          .string();
  auto parameters = ReadParameters(*config);
  if (!parameters.ok())
    return Status(parameters.status().code(),
                  "model '" + state->name + "': " + parameters.status().message());
  state->parameters = *parameters;

  auto providers = ProvidersFor(*state);
  auto session = providers.ok()
                     ? Session::LoadFile(state->executable, OptionsFor(*state, *providers))
                     : Expected<std::shared_ptr<Session>>(providers.status());
  if (!session.ok()) {
    // A CUDA executable, or the provider parameter, put the CUDA provider
    // first: its load fails where the server sees no GPU.
    const std::string on_cuda =
        providers.ok() && providers->front() == "cuda"
            ? " on providers cuda, cpu (a CUDA executable needs a GPU the server can see)"
            : "";
    return Status(session.status().code(), state->Describe() + " failed to load" + on_cuda + ": " +
                                               session.status().message());
  }
  state->session = std::move(session).value();
  auto signature = ReadSignature(*state->session, state->parameters.function);
  if (!signature.ok())
    return Status(signature.status().code(),
                  state->Describe() + ": " + signature.status().message());
  state->signature = std::move(signature).value();

  bool auto_complete = false;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete));
  if (auto_complete && AutoComplete(*config, state->signature))
    BRT_RETURN_IF_ERROR(WriteConfig(model, *config));
  const std::string executable_name = std::filesystem::path(state->executable).filename().string();
  Status agreed = CheckConfig(*config, state->signature, executable_name);
  if (!agreed.ok())
    return Status(agreed.code(), "model '" + state->name + "': " + agreed.message());
  state->batching = MaxBatchSize(*config) > 0;
  std::string providers_loaded;
  for (const std::string& p : state->session->provider_names())
    providers_loaded += (providers_loaded.empty() ? "" : ", ") + p;
  Log(TRITONSERVER_LOG_INFO,
      state->Describe() + " loaded: " + std::to_string(state->signature.functions.size()) +
          " function(s), max_batch_size " + std::to_string(MaxBatchSize(*config)) + ", providers " +
          providers_loaded + ", threads " + std::to_string(state->session->intra_op_threads()));
  return state;
}

Expected<std::unique_ptr<InstanceState>> InstanceState::Create(
    TRITONBACKEND_ModelInstance* instance) {
  auto state = std::make_unique<InstanceState>();
  state->instance = instance;
  const char* name = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  state->name = name;
  TRITONBACKEND_Model* model = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  void* model_state = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelState(model, &model_state));
  state->model = static_cast<ModelState*>(model_state);

  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  int32_t device_id = 0;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &device_id));
  // brt placed each op when it compiled: the executable, not the instance
  // group, decides the device (a CPU executable under Triton's default
  // KIND_GPU group on a GPU machine still runs, on the CPU).
  const Device device = state->model->signature.device;
  const bool on_gpu = kind == TRITONSERVER_INSTANCEGROUPKIND_GPU;
  if (on_gpu != (device.kind == DeviceKind::kCuda) || (on_gpu && device.ordinal != device_id))
    Log(TRITONSERVER_LOG_WARN,
        "instance '" + state->name + "' is " +
            (on_gpu ? "KIND_GPU on GPU " + std::to_string(device_id) : "KIND_CPU") + ", but " +
            state->model->Describe() + " was compiled for " + DeviceKindName(device.kind) + ":" +
            std::to_string(device.ordinal) + ", where it runs");
  return state;
}

Expected<RequestContext*> InstanceState::Context(const FunctionChoice& function) {
  auto found = contexts.find(function.name);
  if (found != contexts.end()) return found->second.get();
  auto context = model->session->NewRequest(function.name);
  if (!context.ok()) return context.status();
  (*context)->SetGraphCapture(model->parameters.graph_capture);
  RequestContext* raw = context->get();
  contexts.emplace(function.name, std::move(context).value());
  return raw;
}

Tensor& InstanceState::Staging(const FunctionChoice& function, size_t index, DType dtype,
                               const std::vector<int64_t>& shape) {
  Tensor& buffer = staging[{function.name, index}];
  if (buffer.dtype() != dtype || buffer.shape() != shape) buffer = Tensor::Allocate(dtype, shape);
  return buffer;
}

}  // namespace brt::triton

using brt::Status;
using brt::StatusCode;
using brt::triton::Guard;
using brt::triton::InstanceState;
using brt::triton::ModelState;

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend) {
  return Guard("TRITONBACKEND_Initialize", [&]() -> Status {
    uint32_t major = 0, minor = 0;
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
    if (major != kTritonBackendApiMajor || minor < kTritonBackendApiMinor)
      return Status(
          StatusCode::kUnsupported,
          "the brt backend needs Triton's backend API " + std::to_string(kTritonBackendApiMajor) +
              "." + std::to_string(kTritonBackendApiMinor) + " or a later 1.x; this server has " +
              std::to_string(major) + "." + std::to_string(minor));
    const char* name = nullptr;
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_BackendName(backend, &name));
    brt::triton::Log(TRITONSERVER_LOG_INFO,
                     std::string("backend '") + name + "' (brt) initialized, Triton backend API " +
                         std::to_string(major) + "." + std::to_string(minor));
    return Status::Ok();
  });
}

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model) {
  return Guard("TRITONBACKEND_ModelInitialize", [&]() -> Status {
    auto state = ModelState::Create(model);
    if (!state.ok()) return state.status();
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelSetState(model, state->get()));
    state->release();
    return Status::Ok();
  });
}

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model) {
  return Guard("TRITONBACKEND_ModelFinalize", [&]() -> Status {
    void* state = nullptr;
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelState(model, &state));
    delete static_cast<ModelState*>(state);
    return Status::Ok();
  });
}

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance* instance) {
  return Guard("TRITONBACKEND_ModelInstanceInitialize", [&]() -> Status {
    auto state = InstanceState::Create(instance);
    if (!state.ok()) return state.status();
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceSetState(instance, state->get()));
    state->release();
    return Status::Ok();
  });
}

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance* instance) {
  return Guard("TRITONBACKEND_ModelInstanceFinalize", [&]() -> Status {
    void* state = nullptr;
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
    delete static_cast<InstanceState*>(state);
    return Status::Ok();
  });
}

BRT_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count) {
  // Every request is answered and released inside, errors included; an
  // error returned from here would make the server answer them again.
  void* state = nullptr;
  TRITONSERVER_Error* error = TRITONBACKEND_ModelInstanceState(instance, &state);
  if (error) return error;
  brt::triton::ExecuteRequests(*static_cast<InstanceState*>(state), requests, request_count);
  return nullptr;
}
