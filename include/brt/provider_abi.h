/* The provider plugin C ABI. A provider is a shared library that exports
 *
 *   const BrtProviderApi* brt_provider_get(uint32_t core_abi_version);
 *
 * The core passes the ABI version it speaks; the provider returns its table
 * (whose abi_version the core checks) or NULL if it cannot serve that version.
 * Every struct starts with struct_size so either side can tell which fields the
 * other knows. Only C types cross this boundary; no exceptions may escape.
 * Walk-through: docs/writing-a-provider.md. */
#ifndef BRT_PROVIDER_ABI_H_
#define BRT_PROVIDER_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BRT_PROVIDER_ABI_VERSION 1u
#define BRT_PROVIDER_ENTRY_SYMBOL "brt_provider_get"

/* Element types; the values are those of schema/brt.fbs. */
enum {
  BRT_DTYPE_INVALID = 0,
  BRT_DTYPE_F32 = 1,
  BRT_DTYPE_F16 = 2,
  BRT_DTYPE_BF16 = 3,
  BRT_DTYPE_F64 = 4,
  BRT_DTYPE_I1 = 5, /* one byte per element, 0 or 1 */
  BRT_DTYPE_I8 = 6,
  BRT_DTYPE_I32 = 7,
  BRT_DTYPE_I64 = 8,
  BRT_DTYPE_U8 = 9,
  BRT_DTYPE_U32 = 10,
  BRT_DTYPE_U64 = 11,
  BRT_DTYPE_I16 = 12,
  BRT_DTYPE_U16 = 13,
  BRT_DTYPE_C64 = 14,  /* complex: two f32, real part first */
  BRT_DTYPE_C128 = 15, /* complex: two f64, real part first */
};

/* Bytes per element of a BRT_DTYPE_* code; 0 for an unknown code. */
static inline size_t brt_dtype_size(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_C128:
      return 16;
    case BRT_DTYPE_C64:
    case BRT_DTYPE_F64:
    case BRT_DTYPE_I64:
    case BRT_DTYPE_U64:
      return 8;
    case BRT_DTYPE_F32:
    case BRT_DTYPE_I32:
    case BRT_DTYPE_U32:
      return 4;
    case BRT_DTYPE_F16:
    case BRT_DTYPE_BF16:
    case BRT_DTYPE_I16:
    case BRT_DTYPE_U16:
      return 2;
    case BRT_DTYPE_I1:
    case BRT_DTYPE_I8:
    case BRT_DTYPE_U8:
      return 1;
  }
  return 0;
}

/* The name of a BRT_DTYPE_* code ("f32", "bf16", ...); "invalid" for an
 * unknown code. */
static inline const char* brt_dtype_name(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return "f32";
    case BRT_DTYPE_F16:
      return "f16";
    case BRT_DTYPE_BF16:
      return "bf16";
    case BRT_DTYPE_F64:
      return "f64";
    case BRT_DTYPE_I1:
      return "i1";
    case BRT_DTYPE_I8:
      return "i8";
    case BRT_DTYPE_I32:
      return "i32";
    case BRT_DTYPE_I64:
      return "i64";
    case BRT_DTYPE_U8:
      return "u8";
    case BRT_DTYPE_U32:
      return "u32";
    case BRT_DTYPE_U64:
      return "u64";
    case BRT_DTYPE_I16:
      return "i16";
    case BRT_DTYPE_U16:
      return "u16";
    case BRT_DTYPE_C64:
      return "c64";
    case BRT_DTYPE_C128:
      return "c128";
  }
  return "invalid";
}

enum { BRT_DEVICE_CPU = 0, BRT_DEVICE_CUDA = 1 };

/* A device kind as a bit of a set of kinds (BrtProviderApi::collective_devices). */
#define BRT_DEVICE_BIT(device_kind) (1u << (device_kind))

enum {
  BRT_ATTR_INT = 0,
  BRT_ATTR_FLOAT = 1,
  BRT_ATTR_INTS = 2,
  BRT_ATTR_FLOATS = 3,
  BRT_ATTR_STRING = 4,
  BRT_ATTR_BYTES = 5,
};

