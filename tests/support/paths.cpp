#include "support/paths.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace volley::test {

std::filesystem::path data_dir() { return VOLLEY_TEST_DATA_DIR; }
std::filesystem::path source_dir() { return VOLLEY_SOURCE_DIR; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace volley::test
