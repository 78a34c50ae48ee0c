#include "support/temp_dir.hpp"

#include <stdlib.h>

#include <fstream>

namespace volley::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "volley-test-XXXXXX").string();
  path_ = ::mkdtemp(pattern.data());
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

fs::path TempDir::write(const std::string& relative, const std::string& text) const {
  const fs::path p = path_ / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

void TempDir::mkdir(const std::string& relative) const { fs::create_directories(path_ / relative); }

}  // namespace volley::test
