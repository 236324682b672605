#include "allocator.h"

#include <algorithm>
#include <cstdlib>

namespace brt::core {

void* Allocator::Allocate(size_t bytes, size_t alignment) {
  void* p = DoAllocate(std::max<size_t>(bytes, 1), alignment);
  if (!p) return nullptr;
  int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  count_.fetch_add(1);
  return p;
}

void Allocator::Deallocate(void* ptr, size_t bytes) {
  if (!ptr) return;
  DoDeallocate(ptr);
  in_use_.fetch_sub(static_cast<int64_t>(bytes));
}

AllocatorStats Allocator::stats() const {
  AllocatorStats s;
  s.bytes_in_use = in_use_.load();
  s.peak_bytes_in_use = peak_.load();
  s.bytes_reserved = Reserved();
  s.num_allocations = count_.load();
  return s;
}

void* HostAllocator::DoAllocate(size_t bytes, size_t alignment) {
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

void HostAllocator::DoDeallocate(void* ptr) { std::free(ptr); }

void* ProviderAllocator::DoAllocate(size_t bytes, size_t alignment) {
  return api_->allocate ? api_->allocate(ordinal_, bytes, alignment) : nullptr;
}

void ProviderAllocator::DoDeallocate(void* ptr) {
  if (api_->deallocate) api_->deallocate(ordinal_, ptr);
}

void ProviderAllocator::Trim() {
  if (BRT_STRUCT_HAS(BrtProviderApi, api_, trim) && api_->trim) api_->trim(ordinal_);
}

int64_t ProviderAllocator::Reserved() const {
  if (BRT_STRUCT_HAS(BrtProviderApi, api_, reserved_bytes) && api_->reserved_bytes)
    return static_cast<int64_t>(api_->reserved_bytes(ordinal_));
  return Allocator::Reserved();
}

std::shared_ptr<void> AllocateShared(const std::shared_ptr<Allocator>& allocator, size_t bytes,
                                     size_t alignment) {
  void* p = allocator->Allocate(bytes, alignment);
  if (!p) return nullptr;
  return std::shared_ptr<void>(p, [allocator, bytes](void* q) { allocator->Deallocate(q, bytes); });
}

}  // namespace brt::core
