#include "zero_copy_buffer.hpp"

#include <sys/mman.h>

#include <cstring>

namespace volley::engine {

ZeroCopyBuffer::ZeroCopyBuffer(std::size_t bytes) {
  if (bytes == 0) return;
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return;
  std::memset(at, 'v', bytes);
  if (::mprotect(at, bytes, PROT_READ) != 0) {
    ::munmap(at, bytes);
    return;
  }
  data_ = static_cast<char*>(at);
  size_ = bytes;
}

ZeroCopyBuffer::~ZeroCopyBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace volley::engine
