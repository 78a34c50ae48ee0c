// The key file format, the handshake's proofs and the MAC'd channel: what a forged, replayed or
// reordered message meets.
#include "volley/control/auth.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>

#include "support/temp_dir.hpp"
#include "volley/control/channel.hpp"
#include "volley/control/codec.hpp"
#include "volley/control/handshake.hpp"

namespace volley::control {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using test::TempDir;

const std::string kHexKey(64, 'c');

TEST(KeyFile, HexKeysAreDecodedAndTrailingWhitespaceIgnored) {
  std::string error;
  const auto key = parse_key(kHexKey + "\r\n", "k", error);
  ASSERT_TRUE(key) << error;
  EXPECT_EQ(key->size(), 32U);
  EXPECT_EQ((*key)[0], 0xcc);
}

TEST(KeyFile, ShortOrOddHexIsRefusedNamingTheSource) {
  std::string error;
  EXPECT_FALSE(parse_key(std::string(62, 'a'), "--key-file 'k'", error));
  EXPECT_NE(error.find("--key-file 'k'"), std::string::npos) << error;
  EXPECT_NE(error.find("at least 64"), std::string::npos) << error;
  EXPECT_FALSE(parse_key(std::string(65, 'a'), "k", error));
}

TEST(KeyFile, RawKeysAreTakenByteForByte) {
  std::string error;
  std::string raw(31, '\x01');
  raw += '\n';  // a random byte that happens to be a newline is key material, not whitespace
  const auto key = parse_key(raw, "k", error);
  ASSERT_TRUE(key) << error;
  EXPECT_EQ(key->size(), 32U);
  EXPECT_FALSE(parse_key(std::string(31, '\x01'), "k", error));
  EXPECT_NE(error.find("at least 32 bytes"), std::string::npos) << error;
}

TEST(KeyFile, ReadableByOthersWarnsTooBigOrNotAFileIsRefused) {
  TempDir dir;
  const auto path = dir.write("key", kHexKey);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::others_read);
  auto read = read_key_file(path, "K");
  ASSERT_TRUE(std::holds_alternative<KeyFile>(read)) << std::get<std::string>(read);
  EXPECT_NE(std::get<KeyFile>(read).warning.find("chmod 600"), std::string::npos);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  EXPECT_TRUE(std::get<KeyFile>(read_key_file(path, "K")).warning.empty());

  const auto big = dir.write("big", std::string(kMaxKeyFileBytes + 1, 'x'));
  EXPECT_TRUE(std::holds_alternative<std::string>(read_key_file(big, "K")));
  EXPECT_TRUE(std::holds_alternative<std::string>(read_key_file(dir.path().string(), "K")));
  const auto missing = read_key_file((dir.path() / "absent").string(), "K");
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("cannot read it"), std::string::npos);
}

TEST(Proofs, DependOnKeyChallengeNonceAndDirection) {
  const Secret key(32, 1);
  const Secret other(32, 2);
  const std::string c = random_hex(kChallengeBytes);
  const std::string n = random_hex(kChallengeBytes);
  EXPECT_EQ(master_proof(key, c, n), master_proof(key, c, n));
  EXPECT_NE(master_proof(key, c, n), slave_proof(key, c, n));
  EXPECT_NE(master_proof(key, c, n), master_proof(other, c, n));
  EXPECT_NE(master_proof(key, c, n), master_proof(key, random_hex(kChallengeBytes), n));
  EXPECT_NE(master_proof(key, c, n), master_proof(key, c, random_hex(kChallengeBytes)));
  EXPECT_NE(random_hex(kChallengeBytes), random_hex(kChallengeBytes));
  const auto keys = derive_session_keys(key, c, n);
  EXPECT_NE(keys.master_to_slave, keys.slave_to_master);
  EXPECT_NE(keys.master_to_slave, key);
}

