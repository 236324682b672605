// Allocator abstraction with statistics (bytes in use, peak, reserved) and trim.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "brt/provider_abi.h"
#include "brt/session.h"

namespace brt::core {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // nullptr on failure. A zero-byte request returns a valid unique pointer.
  void* Allocate(size_t bytes, size_t alignment);
  void Deallocate(void* ptr, size_t bytes);
  AllocatorStats stats() const;
  virtual void Trim() {}

 protected:
  // Bytes held from the system; by default exactly what is in use.
  virtual int64_t Reserved() const { return in_use_.load(); }

 public:
 protected:
  virtual void* DoAllocate(size_t bytes, size_t alignment) = 0;
  virtual void DoDeallocate(void* ptr) = 0;

 private:
  std::atomic<int64_t> in_use_{0}, peak_{0}, count_{0};
};

// Host memory from the C library.
class HostAllocator final : public Allocator {
 protected:
  void* DoAllocate(size_t bytes, size_t alignment) override;
  void DoDeallocate(void* ptr) override;
};

// Device memory from a provider plugin.
class ProviderAllocator final : public Allocator {
 public:
  ProviderAllocator(const BrtProviderApi* api, int ordinal) : api_(api), ordinal_(ordinal) {}
  void Trim() override;

 protected:
  int64_t Reserved() const override;
  void* DoAllocate(size_t bytes, size_t alignment) override;
  void DoDeallocate(void* ptr) override;

 private:
  const BrtProviderApi* api_;
  int ordinal_;
};

// A block owned through a shared allocator (kept alive by the deleter).
std::shared_ptr<void> AllocateShared(const std::shared_ptr<Allocator>& allocator, size_t bytes,
                                     size_t alignment);

}  // namespace brt::core
