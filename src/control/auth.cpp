#include "volley/control/auth.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "volley/control/message.hpp"

namespace volley::control {

namespace {

std::string to_hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return out;
}

/// label || 0 || challenge || 0 || nonce || 0 || protocol version: fields cannot run together.
std::string transcript(std::string_view label, std::string_view challenge, std::string_view nonce) {
  return fmt::format("volley {}", label) + '\0' + std::string(challenge) + '\0' +
         std::string(nonce) + '\0' + std::to_string(kProtocolVersion);
}

Secret as_secret(const std::string& bytes) { return Secret(bytes.begin(), bytes.end()); }

}  // namespace

std::optional<Secret> read_key_file(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = fmt::format("key file '{}': cannot read it", path);
    return std::nullopt;
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    error = fmt::format("key file '{}' is readable by others (mode {:o}); make it 0600", path,
                        st.st_mode & 0777);
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  const auto first = key.find_first_not_of(" \t\r\n");
  const auto last = key.find_last_not_of(" \t\r\n");
  key = first == std::string::npos ? std::string() : key.substr(first, last - first + 1);
  if (!in.good() && !in.eof()) {
    error = fmt::format("key file '{}': cannot read it", path);
    return std::nullopt;
  }
  if (key.size() < kMinKeyBytes) {
    error = fmt::format("key file '{}' holds {} bytes; a key has at least {} (e.g. `head -c 32 "
                        "/dev/urandom | base64 > FILE`)",
                        path, key.size(), kMinKeyBytes);
    return std::nullopt;
  }
  return as_secret(key);
}

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("no random bytes from the system");
  }
  return to_hex(raw);
}

std::string random_key_text() { return random_hex(32); }

std::string hmac(const Secret& key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  return std::string(reinterpret_cast<const char*>(out), n);
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
  const std::string token = hmac(key, transcript("data token", challenge, nonce));
  for (int i = 0; i < 4; ++i) {
    keys.data_token = (keys.data_token << 8) | static_cast<unsigned char>(token[static_cast<std::size_t>(i)]);
  }
  return keys;
}

}  // namespace volley::control
