// TRITONBACKEND_ModelInstanceExecute's work: requests are checked, stacked
// along the batch dimension into runs of one brt function each, and the
// outputs split back into each request's response.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

#include "backend_state.h"

namespace brt::triton {
namespace {

uint64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ShapeText(const int64_t* shape, uint32_t rank) {
  return FormatShape(std::vector<int64_t>(shape, shape + rank));
}

struct Pending {
  TRITONBACKEND_Request* request = nullptr;
  TRITONBACKEND_Response* response = nullptr;
  Status status;                             // the first error met; the response carries it
  std::vector<TRITONBACKEND_Input*> inputs;  // per signature input
  std::vector<uint32_t> buffer_counts;
  // Per signature input: its shape without the batch dimension when
  // batching (what requests must share to be stacked), else whole.
  std::vector<std::vector<int64_t>> shapes;
  int64_t rows = 1;             // along the batch dimension
  std::vector<size_t> outputs;  // the signature outputs it asked for
  uint64_t compute_start = 0, compute_end = 0;
};

Status ReadRequest(const ModelState& model, Pending& p) {
  const ModelSignature& sig = model.signature;
  uint32_t count = 0;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_RequestInputCount(p.request, &count));
  if (count != sig.inputs.size())
    return Status(StatusCode::kInvalidArgument,
                  model.Describe() + " takes " + std::to_string(sig.inputs.size()) +
                      " inputs, the request has " + std::to_string(count));
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSignature& want = sig.inputs[i];
    TRITONBACKEND_Input* input = nullptr;
    if (Status s = FromTriton(TRITONBACKEND_RequestInput(p.request, want.name.c_str(), &input));
        !s.ok())
      return Status(StatusCode::kInvalidArgument,
                    "the request has no input '" + want.name + "': " + s.message());
    const char* name = nullptr;
    TRITONSERVER_DataType type = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = nullptr;
    uint32_t rank = 0, buffers = 0;
    uint64_t bytes = 0;
    BRT_RETURN_IF_TRITON_ERROR(
        TRITONBACKEND_InputProperties(input, &name, &type, &shape, &rank, &bytes, &buffers));
    const std::string what = "input '" + want.name + "'";
    if (type != WireType(want.dtype))
      return Status(StatusCode::kInvalidArgument, what + " is " + WireTypeName(type) + ", " +
                                                      model.Describe() + " expects " +
                                                      WireTypeName(WireType(want.dtype)));
    if (rank != want.dims.size())
      return Status(StatusCode::kInvalidArgument, what + " has shape " + ShapeText(shape, rank) +
                                                      ", " + model.Describe() + " expects " +
                                                      std::to_string(want.dims.size()) +
                                                      " dims like " + DescribeInputShapes(sig, i));
    std::vector<int64_t> whole(shape, shape + rank);
    const std::optional<int64_t> elements = NumElements(whole);
    if (!elements || static_cast<uint64_t>(*elements) * DTypeSize(want.dtype) != bytes)
      return Status(
          StatusCode::kInvalidArgument,
          what + " carries " + std::to_string(bytes) + " bytes, but shape " + FormatShape(whole) +
              " of " + WireTypeName(type) + " needs " +
              std::to_string(elements.value_or(-1) * static_cast<int64_t>(DTypeSize(want.dtype))));
    if (model.batching) {
      if (i == 0) p.rows = whole[0];
      if (whole[0] != p.rows)
        return Status(StatusCode::kInvalidArgument,
                      what + " has " + std::to_string(whole[0]) + " rows (batch dimension), '" +
                          sig.inputs[0].name + "' has " + std::to_string(p.rows));
      whole.erase(whole.begin());
    }
    p.inputs.push_back(input);
    p.buffer_counts.push_back(buffers);
    p.shapes.push_back(std::move(whole));
  }
  if (model.batching && p.rows < 1)
    return Status(StatusCode::kInvalidArgument, "the request has no rows (batch dimension 0)");
  uint32_t outputs = 0;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_RequestOutputCount(p.request, &outputs));
  for (uint32_t o = 0; o < outputs; ++o) {
    const char* name = nullptr;
    BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_RequestOutputName(p.request, o, &name));
    for (size_t j = 0; j < sig.outputs.size(); ++j)
      if (sig.outputs[j].name == name) p.outputs.push_back(j);
  }
  return Status::Ok();
}