/* Status codes returned across the ABI; 0 is success. */
enum {
  BRT_OK = 0,
  BRT_ERROR_INVALID_ARGUMENT = 1,
  BRT_ERROR_UNSUPPORTED = 2,
  BRT_ERROR_RESOURCE_EXHAUSTED = 3,
  BRT_ERROR_INTERNAL = 4,
};

/* Where a plugin writes a human-readable message when it returns an error. */
typedef struct BrtErrorBuffer {
  char message[512];
} BrtErrorBuffer;

typedef struct BrtTensorDesc {
  int32_t dtype;
  int32_t rank;
  const int64_t* dims; /* rank entries, all static */
} BrtTensorDesc;

typedef struct BrtAttr {
  const char* name;
  int32_t kind; /* BRT_ATTR_* */
  int64_t i;
  double f;
  const int64_t* ints;
  int64_t num_ints;
  const double* floats;
  int64_t num_floats;
  const char* str; /* NUL-terminated */
  const uint8_t* bytes;
  int64_t num_bytes;
} BrtAttr;

/* What a kernel is asked to do: known at load time, before shapes are. */
typedef struct BrtOpSignature {
  uint32_t struct_size;
  const char* kind;
  int32_t device; /* BRT_DEVICE_* */
  int32_t num_operands;
  const int32_t* operand_dtypes;
  int32_t num_results;
  const int32_t* result_dtypes;
} BrtOpSignature;

/* The full op with static shapes and attributes, given to prepare(). */
typedef struct BrtOpDesc {
  uint32_t struct_size;
  const char* kind;
  int32_t device;
  int32_t num_operands;
  const BrtTensorDesc* operands;
  int32_t num_results;
  const BrtTensorDesc* results;
  int32_t num_attrs;
  const BrtAttr* attrs;
  /* The fields below are present when struct_size covers them. */
  /* Per operand: its bytes when they are constant for the Session's lifetime
   * (a weight in the executable, in host memory), else NULL. Lets prepare()
   * pre-pack weights. May itself be NULL. */
  const void* const* operand_constants;
  /* The generated code the op names with its "kernel" attribute (e.g. PTX
   * text for target "ptx:sm_80"), from the executable's kernel table; NULL
   * when it names none. Valid for the Session's lifetime. */
  const char* kernel_name;
  const char* kernel_target;
  const uint8_t* kernel_image;
  uint64_t kernel_image_size;
  /* For a collective op (a kind with the registry's kCollective flag): the
   * communicator of its replica group, made by this provider's comm_create
   * or comm_split; this rank's position in the group and the group's size.
   * NULL / 0 / 1 for other ops. */
  void* comm;
  int32_t comm_rank;
  int32_t comm_size;
  /* This rank in the world communicator (partition_id, source_target_pairs). */
  int32_t world_rank;
  int32_t world_size;
} BrtOpDesc;

/* The functions of one kernel.
 * prepare: once per Session (per shape specialization): validate shapes and
 *   attributes, build whatever run() needs; returns BRT_OK and *state.
 * create_instance (optional, may be NULL): once per request context, for
 *   per-request scratch; run() then receives the instance instead of state.
 *   It may also succeed with *instance = NULL: run() then gets the state.
 * run: the hot path. buffers holds operand pointers, then result pointers.
 *   queue is the work queue handle of the request (NULL on the CPU). It must
 *   not allocate, look anything up by name, or touch shared mutable state. */
typedef struct BrtKernel {
  uint32_t struct_size;
  /* Opaque to the core; handed back to prepare (e.g. the provider's entry
   * for the resolved kernel). */
  const void* kernel_data;
  int32_t (*prepare)(const void* kernel_data, const BrtOpDesc* op, void** state,
                     BrtErrorBuffer* error);
  void (*release_state)(void* state);
  int32_t (*create_instance)(void* state, void** instance, BrtErrorBuffer* error);
  void (*release_instance)(void* instance);
  int32_t (*run)(void* state_or_instance, void* const* buffers, void* queue, BrtErrorBuffer* error);
  /* Present when struct_size covers it: BRT_KERNEL_* flags. */
  uint32_t flags;
} BrtKernel;

/* The kernel cannot be recorded into a queue capture (e.g. it waits on the
 * host); a context then runs its function op by op. */
#define BRT_KERNEL_NOT_CAPTURABLE 1u

#define BRT_STRUCT_HAS(type, ptr, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof((ptr)->field))

