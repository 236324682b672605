// The brt backend's per-model and per-instance state, and the glue between
// brt's Status and Triton's errors and log.
#pragma once

#include <brt/session.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <source_location>
#include <string>
#include <utility>

#include "model_config.h"
#include "model_signature.h"
#include "triton_api.h"

namespace brt::triton {

// A Triton call's error as a Status (the error is consumed).
Status FromTriton(TRITONSERVER_Error* error);
// A Status as a new Triton error (nullptr for OK).
TRITONSERVER_Error* ToTriton(const Status& status);
// To Triton's log, under the caller's file and line.
void Log(TRITONSERVER_LogLevel level, const std::string& message,
         std::source_location where = std::source_location::current());

#define BRT_RETURN_IF_TRITON_ERROR(call) BRT_RETURN_IF_ERROR(::brt::triton::FromTriton(call))

// One model version: its executable loaded once, shared by every instance
// (a Session is immutable and thread-safe; each instance runs its own
// RequestContexts).
struct ModelState {
  std::string name;
  uint64_t version = 0;
  std::string executable;  // <repository>/<model>/<version>/model.brtx
  BackendParameters parameters;
  ModelSignature signature;
  // Requests stack along dimension 0 (max_batch_size > 0).
  bool batching = false;
  std::shared_ptr<Session> session;

  static Expected<std::unique_ptr<ModelState>> Create(TRITONBACKEND_Model* model);
  // "model 'name' (model.brtx)", for messages.
  std::string Describe() const;
};

// One model instance: a RequestContext per function it has run, and the
// host buffers that gathered inputs are stacked into.
struct InstanceState {
  ModelState* model = nullptr;
  TRITONBACKEND_ModelInstance* instance = nullptr;
  std::string name;
  std::map<std::string, std::unique_ptr<RequestContext>> contexts;
  std::map<std::pair<std::string, size_t>, Tensor> staging;

  static Expected<std::unique_ptr<InstanceState>> Create(TRITONBACKEND_ModelInstance* instance);
  Expected<RequestContext*> Context(const FunctionChoice& function);
  // A host buffer for input `index` of `function` with this shape, reused
  // across runs of the instance (runs of one instance never overlap).
  Tensor& Staging(const FunctionChoice& function, size_t index, DType dtype,
                  const std::vector<int64_t>& shape);
};

// Runs a batch of requests (TRITONBACKEND_ModelInstanceExecute): responds to
// and releases every one of them.
void ExecuteRequests(InstanceState& state, TRITONBACKEND_Request** requests, uint32_t count);

}  // namespace brt::triton
