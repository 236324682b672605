/* A minimal brt provider in plain C: one op, "example.scaled_add",
 * out = a + alpha * b for f32 tensors of one shape. See
 * docs/writing-a-provider.md for the walk-through. */
#include <brt/provider_abi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t count;
  float alpha;
} ScaledAdd;

static int32_t Prepare(const void* kernel_data, const BrtOpDesc* op, void** state,
                       BrtErrorBuffer* error) {
  (void)kernel_data;
  if (op->num_operands != 2 || op->num_results != 1) {
    snprintf(error->message, sizeof error->message,
             "example.scaled_add takes 2 operands and 1 result");
    return BRT_ERROR_INVALID_ARGUMENT;
  }
  int64_t count = 1;
  for (int i = 0; i < op->results[0].rank; ++i) count *= op->results[0].dims[i];
  for (int k = 0; k < 2; ++k) {
    int64_t n = 1;
    for (int i = 0; i < op->operands[k].rank; ++i) n *= op->operands[k].dims[i];
    if (n != count || op->operands[k].rank != op->results[0].rank) {
      snprintf(error->message, sizeof error->message,
               "example.scaled_add: operand %d has another shape", k);
      return BRT_ERROR_INVALID_ARGUMENT;
    }
  }
  float alpha = 1.0f;
  for (int i = 0; i < op->num_attrs; ++i)
    if (strcmp(op->attrs[i].name, "alpha") == 0 && op->attrs[i].kind == BRT_ATTR_FLOAT)
      alpha = (float)op->attrs[i].f;
  ScaledAdd* s = malloc(sizeof *s);
  if (!s) return BRT_ERROR_RESOURCE_EXHAUSTED;
  s->count = count;
  s->alpha = alpha;
  *state = s;
  return BRT_OK;
}

static void Release(void* state) { free(state); }

static int32_t Run(void* state, void* const* buffers, void* queue, BrtErrorBuffer* error) {
  (void)queue, (void)error;
  const ScaledAdd* s = state;
  const float* a = buffers[0];
  const float* b = buffers[1];
  float* out = buffers[2];
  for (int64_t i = 0; i < s->count; ++i) out[i] = a[i] + s->alpha * b[i];
  return BRT_OK;
}

static int32_t Resolve(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* error) {
  if (strcmp(sig->kind, "example.scaled_add") != 0) {
    snprintf(error->message, sizeof error->message, "unknown op '%s'", sig->kind);
    return BRT_ERROR_UNSUPPORTED;
  }
  if (sig->num_results != 1 || sig->result_dtypes[0] != BRT_DTYPE_F32) {
    snprintf(error->message, sizeof error->message, "example.scaled_add supports f32 only");
    return BRT_ERROR_UNSUPPORTED;
  }
  BrtKernel k = {sizeof(BrtKernel), NULL, Prepare, Release, NULL, NULL, Run};
  *kernel = k;
  return BRT_OK;
}

static int32_t DeviceCount(void) { return 1; }
static int32_t KernelCount(void) { return 1; }
static int32_t KernelInfo(int32_t index, BrtKernelInfo* info) {
  if (index != 0) return BRT_ERROR_INVALID_ARGUMENT;
  info->kind = "example.scaled_add";
  info->device = BRT_DEVICE_CPU;
  info->dtypes = "f32";
  return BRT_OK;
}

__attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(
    uint32_t core_abi_version) {
  static const BrtProviderApi api = {
      sizeof(BrtProviderApi),
      BRT_PROVIDER_ABI_VERSION,
      "example",
      BRT_DEVICE_CPU,
      DeviceCount,
      NULL,
      NULL,
      NULL, /* no device memory of its own: host buffers come from the core */
      NULL,
      NULL,
      NULL, /* no work queues: runs inline */
      Resolve,
      KernelCount,
      KernelInfo,
  };
  return core_abi_version == BRT_PROVIDER_ABI_VERSION ? &api : NULL;
}