TEST(Proofs, TheSlaveAcceptsOnlyAProofForItsOwnChallengeAndKey) {
  const Secret key(32, 1);
  const std::string challenge = random_hex(kChallengeBytes);
  const std::string nonce = random_hex(kChallengeBytes);
  auto auth = [&](const Secret& k, const std::string& c) {
    return message("auth", {{"nonce", nonce}, {"proof", master_proof(k, c, nonce)}});
  };
  const auto ok = accept_master_auth(key, challenge, auth(key, challenge));
  ASSERT_TRUE(std::holds_alternative<AcceptedAuth>(ok)) << std::get<std::string>(ok);
  const auto& accepted = std::get<AcceptedAuth>(ok);
  EXPECT_EQ(accepted.reply["proof"], slave_proof(key, challenge, nonce));
  EXPECT_EQ(accepted.keys.master_to_slave,
            derive_session_keys(key, challenge, nonce).master_to_slave);

  // A wrong key; a proof recorded for another challenge (a replay); not an auth at all.
  EXPECT_TRUE(std::holds_alternative<std::string>(
      accept_master_auth(key, challenge, auth(Secret(32, 9), challenge))));
  EXPECT_TRUE(std::holds_alternative<std::string>(
      accept_master_auth(key, challenge, auth(key, random_hex(kChallengeBytes)))));
  EXPECT_TRUE(
      std::holds_alternative<std::string>(accept_master_auth(key, challenge, message("load"))));
  EXPECT_TRUE(std::holds_alternative<std::string>(accept_master_auth(
      key, challenge, message("auth", {{"nonce", "zz"}, {"proof", std::string(64, 'g')}}))));
}

/// Runs `receive()` `n` times on `channel`.
asio::awaitable<void> receive_n(Channel& channel, int n,
                                std::vector<std::variant<json, ChannelError>>& got) {
  for (int i = 0; i < n; ++i) got.push_back(co_await channel.receive());
}

/// A frame as an authenticated sender with `key` writes it at sequence number `seq`.
std::string keyed_frame(const Secret& key, std::uint64_t seq, const json& m) {
  const std::string payload = m.dump();
  return encode_payload(payload + frame_mac(key, seq, payload));
}

struct KeyedReceiver {
  asio::io_context context;
  tcp::socket client{context};
  std::unique_ptr<Channel> channel;
  Secret key = Secret(32, 5);

  KeyedReceiver() {
    tcp::acceptor acceptor(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    tcp::socket server(context);
    acceptor.accept(server);
    channel = std::make_unique<Channel>(std::move(server));
    channel->authenticate_frames(Secret(32, 6), key);
  }
  std::vector<std::variant<json, ChannelError>> receive(const std::string& bytes, int n) {
    asio::write(client, asio::buffer(bytes));
    std::vector<std::variant<json, ChannelError>> got;
    asio::co_spawn(context, receive_n(*channel, n, got), [](std::exception_ptr) {});
    context.run_for(std::chrono::seconds(3));
    return got;
  }
};

TEST(KeyedChannel, TakesFramesInSequenceAndRefusesAReplayedOne) {
  KeyedReceiver r;
  const std::string first = keyed_frame(r.key, 0, message("ping"));
  const auto got = r.receive(first + keyed_frame(r.key, 1, message("bye")) + first, 3);
  ASSERT_EQ(got.size(), 3U);
  EXPECT_TRUE(std::holds_alternative<json>(got[0]));
  EXPECT_TRUE(std::holds_alternative<json>(got[1]));
  ASSERT_TRUE(std::holds_alternative<ChannelError>(got[2]));
  EXPECT_NE(std::get<ChannelError>(got[2]).message.find("fails authentication"), std::string::npos);
}

TEST(KeyedChannel, RefusesReorderedForgedAndUnauthenticatedFrames) {
  {
    KeyedReceiver r;  // the second frame first
    const auto got = r.receive(keyed_frame(r.key, 1, message("ping")), 1);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_TRUE(std::holds_alternative<ChannelError>(got[0]));
  }
  {
    KeyedReceiver r;  // another key (another session, or a forger)
    const auto got = r.receive(keyed_frame(Secret(32, 7), 0, message("ping")), 1);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_TRUE(std::holds_alternative<ChannelError>(got[0]));
  }
  {
    KeyedReceiver r;  // a plain frame, as before authentication
    const auto got = r.receive(encode_frame(message("load")), 1);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_TRUE(std::holds_alternative<ChannelError>(got[0]));
  }
  {
    KeyedReceiver r;  // a changed byte in the payload
    std::string frame = keyed_frame(r.key, 0, message("ping"));
    frame[8] = static_cast<char>(frame[8] ^ 1);
    const auto got = r.receive(frame, 1);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_TRUE(std::holds_alternative<ChannelError>(got[0]));
  }
}

}  // namespace
}  // namespace volley::control
