// nprocs as processes (docs/architecture.md, "Processes"): a side spread over child processes
// over real sockets, through the real CLI. The children exist while the run goes, the merged
// counts agree on both sides, a killed child is named and fails the run, and no child is left.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/paths.hpp"
#include "support/proc_sockets.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kProfile = R"XML(<?xml version="1.0"?>
<profile name="procs">
  <group nprocs="$n">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="$d">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";

/// A process's state (R, S, T when stopped, Z, ...) and parent, from /proc/PID/stat.
struct ProcStat {
  char state = 0;
  pid_t ppid = 0;
};

std::optional<ProcStat> proc_stat(const std::filesystem::path& dir) {
  std::ifstream stat(dir / "stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  ProcStat out;
  rest >> out.state >> out.ppid;
  return out;
}

/// The state of process `pid`, or 0 once it is gone.
char state_of(pid_t pid) {
  const auto stat = proc_stat(fmt::format("/proc/{}", pid));
  return stat ? stat->state : '\0';
}

/// Every process whose parent is `parent`, with its command line.
std::map<pid_t, std::string> children_of(pid_t parent) {
  std::map<pid_t, std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = proc_stat(entry.path());
    if (!stat || stat->ppid != parent || stat->state == 'Z') continue;
    std::ifstream cmd(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    for (auto& c : cmdline) c = c == '\0' ? ' ' : c;
    out[static_cast<pid_t>(std::stoi(name))] = cmdline;
  }
  return out;
}

/// The child processes (`serve --child-fd`) of `parent`.
std::vector<pid_t> shard_children(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& [pid, cmd] : children_of(parent)) {
    if (cmd.find("--child-fd") != std::string::npos) out.push_back(pid);
  }
  return out;
}

/// The local slave (`serve --exit-with-parent`) of a master.
pid_t local_slave_of(pid_t master) {
  for (const auto& [pid, cmd] : children_of(master)) {
    if (cmd.find("--exit-with-parent") != std::string::npos) return pid;
  }
  return -1;
}

/// Waits until `found()` has `n` entries (or the limit).
template <class Find>
auto wait_for(Find found, std::size_t n, std::chrono::milliseconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto now = found();
  while (now.size() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    now = found();
  }
  return now;
}

bool alive(pid_t pid) { return std::filesystem::exists(fmt::format("/proc/{}", pid)); }

