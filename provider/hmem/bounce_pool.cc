#include "provider/hmem/bounce_pool.h"

#include <bit>

#include "provider/hmem/cuda_driver.h"

namespace uet::prov::hmem {

Bounce& Bounce::operator=(Bounce&& o) noexcept {
  if (this != &o) {
    Release();
    pool_ = o.pool_;
    data_ = o.data_;
    capacity_ = o.capacity_;
    o.pool_ = nullptr;
    o.data_ = nullptr;
    o.capacity_ = 0;
  }
  return *this;
}

void Bounce::Release() {
  if (data_ != nullptr && pool_ != nullptr) pool_->Put(data_, capacity_);
  pool_ = nullptr;
  data_ = nullptr;
  capacity_ = 0;
}

BouncePool& BouncePool::Get(size_t cache_limit_bytes) {
  static BouncePool* pool = new BouncePool(cache_limit_bytes);  // never destroyed
  return *pool;
}

Bounce BouncePool::Acquire(size_t bytes, std::string* error) {
  const size_t capacity = std::bit_ceil(std::max(bytes, kMinBytes));
  Bounce b;
  {
    std::lock_guard lock(mu_);
    auto it = free_.find(capacity);
    if (it != free_.end() && !it->second.empty()) {
      b.data_ = it->second.back();
      it->second.pop_back();
      cached_ -= capacity;
    }
  }
  if (b.data_ == nullptr) {
    CudaDriver& cuda = CudaDriver::Get();
    void* p = nullptr;
    const CUresult r = cuda.HostAlloc(capacity, &p);
    if (r != kCudaSuccess || p == nullptr) {
      *error =
          "cuMemHostAlloc(" + std::to_string(capacity) + " bytes) failed: " + cuda.ErrorText(r);
      return Bounce();
    }
    b.data_ = static_cast<std::byte*>(p);
    std::lock_guard lock(mu_);
    ++allocations_;
  }
  b.pool_ = this;
  b.capacity_ = capacity;
  return b;
}

void BouncePool::Put(std::byte* data, size_t capacity) {
  {
    std::lock_guard lock(mu_);
    if (cached_ + capacity <= cache_limit_) {
      free_[capacity].push_back(data);
      cached_ += capacity;
      return;
    }
  }
  CudaDriver::Get().HostFree(data);
}

size_t BouncePool::cached_bytes() {
  std::lock_guard lock(mu_);
  return cached_;
}

size_t BouncePool::allocations() {
  std::lock_guard lock(mu_);
  return allocations_;
}

}  // namespace uet::prov::hmem
