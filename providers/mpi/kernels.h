// The MPI provider's kernels: StableHLO collectives on host buffers, and
// the overlapped all_gather+matmul / matmul+reduce_scatter. A kernel is an
// immutable plan made by Prepare; each request context gets an instance
// with its own scratch and transfer, so contexts run concurrently.
#pragma once

#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/provider_glue.h"
#include "engine.h"
#include "ops/op_info.h"

namespace brt::mpi {

using namespace brt::ops;  // NOLINT: the op view shared with other providers

// Page-aligned host memory: the chunks the ring moves and the GEMM reads.
class Buffer {
 public:
  void resize(size_t bytes) {
    const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    data_.reset(rounded ? static_cast<char*>(std::aligned_alloc(kPage, rounded)) : nullptr);
    if (rounded && !data_) throw std::bad_alloc();
  }
  char* data() const { return data_.get(); }

 private:
  static constexpr size_t kPage = 4096;
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
};

// Rows of a chunk the overlapped kernels move and multiply at a time.
inline constexpr int kMaxPieces = 8;

struct Scratch {
  Buffer a, b;
  Transfer transfer;
  // The overlapped kernels' transfers: per piece, this step's and the last.
  Transfer pieces[2][kMaxPieces];
};

class CollectiveKernel {
 public:
  virtual ~CollectiveKernel() = default;
  // Before Prepare: the op's group communicator (desc.comm, a Comm*) and kind.
  void Attach(const BrtOpDesc& desc) {
    comm_ = static_cast<const Comm*>(desc.comm);
    kind_ = desc.kind ? desc.kind : "";
  }
  const char* kind() const { return kind_.c_str(); }
  virtual void Prepare(const OpInfo& op, const BrtOpDesc& desc) = 0;
  // Bytes of each of the instance's scratch buffers a and b.
  virtual size_t ScratchBytes() const { return 0; }
  virtual void Run(void* const* buffers, Scratch& s) const = 0;

 protected:
  // Runs t on the engine; a failure becomes the op's error.
  static void RunTransfer(Transfer& t);
  static void WaitTransfer(Transfer& t);
  const Comm* comm_ = nullptr;
  std::string kind_;
};

using KernelDef = KernelRow<std::unique_ptr<CollectiveKernel> (*)()>;

template <typename K>
std::unique_ptr<CollectiveKernel> Make() {
  return std::make_unique<K>();
}

// The MPI type of a dtype, and the MPI op of a reducer for it (16-bit
// floats use brt's own types and ops).
MPI_Datatype MpiType(int32_t dtype);
MPI_Op MpiReduceOp(const std::string& reducer, int32_t dtype);

// A tensor viewed as [outer, blocks, chunk] rearranged to [blocks, outer,
// chunk] (Pack) and back (Unpack); chunk in bytes.
void PackBlocks(char* dst, const char* src, int64_t outer, int64_t blocks, size_t chunk);
void UnpackBlocks(char* dst, const char* src, int64_t outer, int64_t blocks, size_t chunk);

void RegisterCollectives(std::vector<KernelDef>& defs);
void RegisterOverlapped(std::vector<KernelDef>& defs);

}  // namespace brt::mpi
