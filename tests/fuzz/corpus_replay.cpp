// The regression half of fuzzing, in every build (GCC too, without libFuzzer): feeds each file of
// the given corpus folders (recursively) to the target's LLVMFuzzerTestOneInput once, so an input
// that once crashed, hung or blew up stays fixed. A crash fails the test by itself (and, in the
// sanitizer builds, any memory error); a hang is caught by CTest's timeout.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_input.hpp"

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "corpus_replay: cannot read %s\n", file.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::size_t inputs = 0;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path root(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_regular_file(root, ec)) {
      failures += replay(root);
      ++inputs;
      continue;
    }
    if (!std::filesystem::is_directory(root, ec)) {
      std::fprintf(stderr, "corpus_replay: %s is neither a file nor a folder\n", argv[i]);
      return 2;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());  // a stable order: a failure names the same file
    for (const auto& f : files) {
      failures += replay(f);
      ++inputs;
    }
  }
  // An empty corpus would make this test pass while proving nothing.
  if (inputs == 0) {
    std::fprintf(stderr, "corpus_replay: no inputs found\n");
    return 1;
  }
  std::printf("corpus_replay: %zu inputs, no crash\n", inputs);
  return failures == 0 ? 0 : 1;
}