bool HostMemory(TRITONSERVER_MemoryType type) { return type != TRITONSERVER_MEMORY_GPU; }

// Input `index` of a run: the request's own buffer when one request fills
// the run from a single host buffer (no copy), else the requests' rows
// stacked into the instance's staging buffer, padded with copies of the
// last row (valid input, whatever the model; padded rows are dropped).
Expected<Tensor> GatherInput(InstanceState& state, const FunctionChoice& function, size_t index,
                             const std::vector<Pending*>& run, const std::vector<int64_t>& shape) {
  const TensorSignature& sig = state.model->signature.inputs[index];
  const size_t element = DTypeSize(sig.dtype);
  const size_t total = static_cast<size_t>(NumElements(shape).value_or(0)) * element;
  if (run.size() == 1 && run[0]->buffer_counts[index] == 1) {
    const void* buffer = nullptr;
    uint64_t size = 0;
    TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
    int64_t memory_id = 0;
    BRT_RETURN_IF_TRITON_ERROR(
        TRITONBACKEND_InputBuffer(run[0]->inputs[index], 0, &buffer, &size, &memory, &memory_id));
    if (size == total && reinterpret_cast<uintptr_t>(buffer) % element == 0) {
      const Device device =
          HostMemory(memory) ? Device{} : Device{DeviceKind::kCuda, static_cast<int>(memory_id)};
      return Tensor::Borrow(const_cast<void*>(buffer), sig.dtype, shape, device);
    }
  }
  Tensor& staging = state.Staging(function, index, sig.dtype, shape);
  auto* out = static_cast<uint8_t*>(staging.data());
  size_t filled = 0;
  for (Pending* p : run)
    for (uint32_t b = 0; b < p->buffer_counts[index]; ++b) {
      const void* buffer = nullptr;
      uint64_t size = 0;
      TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
      int64_t memory_id = 0;
      BRT_RETURN_IF_TRITON_ERROR(
          TRITONBACKEND_InputBuffer(p->inputs[index], b, &buffer, &size, &memory, &memory_id));
      if (!HostMemory(memory))
        return Status(StatusCode::kUnsupported,
                      "input '" + sig.name + "' is in GPU memory and is batched with other " +
                          "requests; the brt backend stacks batches in host memory");
      if (filled + size > total)
        return Status(StatusCode::kInvalidArgument,
                      "input '" + sig.name + "' carries more bytes than its shape holds");
      std::memcpy(out + filled, buffer, size);
      filled += size;
    }
  const size_t row = shape.empty() || shape[0] == 0 ? total : total / shape[0];
  for (; row > 0 && filled >= row && filled + row <= total; filled += row)
    std::memcpy(out + filled, out + filled - row, row);
  return staging;
}

// The host buffer of output `sig` in the request's response.
Expected<void*> ResponseBuffer(Pending& p, const TensorSignature& sig,
                               const std::vector<int64_t>& shape, size_t bytes) {
  TRITONBACKEND_Output* output = nullptr;
  BRT_RETURN_IF_TRITON_ERROR(TRITONBACKEND_ResponseOutput(
      p.response, &output, sig.name.c_str(), WireType(sig.dtype), shape.data(), shape.size()));
  void* buffer = nullptr;
  TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
  int64_t memory_id = 0;
  BRT_RETURN_IF_TRITON_ERROR(
      TRITONBACKEND_OutputBuffer(output, &buffer, bytes, &memory, &memory_id));
  if (!HostMemory(memory))
    return Status(StatusCode::kUnsupported, "output '" + sig.name +
                                                "' was given GPU memory; the brt backend writes " +
                                                "outputs from host memory");
  return buffer;
}

// Copies rows [first, first + p.rows) of `result` (all of it without
// batching) into the request's response.
Status Respond(Pending& p, const TensorSignature& sig, const Tensor& result, bool batching,
               int64_t first) {
  std::vector<int64_t> shape = result.shape();
  size_t bytes = result.num_bytes();
  size_t offset = 0;
  if (batching) {
    const size_t row = shape[0] ? bytes / shape[0] : 0;
    shape[0] = p.rows;
    offset = row * first;
    bytes = row * p.rows;
  }
  auto buffer = ResponseBuffer(p, sig, shape, bytes);
  if (!buffer.ok()) return buffer.status();
  std::memcpy(*buffer, static_cast<const uint8_t*>(result.data()) + offset, bytes);
  return Status::Ok();
}

