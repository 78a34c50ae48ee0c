#pragma once
// A scratch directory for a test: fake /proc and /sys trees, profiles, result files. Removed,
// with everything in it, when the test ends.
#include <filesystem>
#include <string>

namespace volley::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// Writes `text` to `relative` (parent folders are made) and returns the full path.
  std::filesystem::path write(const std::string& relative, const std::string& text) const;
  /// Makes the folder `relative` (and its parents).
  void mkdir(const std::string& relative) const;

 private:
  std::filesystem::path path_;
};

}  // namespace volley::test
