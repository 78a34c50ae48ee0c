#pragma once
// Shared by the fuzz targets: the libFuzzer entry point's signature, and a reader that splits one
// input into the pieces a target needs (so one byte string drives several parameters).
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace volley::fuzz {

/// Consumes an input front to back; past the end it yields zeros and empty strings.
class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  /// Up to the next `separator` (dropped), or everything left.
  std::string_view until(char separator) {
    const auto at = rest_.find(separator);
    const std::string_view piece = rest_.substr(0, at);
    rest_.remove_prefix(at == std::string_view::npos ? rest_.size() : at + 1);
    return piece;
  }
  std::string_view take(std::size_t n) {
    const std::string_view piece = rest_.substr(0, n);
    rest_.remove_prefix(piece.size());
    return piece;
  }
  [[nodiscard]] std::string_view rest() const { return rest_; }
  [[nodiscard]] bool empty() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace volley::fuzz