/* One row of a provider's kernel table, for listings and documentation. */
typedef struct BrtKernelInfo {
  const char* kind;
  int32_t device;
  const char* dtypes; /* comma-separated dtype names, e.g. "f32,f16" */
} BrtKernelInfo;

/* What comm_create needs: who this process is among the ranks, and what the
 * ranks must agree on before they exchange data. */
typedef struct BrtCommConfig {
  uint32_t struct_size;
  int32_t rank;
  int32_t world_size;
  int32_t local_rank; /* the device ordinal on a multi-GPU node */
  /* Hash of the executable's metadata and the function names: every rank
   * must load the same program. A mismatch fails comm_create on every rank
   * with both hashes in the message. */
  uint64_t program_hash;
  /* "host:port" of rank 0's rendezvous (MASTER_ADDR:MASTER_PORT) for
   * providers that bootstrap over TCP; NULL when the launcher (mpirun) has
   * wired the ranks. */
  const char* rendezvous;
  /* A collective that waits longer than this for a peer fails, naming the
   * ranks it waits for. */
  double timeout_seconds;
  /* A blob rank 0's provider made with comm_bootstrap_blob, already shared
   * with every rank by the core (through another collectives provider, e.g.
   * mpi under mpirun); NULL when there is none. NCCL's unique id. */
  const void* bootstrap;
  size_t bootstrap_size;
} BrtCommConfig;

/* A Session's intra-op threads (SessionOptions). */
typedef struct BrtHostPoolConfig {
  uint32_t struct_size;
  /* Threads that run one request's ops, the calling thread included; 0: one
   * per CPU the process may run on. */
  int32_t threads;
  /* 1: workers wait for the next op's work for a short while before they
   * sleep (lower latency between ops); 0: they sleep as soon as the work
   * in hand is done. */
  int32_t spin;
  /* Present when struct_size covers it: microseconds that up to threads - 1
   * workers wait spinning, without yielding their CPU, for the next
   * request's ops after a request ends (SessionOptions::linger_microseconds,
   * 0 to BRT_HOST_POOL_MAX_LINGER_US); 0: none. The core passes 0 unless
   * spin is 1 and threads > 1. */
  int32_t linger_us;
} BrtHostPoolConfig;

/* Lingering holds CPUs other jobs may want: at most about oneTBB's own wait
 * for work after a request. */
#define BRT_HOST_POOL_MAX_LINGER_US 1000

