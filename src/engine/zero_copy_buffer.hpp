#pragma once
// The bytes a worker's zero-copy writes send (ZeroCopyWrite): filled once, then read-only for the
// buffer's life. The kernel sends a zero-copy send from these pages after the send returned, up to
// its completion; the worker's other buffer (Worker::buffer) is also where reads land, so it could
// change under a send in flight, and this one cannot (a write to it would fault). Its own mapping,
// not the heap: once unmapped, pages the kernel still holds for a send keep their bytes, and no
// later allocation of this process can reuse them until the kernel lets go.
#include <cstddef>
#include <span>

namespace volley::engine {

class ZeroCopyBuffer {
 public:
  /// `bytes` of 'v' (the byte the worker's buffer starts with), read-only; empty when the memory
  /// could not be mapped.
  explicit ZeroCopyBuffer(std::size_t bytes);
  ~ZeroCopyBuffer();
  ZeroCopyBuffer(const ZeroCopyBuffer&) = delete;
  ZeroCopyBuffer& operator=(const ZeroCopyBuffer&) = delete;

  [[nodiscard]] std::span<const char> bytes() const { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace volley::engine
