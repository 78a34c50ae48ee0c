#include "volley/control/auth.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "volley/control/message.hpp"

namespace volley::control {

namespace {

/// label || 0 || challenge || 0 || nonce || 0 || protocol version: fields cannot run together,
/// and a proof made for one protocol version does not pass for another.
std::string transcript(std::string_view label, std::string_view challenge, std::string_view nonce) {
  return fmt::format("volley {}", label) + '\0' + std::string(challenge) + '\0' +
         std::string(nonce) + '\0' + std::to_string(kProtocolVersion);
}

Secret as_secret(const std::string& bytes) { return Secret(bytes.begin(), bytes.end()); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string key_file_advice(const std::string& path) {
  return fmt::format(
      "make one with `openssl rand -hex 32 > {0}` or "
      "`head -c 32 /dev/urandom > {0}`, then `chmod 600 {0}` and copy it to the "
      "master and every slave",
      path);
}

std::optional<Secret> parse_key(std::string_view contents, const std::string& source,
                                std::string& error) {
  std::string_view text = contents;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  bool hex = !text.empty();
  for (const char c : text) hex = hex && hex_digit(c) >= 0;
  if (hex) {
    if (text.size() % 2 != 0 || text.size() < 2 * kMinKeyBytes) {
      error = fmt::format("{} holds {} hex digits; a key has at least {} (an even number)", source,
                          text.size(), 2 * kMinKeyBytes);
      return std::nullopt;
    }
    Secret key;
    for (std::size_t i = 0; i < text.size(); i += 2) {
      key.push_back(static_cast<std::uint8_t>(hex_digit(text[i]) * 16 + hex_digit(text[i + 1])));
    }
    return key;
  }
  // Raw bytes are taken as they are: trimming could change random material.
  if (contents.size() < kMinKeyBytes) {
    error = fmt::format("{} holds {} bytes; a key has at least {} bytes of random material", source,
                        contents.size(), kMinKeyBytes);
    return std::nullopt;
  }
  return Secret(contents.begin(), contents.end());
}

std::variant<KeyFile, std::string> read_key_file(const std::string& path,
                                                 const std::string& source) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return fmt::format("{}: cannot read it: {}", source, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fmt::format("{}: not a regular file", source);
  }
  std::string contents;
  char buf[1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return fmt::format("{}: cannot read it: {}", source, std::strerror(e));
    }
    if (n == 0) break;
    contents.append(buf, static_cast<std::size_t>(n));
    if (contents.size() > kMaxKeyFileBytes) {
      ::close(fd);
      return fmt::format("{} is larger than {} bytes: not a key file", source, kMaxKeyFileBytes);
    }
  }
  ::close(fd);
  KeyFile out;
  std::string error;
  auto key = parse_key(contents, source, error);
  if (!key) return fmt::format("{} ({})", error, key_file_advice(path));
  out.key = std::move(*key);
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    out.warning =
        fmt::format("warning: {} can be read by other users (mode {:04o}); `chmod 600 {}`", source,
                    st.st_mode & 07777, path);
  }
  return out;
}

std::string random_bytes(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("no random bytes from the system (RAND_bytes failed)");
  }
  return raw;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

std::string random_hex(std::size_t bytes) { return to_hex(random_bytes(bytes)); }

std::string hmac(const Secret& key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(out), n);
}

std::string frame_mac(const Secret& key, std::uint64_t sequence, std::string_view payload) {
  std::string data(8, '\0');
  for (int i = 7; i >= 0; --i, sequence >>= 8) {
    data[static_cast<std::size_t>(i)] = static_cast<char>(sequence & 0xff);
  }
  data += payload;
  return hmac(key, data);
}

std::optional<std::string_view> authenticated_body(std::string_view payload, const Secret& key,
                                                   std::uint64_t sequence) {
  if (payload.size() < kMacBytes) return std::nullopt;
  const std::string_view body = payload.substr(0, payload.size() - kMacBytes);
  if (!same_secret(payload.substr(body.size()), frame_mac(key, sequence, body)))
    return std::nullopt;
  return body;
}

bool same_secret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string master_proof(const Secret& key, std::string_view challenge, std::string_view nonce) {
  return to_hex(hmac(key, transcript("master proof", challenge, nonce)));
}

std::string slave_proof(const Secret& key, std::string_view challenge, std::string_view nonce) {
  return to_hex(hmac(key, transcript("slave proof", challenge, nonce)));
}

SessionKeys derive_session_keys(const Secret& key, std::string_view challenge,
                                std::string_view nonce) {
  SessionKeys keys;
  keys.master_to_slave = as_secret(hmac(key, transcript("master to slave", challenge, nonce)));
  keys.slave_to_master = as_secret(hmac(key, transcript("slave to master", challenge, nonce)));
  const std::string mask = hmac(key, transcript("data token mask", challenge, nonce));
  for (std::size_t i = 0; i < 4; ++i) {
    keys.data_mask = (keys.data_mask << 8) | static_cast<unsigned char>(mask[i]);
  }
  return keys;
}

}  // namespace volley::control
