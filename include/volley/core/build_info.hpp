#pragma once
// What build this is: the project version and the git commit it was built from. The values come
// from one source generated at build time (cmake/BuildInfo.cmake).
#include <string>
#include <string_view>

namespace volley::core {

/// The project version, e.g. "0.1.0".
[[nodiscard]] std::string_view version();
/// `git describe --tags --always --dirty` of the source tree at build time, e.g.
/// "2bfc1f63fbab" or "v0.1.0-3-g2bfc1f63fbab-dirty"; the configured fallback
/// (VOLLEY_GIT_COMMIT) or "unknown" when the source was not a git checkout.
[[nodiscard]] std::string_view git_commit();
/// The `volley --version` line: "volley 0.1.0 (git 2bfc1f63fbab)".
[[nodiscard]] std::string version_line();

}  // namespace volley::core