typedef struct BrtProviderApi {
  uint32_t struct_size;
  uint32_t abi_version;
  const char* name;
  int32_t device_kind; /* the device kind its kernels run on */

  int32_t (*device_count)(void);
  /* Device memory. alignment is a power of two. */
  void* (*allocate)(int32_t device_ordinal, size_t bytes, size_t alignment);
  void (*deallocate)(int32_t device_ordinal, void* ptr);
  /* Copies between host memory and this provider's device memory.
   * direction: 0 host->device, 1 device->host, 2 device->device. */
  int32_t (*copy)(int32_t device_ordinal, void* dst, const void* src, size_t bytes,
                  int32_t direction, void* queue, BrtErrorBuffer* error);
  /* Work queues (e.g. CUDA streams). May be NULL: the core then runs kernels
   * in order on the calling host thread and passes queue = NULL. */
  int32_t (*create_queue)(int32_t device_ordinal, void** queue, BrtErrorBuffer* error);
  void (*destroy_queue)(void* queue);
  int32_t (*synchronize_queue)(void* queue, BrtErrorBuffer* error);

  /* Finds the kernel for a signature: BRT_OK and *kernel filled, or
   * BRT_ERROR_UNSUPPORTED with a reason. Called at load time only. */
  int32_t (*resolve_kernel)(const BrtOpSignature* signature, BrtKernel* kernel,
                            BrtErrorBuffer* error);
  int32_t (*kernel_count)(void);
  int32_t (*kernel_info)(int32_t index, BrtKernelInfo* info);

  /* The fields below are present when struct_size covers them; each may be
   * NULL when the provider has no such thing. */
  /* A queue over the caller's native queue (e.g. a cudaStream_t from
   * PyTorch): work is ordered after what the caller queued before. NULL is a
   * native queue too where the device has one by that handle (CUDA's default
   * stream). Freed by destroy_queue, which then leaves the native queue
   * alone. */
  int32_t (*wrap_queue)(int32_t device_ordinal, void* native_queue, void** queue,
                        BrtErrorBuffer* error);
  /* Gives cached device memory back to the system. */
  void (*trim)(int32_t device_ordinal);
  /* Bytes the device allocator holds from the system (in use + cached). */
  uint64_t (*reserved_bytes)(int32_t device_ordinal);
  /* Queue capture (CUDA graphs): everything queued between begin and end is
   * recorded instead of run; launch_graph replays it on a queue. */
  int32_t (*begin_capture)(void* queue, BrtErrorBuffer* error);
  int32_t (*end_capture)(void* queue, void** graph, BrtErrorBuffer* error);
  int32_t (*launch_graph)(void* graph, void* queue, BrtErrorBuffer* error);
  void (*destroy_graph)(void* graph);
  /* Events order work across this provider's queues (a context's streams):
   * record_event marks the point `queue` has reached; wait_event makes work
   * queued on `queue` afterwards wait for that point. A context makes its
   * events once and reuses them. */
  int32_t (*create_event)(int32_t device_ordinal, void** event, BrtErrorBuffer* error);
  void (*destroy_event)(void* event);
  int32_t (*record_event)(void* event, void* queue, BrtErrorBuffer* error);
  int32_t (*wait_event)(void* queue, void* event, BrtErrorBuffer* error);
  /* Page-locked host memory, for staging host bindings of device arguments:
   * copies from it can run asynchronously. */
  void* (*allocate_host)(size_t bytes);
  void (*free_host)(void* ptr);
  /* Collectives providers (mpi, nccl). comm_create joins the world of
   * config->world_size ranks (collective: every rank calls it);
   * comm_split makes the communicator of the ranks passing the same color,
   * ordered by key (collective over the parent, called in the same order on
   * every rank; color < 0: this rank is in no group and gets NULL). A
   * communicator whose peer failed is aborted: its pending and later
   * collectives fail instead of waiting. comm_destroy frees one. */
  int32_t (*comm_create)(const BrtCommConfig* config, void** comm, BrtErrorBuffer* error);
  int32_t (*comm_split)(void* parent, int32_t color, int32_t key, void** comm,
                        BrtErrorBuffer* error);
  void (*comm_abort)(void* comm);
  void (*comm_destroy)(void* comm);
  /* For providers whose world needs a blob from rank 0 (NCCL's unique id):
   * on rank 0, writes it to buffer (at most *size bytes) and sets *size.
   * The core shares it over another provider's comm_broadcast when there is
   * no rendezvous address. */
  int32_t (*comm_bootstrap_blob)(void* buffer, size_t* size, BrtErrorBuffer* error);
  /* Broadcasts bytes from the root rank of comm to every rank (collective). */
  int32_t (*comm_broadcast)(void* comm, void* buffer, size_t bytes, int32_t root,
                            BrtErrorBuffer* error);
  /* Host thread pools (the CPU provider's): the threads a Session's host
   * kernels share out their work on. create_host_pool once per Session;
   * run_in_host_pool(pool, body, arg) calls body(arg) on the calling thread
   * inside the pool, and the core runs each request's ops that way. Pools of
   * several Sessions draw on the same worker threads of the process. */
  int32_t (*create_host_pool)(const BrtHostPoolConfig* config, void** pool, BrtErrorBuffer* error);
  void (*destroy_host_pool)(void* pool);
  void (*run_in_host_pool)(void* pool, void (*body)(void* arg), void* arg);
  /* The device kinds whose collective ops this provider's communicators
   * serve, as BRT_DEVICE_BIT(kind) bits (an MPI provider: the CPU; an NCCL
   * provider: CUDA); 0: none. For a program with collectives on a device
   * the core uses a provider named in SessionOptions::providers that
   * declares that device, else loads the first plugin in the provider search
   * path that does. The one declaring the CPU also carries, by
   * comm_broadcast, the bootstrap blob of another that needs one. */
  uint32_t collective_devices;
} BrtProviderApi;

typedef const BrtProviderApi* (*BrtProviderGetFn)(uint32_t core_abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRT_PROVIDER_ABI_H_ */
