#pragma once
// Where tests find their data, the source tree and the built volley binary.
#include <filesystem>
#include <string>

namespace volley::test {

/// tests/data in the source tree.
std::filesystem::path data_dir();
/// The repository root (profiles/, docs/ ...).
std::filesystem::path source_dir();
/// Reads a whole file; fails the current test (and returns "") when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace volley::test
