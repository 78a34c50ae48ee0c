#include "volley/core/build_info.hpp"

#include <fmt/format.h>

namespace volley::core {

// version() and git_commit() are defined in the generated build_info_values.cpp.
std::string version_line() { return fmt::format("volley {} (git {})", version(), git_commit()); }

}  // namespace volley::core
