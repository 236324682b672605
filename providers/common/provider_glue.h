// What every provider plugin writes around its kernels, written once: the
// kernel-table row, resolving a signature against the table, listing it,
// the ABI table's header, and host memory for providers whose device memory
// is host memory. Used by the CPU and CUDA providers and the test plugins.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "common/abi_guard.h"
#include "ops/op_info.h"
#include "ops/scalar_ops.h"

namespace brt::ops {

// One row of a provider's kernel table: an op kind, the dtypes its key
// tensor may have, and how to make the kernel (a provider's own factory
// type: MakeFn).
template <typename MakeFn>
struct KernelRow {
  KernelRow(const char* kind, std::vector<int32_t> dtypes, MakeFn make, bool key_is_operand = false,
            bool capturable = true, bool may_be_generated = false)
      : kind(kind),
        dtypes(std::move(dtypes)),
        make(make),
        key_is_operand(key_is_operand),
        capturable(capturable),
        may_be_generated(may_be_generated) {
    for (int32_t d : this->dtypes)
      dtype_names += (dtype_names.empty() ? "" : ",") + std::string(DTypeName(d));
  }
  const char* kind;
  std::vector<int32_t> dtypes;  // of result 0, or of operand 0 when key_is_operand
  MakeFn make;
  bool key_is_operand;      // compare: its operands' dtype decides, not its i1 result
  bool capturable;          // may be recorded into a queue capture
  bool may_be_generated;    // runs the executable's generated code when it names some
  std::string dtype_names;  // "f32,f16", for listings and errors
};

// The kernel lifecycle functions a provider gives every row it resolves.
struct KernelEntryPoints {
  decltype(BrtKernel::prepare) prepare;
  decltype(BrtKernel::release_state) release_state;
  decltype(BrtKernel::create_instance) create_instance;
  decltype(BrtKernel::release_instance) release_instance;
  decltype(BrtKernel::run) run;
};

// resolve_kernel over a table: the first row of the signature's kind whose
// dtypes take its key tensor (kernel_data points at the row). Otherwise
// BRT_ERROR_UNSUPPORTED naming the kind, the device and the dtypes taken.
template <typename Row>
int32_t ResolveFromTable(const std::vector<Row>& rows, const KernelEntryPoints& entry,
                         const char* device, const BrtOpSignature* sig, BrtKernel* kernel,
                         BrtErrorBuffer* error) {
  std::string taken;
  int32_t key = BRT_DTYPE_INVALID;
  for (const Row& row : rows) {
    if (std::strcmp(row.kind, sig->kind) != 0) continue;
    const int32_t count = row.key_is_operand ? sig->num_operands : sig->num_results;
    key = count < 1 ? BRT_DTYPE_INVALID
                    : (row.key_is_operand ? sig->operand_dtypes : sig->result_dtypes)[0];
    if (std::find(row.dtypes.begin(), row.dtypes.end(), key) == row.dtypes.end()) {
      taken += (taken.empty() ? "" : ",") + row.dtype_names;
      continue;
    }
    *kernel = BrtKernel{sizeof(BrtKernel),
                        &row,
                        entry.prepare,
                        entry.release_state,
                        entry.create_instance,
                        entry.release_instance,
                        entry.run,
                        row.capturable ? 0u : BRT_KERNEL_NOT_CAPTURABLE};
    return BRT_OK;
  }
  if (taken.empty())
    return ReportAbiError(error, BRT_ERROR_UNSUPPORTED,
                          std::string("no ") + device + " kernel for '" + sig->kind + "'");
  return ReportAbiError(error, BRT_ERROR_UNSUPPORTED,
                        std::string("'") + sig->kind + "' on " + device + " takes " + taken +
                            ", not " + DTypeName(key));
}

// prepare() of a collectives provider's row: the op must come with the
// communicator the core made for its replica groups. The row's make() gives a
// kernel with Attach(const BrtOpDesc&) (taking desc.comm) and
// Prepare(const OpInfo&, const BrtOpDesc&).
template <typename Row>
int32_t PrepareCollective(const void* kernel_data, const BrtOpDesc* desc, void** state,
                          BrtErrorBuffer* error) {
  const Row& row = *static_cast<const Row*>(kernel_data);
  return AbiGuard(
      error,
      [&] {
        OpInfo op(*desc);
        op.Require(BRT_STRUCT_HAS(BrtOpDesc, desc, world_size) && desc->comm,
                   "no communicator: the core did not set one up for this collective");
        auto kernel = row.make();
        kernel->Attach(*desc);
        kernel->Prepare(op, *desc);
        *state = kernel.release();
      },
      BRT_ERROR_INVALID_ARGUMENT);
}

// kernel_info over a table.
template <typename Row>
int32_t KernelInfoFromTable(const std::vector<Row>& rows, int32_t device_kind, int32_t index,
                            BrtKernelInfo* info) {
  if (index < 0 || index >= static_cast<int32_t>(rows.size())) return BRT_ERROR_INVALID_ARGUMENT;
  *info = BrtKernelInfo{rows[index].kind, device_kind, rows[index].dtype_names.c_str()};
  return BRT_OK;
}

// A provider's kernel table with what its ABI entry points need.
template <typename Row>
struct KernelTable {
  const std::vector<Row>& (*rows)();
  KernelEntryPoints entry;
  int32_t device_kind;      // BRT_DEVICE_*
  const char* device_name;  // in errors: "cpu", "CUDA"
};

// Sets resolve_kernel, kernel_count and kernel_info of `api` over `table`
// (an object with static storage: the entry points are plain functions).
template <const auto& table>
void SetKernelTable(BrtProviderApi& api) {
  api.resolve_kernel = [](const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* error) {
    return ResolveFromTable(table.rows(), table.entry, table.device_name, sig, kernel, error);
  };
  api.kernel_count = [] { return static_cast<int32_t>(table.rows().size()); };
  api.kernel_info = [](int32_t index, BrtKernelInfo* info) {
    return KernelInfoFromTable(table.rows(), table.device_kind, index, info);
  };
}

// The real dtypes an elementwise op of the registry takes, from its domain
// (the same as InDomain's, so a listed dtype always has a loop); a provider
// with complex loops adds c64 and c128 where TakesComplex(domain).
inline std::vector<int32_t> ElementwiseDTypes(Domain complex_domain) {
  const Domain domain = RealDomain(complex_domain);
  const std::vector<int32_t> floats = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64};
  std::vector<int32_t> out = TakesFloats(domain) ? floats : std::vector<int32_t>{};
  if (domain == Domain::kAll || domain == Domain::kIntegral) out.push_back(BRT_DTYPE_I1);
  if (domain != Domain::kFloat)
    out.insert(out.end(), {BRT_DTYPE_I8, BRT_DTYPE_I16, BRT_DTYPE_I32, BRT_DTYPE_I64});
  if (domain != Domain::kFloat && domain != Domain::kSigned)
    out.insert(out.end(), {BRT_DTYPE_U8, BRT_DTYPE_U16, BRT_DTYPE_U32, BRT_DTYPE_U64});
  return out;
}

