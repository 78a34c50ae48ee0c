// volley's -R lines come out as the run goes, as uperf's do: the real binary run as
// `volley -R -i 1 -m profiles/pingpong.xml -P PORT` against a real slave (`volley -s -P PORT`),
// its output read while it runs, each line stamped with the moment it was first seen.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/net.hpp"
#include "support/paths.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;

struct SeenLine {
  std::string text;
  std::int64_t seen_unix_ms = 0;
};

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The whole lines of `out` from byte `from` on; `from` moves past them.
std::vector<std::string> new_lines(const std::string& out, std::size_t& from) {
  std::vector<std::string> lines;
  for (auto end = out.find('\n', from); end != std::string::npos; end = out.find('\n', from)) {
    lines.push_back(out.substr(from, end - from));
    from = end + 1;
  }
  return lines;
}

/// `timestamp_ms:` of a raw line, whole milliseconds.
std::int64_t stamp_ms(const std::string& line) {
  return std::stoll(line.substr(std::string("timestamp_ms:").size()));
}

std::uint64_t ops_of(const std::string& line) {
  return std::stoull(line.substr(line.find("nr_ops:") + 7));
}

TEST(UperfLive, RawLinesComeOutAsEachIntervalEnds) {
  const std::string port = std::to_string(free_port());
  TempDir dir;
  const auto key = dir.write("key", std::string(64, 'b') + "\n");
  std::filesystem::permissions(key, std::filesystem::perms::owner_read);
  SlaveProcess slave({VOLLEY_BINARY, "-s", "-P", port, "--key-file", key.string()}, "127.0.0.1",
                     static_cast<std::uint16_t>(std::stoi(port)));
  // The ping-pong step lasts 4 s, with a line a second.
  Process volley({VOLLEY_BINARY, "-R", "-i", "1", "-m",
                  (source_dir() / "profiles/pingpong.xml").string(), "-P", port, "--set",
                  "h=127.0.0.1", "--set", "t=1", "--max-duration", "4s", "--key-file",
                  key.string()});
  std::vector<SeenLine> txn2;
  std::int64_t total_seen = 0;  // when the Total line, the run's end, came out
  std::size_t from = 0;
  for (const auto give_up = std::chrono::steady_clock::now() + 60s;
       total_seen == 0 && std::chrono::steady_clock::now() < give_up;) {
    for (std::string& line : new_lines(volley.stdout_so_far(), from)) {
      if (line.find(" name:Txn2 ") != std::string::npos) txn2.push_back({line, now_unix_ms()});
      if (line.find(" name:Total ") != std::string::npos) total_seen = now_unix_ms();
    }
    std::this_thread::sleep_for(20ms);
  }
  const ProcessResult r = volley.wait(60s);
  slave.stop();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  ASSERT_NE(total_seen, 0) << r.out;
  ASSERT_GE(txn2.size(), 4U) << r.out;
  // The first line with counters (a second into the step) is out seconds before the run ends,
  // and every line soon after the moment it stamps: it is printed when its interval ends.
  ASSERT_GT(ops_of(txn2[1].text), 0U) << r.out;
  EXPECT_LE(txn2[1].seen_unix_ms, total_seen - 2000) << r.out;
  for (const SeenLine& s : txn2) {
    EXPECT_LE(s.seen_unix_ms - stamp_ms(s.text), 2500) << s.text;
    EXPECT_GE(s.seen_unix_ms - stamp_ms(s.text), -100) << s.text;  // not before its time
  }
  // Each line once: what was printed live is not printed again at the end.
  for (std::size_t i = 1; i < txn2.size(); ++i)
    EXPECT_GT(stamp_ms(txn2[i].text), stamp_ms(txn2[i - 1].text)) << r.out;
}

}  // namespace
}  // namespace volley::test