/// Waits until every process of `pids` is stopped (state T) or, `stopped` false, none is; false
/// at the limit.
bool wait_for_states(const std::vector<pid_t>& pids, bool stopped,
                     std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const auto is_stopped = [](pid_t pid) { return state_of(pid) == 'T'; };
  for (;;) {
    const bool reached = stopped ? std::all_of(pids.begin(), pids.end(), is_stopped)
                                 : std::none_of(pids.begin(), pids.end(), is_stopped);
    if (reached) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

/// "pid state, ..." for a failure's message.
std::string states(const std::vector<pid_t>& pids) {
  std::string out;
  for (const pid_t pid : pids) out += fmt::format("{} {}, ", pid, state_of(pid));
  return out;
}

/// The process records of one side, checked: `processes` of them, strands adding up to `strands`,
/// each with its own pid and its share of the connections.
void expect_processes(const json& totals, std::size_t processes, std::uint64_t strands) {
  ASSERT_EQ(totals["processes"].size(), processes) << totals["processes"];
  std::uint64_t sum = 0;
  std::set<std::int64_t> pids;
  for (const auto& p : totals["processes"]) {
    sum += p["strands"].get<std::uint64_t>();
    pids.insert(p["pid"].get<std::int64_t>());
    EXPECT_EQ(p["connections"], p["strands"]) << p;
    EXPECT_GT(p["rss_growth_bytes"].get<std::int64_t>(), 0) << p;
  }
  EXPECT_EQ(sum, strands);
  EXPECT_EQ(pids.size(), processes);
  EXPECT_GT(totals["memory_per_connection_bytes"].get<double>(), 0.0);
}

TEST(Processes, BothSidesSpreadOverProcessesAndAgree) {
  TempDir dir;
  const auto profile = dir.write("procs.xml", kProfile);
  const auto out = dir.path() / "r.json";
  Process master({VOLLEY_BINARY, "run", profile, "--local", "--processes", "3", "--set", "n=240",
                  "--set", "d=2s", "--json", out, "-q"});
  // Two children of the master (it runs the first share itself), three of the local slave.
  const auto master_children = wait_for([&] { return shard_children(master.pid()); }, 2);
  const pid_t slave = local_slave_of(master.pid());
  const auto slave_children = wait_for([&] { return shard_children(slave); }, 3);
  const auto r = master.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(master_children.size(), 2U);
  EXPECT_EQ(slave_children.size(), 3U);
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["connections_established"], 240);
  EXPECT_EQ(doc["totals"]["errors"]["total"], 0);
  EXPECT_GT(doc["totals"]["transactions"].get<std::uint64_t>(), 0U);
  ASSERT_EQ(doc["comparison"].size(), 1U);
  EXPECT_EQ(doc["comparison"][0]["master_bytes"], doc["comparison"][0]["slave_bytes"]);
  EXPECT_EQ(doc["comparison"][0]["master_ops"], doc["comparison"][0]["slave_ops"]);
  expect_processes(doc["totals"], 3, 240);
  expect_processes(doc["slaves"][0]["totals"], 3, 240);
  // The host's kernel counters, sampled by each side's parent process for all its processes.
  EXPECT_TRUE(doc["kernel"]["local"].is_object()) << doc["kernel"];
  ASSERT_EQ(doc["kernel"]["remote"].size(), 1U);
  EXPECT_TRUE(doc["kernel"]["remote"][0].is_object()) << doc["kernel"];
  // Every child was reaped: none is left, not even as a zombie.
  for (const pid_t pid : master_children) EXPECT_FALSE(alive(pid)) << pid;
  for (const pid_t pid : slave_children) EXPECT_FALSE(alive(pid)) << pid;
}

// 200,000 connections take 12 processes a side (20,000 descriptors each) and connects from
// several source addresses; the same machinery at small scale. Both sides in 12 processes, the
// connects from four 127.x addresses in turn (srcaddr=), and a slave that takes control messages
// of 4 KiB at most, so that the master's `written` list (an entry per connection, 48 to a
// frame) reaches it in 10 frames. Every connection's bytes agree, each way.
TEST(Processes, TwelveProcessesASideFromFourSourceAddressesWrittenListsInManyFrames) {
  TempDir dir;
  const auto profile = dir.write("procs.xml", R"XML(<?xml version="1.0"?>
<profile name="procs">
  <group nprocs="$n">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp srcaddr=$s"/></transaction>
    <transaction duration="1s">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="think" options="duration=300ms"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  const auto out = dir.path() / "r.json";
  Serve serve({"-q", "--processes", "12", "--max-frame-bytes", "4096"});
  Process master({VOLLEY_BINARY, "run", profile, "-P", serve.port_text(), "--processes", "12",
                  "--set", "h=127.0.0.1", "--set", "n=480", "--set", "s=127.31.7.1-127.31.7.4",
                  "--json", out, "-q"});
  // While it runs: the TCP sockets bound to each of the four addresses (this network namespace's
  // table; no other test uses 127.31.7.0/24).
  SocketAddresses tcp;
  const auto from_all = [&tcp] {
    for (int i = 1; i <= 4; ++i) {
      if (tcp.local.count(fmt::format("127.31.7.{}", i)) == 0) return false;
    }
    return true;
  };
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while (!from_all() && running(master.pid()) && std::chrono::steady_clock::now() < give_up) {
    add_socket_addresses("/proc/net/tcp", tcp);
    std::this_thread::sleep_for(5ms);
  }
  const auto r = master.wait(90s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(from_all()) << fmt::format("{}", fmt::join(tcp.local, " "));
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["errors"]["total"], 0);
  expect_processes(doc["totals"], 12, 480);
  expect_processes(doc["slaves"][0]["totals"], 12, 480);
  ASSERT_EQ(doc["comparison"].size(), 1U);
  EXPECT_EQ(doc["comparison"][0]["master_bytes"], doc["comparison"][0]["slave_bytes"]);
  // The timed step (1): every connection read exactly what the other end wrote on it, both ways.
  EXPECT_EQ(doc["windows"][1]["connections_read_exactly"], 480) << doc["windows"];
  EXPECT_EQ(doc["slaves"][0]["windows"][1]["connections_read_exactly"], 480)
      << doc["slaves"][0]["windows"];
}

// Connection storms with both sides in processes: each slave process learns, in the master's
// end_step, how many connections the master's processes together made to its own ports, so
// every step ends as soon as they are in, not after the long accept spell (4 s a step), and none
// is missing.
TEST(Processes, ConnectionStormStepsEndOnTheMastersCountAcrossProcesses) {
  TempDir dir;
  const auto profile = dir.write("storm.xml", R"XML(<?xml version="1.0"?>
<profile name="storm">
  <group nthreads="8">
    <transaction duration="500ms">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
      <flowop type="write" options="size=100"/>
      <flowop type="read" options="size=100"/>
      <flowop type="disconnect"/>
    </transaction>
    <transaction duration="500ms">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
      <flowop type="write" options="size=100"/>
      <flowop type="read" options="size=100"/>
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
)XML");
  const auto out = dir.path() / "r.json";
  const auto started = std::chrono::steady_clock::now();
  Process master({"/usr/bin/env", "VOLLEY_TRACE_CONTROL=1", VOLLEY_BINARY, "run", profile,
                  "--local", "--processes", "2", "--json", out, "-q"});
  const auto r = master.wait(60s);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  // The master only connects: the count the slave got after the last step is every connection.
  const auto connections = doc["totals"]["connections_established"].get<std::uint64_t>();
  EXPECT_GT(connections, 8U);
  EXPECT_NE(r.err.find(fmt::format(
                "step 1: slave 0 has {} TCP data connections from the master in all", connections)),
            std::string::npos)
      << r.err;
  // 1 s of steps; the long spell alone would be 8 s. A hang guard with room for a loaded machine
  // (only a hang guard with the sanitizers, which start five processes slowly).
#ifdef VOLLEY_SANITIZED
  EXPECT_LT(took, 30s) << r.err;
#else
  EXPECT_LT(took, 7s) << r.err;
#endif
}

/// Kills one child of `victim_parent(master)` mid-run: the run fails (exit 1) naming it.
void expect_killed_child_named(const std::string& side, bool slave_side) {
  TempDir dir;
  const auto profile = dir.write("procs.xml", kProfile);
  Process master({VOLLEY_BINARY, "run", profile, "--local", "--processes", "2", "--set", "n=40",
                  "--set", "d=20s", "-q"});
  const pid_t parent = slave_side ? wait_for(
                                        [&] {
                                          std::vector<pid_t> v;
                                          if (const pid_t p = local_slave_of(master.pid()); p > 0)
                                            v.push_back(p);
                                          return v;
                                        },
                                        1)
                                        .at(0)
                                  : master.pid();
  const auto children = wait_for([&] { return shard_children(parent); }, slave_side ? 2 : 1);
  ASSERT_FALSE(children.empty());
  std::this_thread::sleep_for(1500ms);  // into the timed step
  ::kill(children.back(), SIGKILL);
  const auto r = master.wait(30s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(fmt::format("{} process 2 of 2 (pid {}) was killed by signal 9", side,
                                   children.back())),
            std::string::npos)
      << r.err;
  for (const pid_t pid : children) EXPECT_FALSE(alive(pid)) << pid;
}

TEST(Processes, KilledMasterChildIsNamedAndFailsTheRun) {
  expect_killed_child_named("master", false);
}

TEST(Processes, KilledSlaveChildIsNamedAndFailsTheRun) { expect_killed_child_named("slave", true); }

TEST(Processes, KilledMasterTakesEveryChildWithIt) {
  TempDir dir;
  const auto profile = dir.write("procs.xml", kProfile);
  Process master({VOLLEY_BINARY, "run", profile, "--local", "--processes", "2", "--set", "n=40",
                  "--set", "d=20s", "-q"});
  const auto mine = wait_for([&] { return shard_children(master.pid()); }, 1);
  const pid_t slave = local_slave_of(master.pid());
  const auto theirs = wait_for([&] { return shard_children(slave); }, 2);
  ASSERT_EQ(mine.size(), 1U);
  ASSERT_EQ(theirs.size(), 2U);
  master.signal(SIGKILL);
  master.wait(5s);
  std::vector<pid_t> all = mine;
  all.insert(all.end(), theirs.begin(), theirs.end());
  all.push_back(slave);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto any_alive = [&] { return std::any_of(all.begin(), all.end(), alive); };
  while (any_alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  for (const pid_t pid : all) EXPECT_FALSE(alive(pid)) << pid;
}

// Ctrl-Z and fg as a shell's job control gives them (SIGTSTP, then SIGCONT, to the job's process
// group). The children run in sessions of their own, out of that group, and still every process
// of the run stops with it and continues with it; Ctrl-C (SIGINT to the group) then ends the run
// with every process's share.
TEST(Processes, CtrlZStopsEveryProcessAndFgContinuesThem) {
  TempDir dir;
  const auto profile = dir.write("procs.xml", kProfile);
  const auto out = dir.path() / "r.json";
  Process master({VOLLEY_BINARY, "run", profile, "--local", "--processes", "2", "--set", "n=2",
                  "--set", "d=60s", "--workers", "1", "--slave-workers", "1", "--json", out, "-q"},
                 Job::kOwnGroup);
  const auto mine = wait_for([&] { return shard_children(master.pid()); }, 1);
  const pid_t slave = local_slave_of(master.pid());
  const auto theirs = wait_for([&] { return shard_children(slave); }, 2);
  ASSERT_EQ(mine.size(), 1U);
  ASSERT_EQ(theirs.size(), 2U);
  std::vector<pid_t> all = mine;
  all.insert(all.end(), theirs.begin(), theirs.end());
  for (const pid_t child : all) EXPECT_EQ(::getsid(child), child) << "not a session of its own";
  all.push_back(slave);
  all.push_back(master.pid());
  std::this_thread::sleep_for(1500ms);  // into the timed step
  master.signal_group(SIGTSTP);
  EXPECT_TRUE(wait_for_states(all, true)) << "not every process stopped: " << states(all);
  master.signal_group(SIGCONT);
  EXPECT_TRUE(wait_for_states(all, false)) << "not every process continued: " << states(all);
  master.signal_group(SIGINT);
  const auto r = master.wait(30s);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded()) << r.err;
  EXPECT_EQ(doc["status"], "interrupted") << doc["failure"];
  EXPECT_EQ(doc["totals"]["processes"].size(), 2U) << doc["totals"]["processes"];
  EXPECT_EQ(doc["slaves"][0]["totals"]["processes"].size(), 2U) << doc["slaves"][0]["missing"];
}

}  // namespace
}  // namespace volley::test