// When one request fills the run and an output's shape is known before it
// runs (its dims are fixed, or its leading dim is a symbolic batch, which
// the request's rows fix), its response buffer is made first and, where
// aligned for brt, bound so that brt writes the output straight into it. Per
// signature output: that buffer (nullptr: made after the run) and whether it
// is bound.
struct EarlyOutput {
  void* buffer = nullptr;
  bool bound = false;
};

Expected<std::vector<EarlyOutput>> BindResponseOutputs(const ModelState& model,
                                                       const FunctionChoice& function, Pending& p,
                                                       RequestContext& ctx) {
  const ModelSignature& sig = model.signature;
  std::vector<EarlyOutput> early(sig.outputs.size());
  for (size_t j : p.outputs) {
    // With batching every argument leads with the function's batch, so a
    // symbolic leading dim is the request's rows.
    std::vector<int64_t> shape;
    for (const Dim& d : function.outputs[j])
      shape.push_back(d.is_static() ? d.size : model.batching && shape.empty() ? p.rows : -1);
    if (std::find(shape.begin(), shape.end(), -1) != shape.end()) continue;
    const size_t element = DTypeSize(sig.outputs[j].dtype);
    auto buffer =
        ResponseBuffer(p, sig.outputs[j], shape, NumElements(shape).value_or(0) * element);
    if (!buffer.ok()) return buffer.status();
    early[j].buffer = *buffer;
    if (reinterpret_cast<uintptr_t>(*buffer) % element != 0) continue;
    BRT_RETURN_IF_ERROR(
        ctx.Bind(sig.outputs[j].name, Tensor::Borrow(*buffer, sig.outputs[j].dtype, shape)));
    early[j].bound = true;
  }
  return early;
}

// One brt run for requests of equal shapes whose rows fit one function.
Status RunStacked(InstanceState& state, const std::vector<Pending*>& run) {
  const ModelState& model = *state.model;
  const ModelSignature& sig = model.signature;
  int64_t rows = 0;
  for (Pending* p : run) rows += p->rows;
  const FunctionChoice* function = PickFunction(sig, model.batching, rows, run[0]->shapes);
  if (!function) {
    std::string got;
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      std::vector<int64_t> shape = run[0]->shapes[i];
      if (model.batching) shape.insert(shape.begin(), rows);
      got += (i ? ", " : "") + sig.inputs[i].name + " " + FormatShape(shape);
    }
    return Status(StatusCode::kInvalidArgument,
                  "no function of " + model.Describe() + " takes inputs " + got + "; input '" +
                      sig.inputs[0].name + "' may be " + DescribeInputShapes(sig, 0));
  }
  auto context = state.Context(*function);
  if (!context.ok()) return context.status();
  RequestContext& ctx = **context;
  const int64_t run_rows = function->batch >= 0 ? function->batch : rows;
  // The last run's bindings (buffers of requests since released) go first:
  // brt checks a symbolic dim against every bound argument as each is bound.
  for (const auto* tensors : {&sig.inputs, &sig.outputs})
    for (const TensorSignature& t : *tensors) BRT_RETURN_IF_ERROR(ctx.Unbind(t.name));
  size_t inputs_in_place = 0;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    std::vector<int64_t> shape = run[0]->shapes[i];
    if (model.batching) shape.insert(shape.begin(), run_rows);
    auto tensor = GatherInput(state, *function, i, run, shape);
    if (!tensor.ok()) return tensor.status();
    BRT_RETURN_IF_ERROR(ctx.Bind(sig.inputs[i].name, *tensor));
    if (!tensor->owner()) ++inputs_in_place;  // a request's buffer, not the staging one
  }
  std::vector<EarlyOutput> early(sig.outputs.size());
  const bool padded = model.batching && run_rows != rows;
  if (run.size() == 1 && !padded && sig.device.kind == DeviceKind::kCpu) {
    auto made = BindResponseOutputs(model, *function, *run[0], ctx);
    if (!made.ok()) return made.status();
    early = std::move(made).value();
  }
  if (TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE)) {
    const size_t outputs_in_place =
        std::count_if(early.begin(), early.end(), [](const EarlyOutput& o) { return o.bound; });
    Log(TRITONSERVER_LOG_VERBOSE,
        model.Describe() + " runs '" + function->name + "' for " + std::to_string(run.size()) +
            " request(s)" + (model.batching ? ", " + std::to_string(rows) + " row(s)" : "") +
            "; in place: " + std::to_string(inputs_in_place) + " of " +
            std::to_string(sig.inputs.size()) + " inputs, " + std::to_string(outputs_in_place) +
            " of " + std::to_string(sig.outputs.size()) + " outputs");
  }
  const uint64_t start = NowNs();
  Status ran = ctx.Run();
  const uint64_t end = NowNs();
  for (Pending* p : run) p->compute_start = start, p->compute_end = end;
  if (!ran.ok())
    return Status(ran.code(),
                  model.Describe() + " function '" + function->name + "' failed: " + ran.message());
  int64_t first = 0;
  for (Pending* p : run) {
    for (size_t j : p->outputs) {
      if (early[j].bound) continue;
      auto result = sig.device.kind == DeviceKind::kCpu ? ctx.Output(sig.outputs[j].name)
                                                        : ctx.OutputOnHost(sig.outputs[j].name);
      if (!result.ok()) {
        p->status = result.status();
        break;
      }
      if (early[j].buffer) {
        std::memcpy(early[j].buffer, result->data(), result->num_bytes());
        continue;
      }
      p->status = Respond(*p, sig.outputs[j], *result, model.batching, first);
      if (!p->status.ok()) break;
    }
    first += p->rows;
  }
  return Status::Ok();
}

