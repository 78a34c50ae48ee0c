// The io_uring engine through the CLI (`volley run --local --io uring`): runs that agree with the
// slave exactly, their connections' operations really going through the rings (the kernel's own
// count of each ring's completions, /proc/PID/fdinfo), the engine named in the report, and
// io_uring that a seccomp filter refuses: `--io uring` fails with one sentence, `--io auto` falls
// back to epoll and says so.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <utility>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPingPong = R"XML(<?xml version="1.0"?>
<profile name="ping-pong on the ring">
  <group nthreads="8">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1500ms">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";

/// The completions each io_uring of process `pid` has handed out so far (CqHead in its fdinfo).
std::vector<std::uint64_t> ring_completions(pid_t pid) {
  std::vector<std::uint64_t> heads;
  const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(fds, ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(entry.path(), link_ec).string() != "anon_inode:[io_uring]") {
      continue;
    }
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" +
                       entry.path().filename().string());
    std::string key;
    std::string value;
    while (info >> key >> value) {
      if (key == "CqHead:") heads.push_back(std::stoull(value));
    }
  }
  return heads;
}

TEST(IoUring, PingPongRunsOnTheRingsAndAgreesWithTheSlave) {
  TempDir dir;
  const auto profile = dir.write("p.xml", kPingPong);
  const auto out = dir.path() / "r.json";
  Process run({VOLLEY_BINARY, "run", profile.string(), "--local", "--io", "uring", "--set",
               "h=127.0.0.1", "--workers", "2", "--json", out.string(), "-q"});
  // During the run the master's rings complete thousands of operations between them: the most
  // seen at once, looked at every 50 ms while the process lives.
  std::uint64_t completions = 0;
  for (int i = 0; i < 200; ++i) {
    const std::vector<std::uint64_t> heads = ring_completions(run.pid());
    if (heads.empty() && completions > 0) break;  // the workers are gone
    std::uint64_t now = 0;
    for (const std::uint64_t head : heads) now += head;
    completions = std::max(completions, now);
    std::this_thread::sleep_for(50ms);
  }
  const ProcessResult r = run.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(completions, 1000U) << "the master's connections did not use its rings";
  const nlohmann::json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["io"], "uring");
  EXPECT_EQ(doc["slaves"][0]["io"], "uring");
  const auto& master = doc["groups"][0]["transactions"][1];
  const auto& slave = doc["slaves"][0]["groups"][0]["transactions"][1];
  EXPECT_GT(master["transactions"].get<std::uint64_t>(), 1000U);
  EXPECT_EQ(master["flowops"][0]["bytes_written"], slave["flowops"][0]["bytes_read"]);
  EXPECT_EQ(master["flowops"][1]["bytes_read"], slave["flowops"][1]["bytes_written"]);
}

TEST(IoUring, StreamsOfEverySizeEndTheirStepsWithEveryByteRead) {
  // Large messages both ways, a duration step whose end cuts reads in flight on the ring, a
  // drain, then an iterations step and a disconnect: both sides count the same bytes.
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="streams on the ring">
  <group nthreads="3">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s">
      <flowop type="write" options="size=rand(1,300000)"/>
      <flowop type="read" options="size=rand(1,100000)"/>
    </transaction>
    <transaction iterations="50">
      <flowop type="write" options="size=1m"/>
      <flowop type="read" options="size=7"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                                 {"--set", "h=127.0.0.1", "--io", "uring"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_FALSE(run.doc.is_discarded());
  EXPECT_EQ(run.doc["status"], "ok") << run.doc["failure"];
  for (const auto& row : run.doc["comparison"]) {
    EXPECT_EQ(row["master_bytes"], row["slave_bytes"]) << row.dump();
  }
  EXPECT_EQ(run.doc["groups"][0]["transactions"][2]["transactions"], 150);
}

TEST(IoUring, TheReportNamesTheEngine) {
  TempDir dir;
  const auto profile = dir.write("p.xml", kPingPong);
  const ProcessResult r = run_volley(
      {"run", profile.string(), "--local", "--io", "uring", "--set", "h=127.0.0.1"}, 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("io uring"), std::string::npos) << r.out;
  const ProcessResult plain = run_volley(
      {"run", profile.string(), "--local", "--io", "epoll", "--set", "h=127.0.0.1"}, 60s);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("io epoll"), std::string::npos) << plain.out;
}

TEST(IoUring, AnUnknownEngineIsACommandLineError) {
  TempDir dir;
  const auto profile = dir.write("p.xml", kPingPong);
  const ProcessResult r = run_volley({"run", profile.string(), "--local", "--io", "kqueue"}, 10s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--io"), std::string::npos) << r.err;
}

/// Runs volley ARGS with io_uring_setup refused (EPERM) by a seccomp filter, as a container's
/// default profile does; its exit code and what it printed on stderr.
std::pair<int, std::string> run_without_io_uring(const std::vector<std::string>& args,
                                                 const std::filesystem::path& err_file) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(err, STDERR_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
      ::_exit(99);
    }
    std::vector<std::string> all{VOLLEY_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(98);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream in(err_file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string(std::istreambuf_iterator<char>(in), {})};
}

TEST(IoUring, WhereIoUringIsRefusedUringFailsInOneSentenceAndAutoFallsBack) {
  TempDir dir;
  const auto profile = dir.write("p.xml", kPingPong);
  const auto [code, err] = run_without_io_uring(
      {"run", profile.string(), "--local", "--io", "uring", "--set", "h=127.0.0.1", "-q"},
      dir.path() / "err1");
  EXPECT_EQ(code, 1) << err;
  EXPECT_NE(err.find("--io uring: io_uring is not permitted here"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  const auto out = dir.path() / "r.json";
  const auto [auto_code, auto_err] =
      run_without_io_uring({"run", profile.string(), "--local", "--io", "auto", "--set",
                            "h=127.0.0.1", "--json", out.string(), "-q"},
                           dir.path() / "err2");
  EXPECT_EQ(auto_code, 0) << auto_err;
  EXPECT_NE(auto_err.find("--io auto: io_uring is not permitted here"), std::string::npos)
      << auto_err;
  EXPECT_NE(auto_err.find("using epoll"), std::string::npos) << auto_err;
  const nlohmann::json doc = read_json(out);
  EXPECT_EQ(doc["io"], "epoll");
  EXPECT_EQ(doc["slaves"][0]["io"], "epoll");
}

}  // namespace
}  // namespace volley::test