// ElementwiseDTypes, with c64 and c128 where the domain takes them: for a
// provider whose elementwise loops have complex forms.
inline std::vector<int32_t> ElementwiseDTypesWithComplex(Domain domain) {
  std::vector<int32_t> out = ElementwiseDTypes(domain);
  if (TakesComplex(domain)) out.insert(out.end(), {BRT_DTYPE_C64, BRT_DTYPE_C128});
  return out;
}

// The ABI table with its header filled in; the provider sets its entries.
inline BrtProviderApi ProviderApiHeader(const char* name, int32_t device_kind) {
  BrtProviderApi api{};
  api.struct_size = sizeof(BrtProviderApi);
  api.abi_version = BRT_PROVIDER_ABI_VERSION;
  api.name = name;
  api.device_kind = device_kind;
  return api;
}

// brt_provider_get's body: the table MakeApi builds, made once, for a core
// that speaks this ABI version (nullptr otherwise, which the core reports).
template <BrtProviderApi (*MakeApi)()>
const BrtProviderApi* ServeProviderApi(uint32_t core_abi_version) {
  if (core_abi_version != BRT_PROVIDER_ABI_VERSION) return nullptr;
  static const BrtProviderApi api = MakeApi();
  return &api;
}

// Defines the plugin's exported brt_provider_get, serving make_api's table.
#define BRT_DEFINE_PROVIDER_ENTRY_POINT(make_api)                                           \
  extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get( \
      uint32_t core_abi_version) {                                                          \
    return ::brt::ops::ServeProviderApi<&make_api>(core_abi_version);                       \
  }

// Groups of ABI entries as (field, function name): a provider whose functions
// carry these names sets a group with BRT_SET_ENTRIES(api, BRT_QUEUE_ENTRIES).
#define BRT_MEMORY_ENTRIES(X) \
  X(device_count, DeviceCount) X(allocate, Allocate) X(deallocate, Deallocate) X(copy, Copy)
#define BRT_KERNEL_TABLE_ENTRIES(X) \
  X(resolve_kernel, ResolveKernel) X(kernel_count, KernelCount) X(kernel_info, KernelInfo)
#define BRT_QUEUE_ENTRIES(X) \
  X(create_queue, CreateQueue) X(destroy_queue, DestroyQueue) X(synchronize_queue, SynchronizeQueue)
#define BRT_GRAPH_ENTRIES(X)     \
  X(begin_capture, BeginCapture) \
  X(end_capture, EndCapture) X(launch_graph, LaunchGraph) X(destroy_graph, DestroyGraph)
#define BRT_EVENT_ENTRIES(X)   \
  X(create_event, CreateEvent) \
  X(destroy_event, DestroyEvent) X(record_event, RecordEvent) X(wait_event, WaitEvent)
#define BRT_PINNED_HOST_ENTRIES(X) X(allocate_host, AllocateHost) X(free_host, FreeHost)
#define BRT_SET_ENTRY_(field, function) brt_api_.field = function;
#define BRT_SET_ENTRIES(api, GROUP) \
  do {                              \
    BrtProviderApi& brt_api_ = api; \
    GROUP(BRT_SET_ENTRY_)           \
  } while (0)

// allocate/deallocate/copy for device memory that is host memory.
inline void* HostAllocate(int32_t, size_t bytes, size_t alignment) {
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}
inline void HostDeallocate(int32_t, void* ptr) { std::free(ptr); }
inline int32_t HostCopy(int32_t, void* dst, const void* src, size_t bytes, int32_t, void*,
                        BrtErrorBuffer*) {
  if (bytes) std::memcpy(dst, src, bytes);
  return BRT_OK;
}

}  // namespace brt::ops