template <typename Body>
Status Catching(Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, e.what());
  }
}

}  // namespace

void ExecuteRequests(InstanceState& state, TRITONBACKEND_Request** requests, uint32_t count) {
  const uint64_t exec_start = NowNs();
  std::vector<Pending> pending(count);
  for (uint32_t r = 0; r < count; ++r) {
    Pending& p = pending[r];
    p.request = requests[r];
    p.status = FromTriton(TRITONBACKEND_ResponseNew(&p.response, p.request));
    if (p.status.ok()) p.status = Catching([&] { return ReadRequest(*state.model, p); });
  }
  // Consecutive requests of equal shapes share a run while their rows fit
  // one function; without batching each request runs alone.
  std::vector<std::vector<Pending*>> runs;
  const ModelSignature& sig = state.model->signature;
  int64_t run_rows = 0, most = 0;
  for (Pending& p : pending) {
    if (!p.status.ok()) continue;
    if (!state.model->batching || runs.empty() || runs.back()[0]->shapes != p.shapes ||
        run_rows + p.rows > most) {
      runs.push_back({});
      run_rows = 0;
      most = state.model->batching ? MostRows(sig, p.shapes) : 1;
    }
    runs.back().push_back(&p);
    run_rows += p.rows;
  }
  for (const std::vector<Pending*>& run : runs) {
    Status status = Catching([&] { return RunStacked(state, run); });
    int64_t rows = 0;
    for (Pending* p : run) {
      if (!status.ok()) p->status = status;
      rows += p->rows;
    }
    if (run[0]->compute_start) {
      FromTriton(TRITONBACKEND_ModelInstanceReportBatchStatistics(state.instance, rows, exec_start,
                                                                  run[0]->compute_start,
                                                                  run[0]->compute_end, NowNs()))
          .ok();
    }
  }
  const uint64_t exec_end = NowNs();
  for (Pending& p : pending) {
    if (p.response) {
      TRITONSERVER_Error* error = ToTriton(p.status);
      Status sent =
          FromTriton(TRITONBACKEND_ResponseSend(p.response, kTritonResponseCompleteFinal, error));
      if (error) TRITONSERVER_ErrorDelete(error);
      if (!sent.ok()) Log(TRITONSERVER_LOG_ERROR, "sending a response failed: " + sent.message());
    }
    const uint64_t compute_start = p.compute_start ? p.compute_start : exec_start;
    const uint64_t compute_end = p.compute_end ? p.compute_end : compute_start;
    FromTriton(TRITONBACKEND_ModelInstanceReportStatistics(state.instance, p.request, p.status.ok(),
                                                           exec_start, compute_start, compute_end,
                                                           exec_end))
        .ok();
    FromTriton(TRITONBACKEND_RequestRelease(p.request, kTritonRequestReleaseAll)).ok();
  }
}

}  // namespace brt::triton
