#include "volley/cli/key_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace volley::cli {

std::variant<std::optional<control::Secret>, std::string> key_from_options(
    const std::string& key_file) {
  std::string path = key_file;
  std::string source = fmt::format("--key-file '{}'", key_file);
  if (path.empty()) {
    const char* from_environment = std::getenv(kKeyFileVariable);
    if (from_environment == nullptr || *from_environment == '\0') {
      return std::optional<control::Secret>{};
    }
    path = from_environment;
    source = fmt::format("{}='{}'", kKeyFileVariable, path);
  }
  auto read = control::read_key_file(path, source);
  if (auto* problem = std::get_if<std::string>(&read)) return std::move(*problem);
  auto& file = std::get<control::KeyFile>(read);
  if (!file.warning.empty()) std::cerr << "volley: " << file.warning << "\n";
  return std::optional<control::Secret>(std::move(file.key));
}

std::variant<control::Secret, std::string> key_from_descriptor(int fd) {
  std::string contents;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fmt::format("--key-fd {}: {}", fd, std::strerror(errno));
    if (n == 0) break;
    contents.append(buf, static_cast<std::size_t>(n));
    if (contents.size() > control::kMaxKeyFileBytes) {
      return fmt::format("--key-fd {}: more than {} bytes", fd, control::kMaxKeyFileBytes);
    }
  }
  ::close(fd);
  std::string error;
  auto key = control::parse_key(contents, fmt::format("--key-fd {}", fd), error);
  if (!key) return error;
  return std::move(*key);
}

}  // namespace volley::cli
