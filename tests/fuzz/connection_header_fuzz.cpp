// Fuzz target: the first 20 bytes of a data connection, as any peer on the data port sends them.
// Invariant checked: a header that decodes encodes back to exactly the bytes read; one that does
// not decode does not carry the magic.
#include <array>
#include <cstdlib>
#include <cstring>

#include "fuzz_input.hpp"
#include "volley/transport/connection_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley::transport;
  std::array<std::uint8_t, kConnectionHeaderBytes> bytes{};
  // An empty input may come with a null pointer (the corpus replay's empty file): copy nothing.
  if (size > 0) std::memcpy(bytes.data(), data, std::min(size, bytes.size()));
  const auto header = decode_connection_header(bytes);
  if (header) {
    if (encode(*header) != bytes) std::abort();
  } else {
    const auto magic = encode(ConnectionHeader{});
    if (std::memcmp(magic.data(), bytes.data(), 4) == 0) std::abort();
  }
  return 0;
}
