#include "support/profile_generator.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace volley::test {

namespace {

using std::chrono::milliseconds;

constexpr const char* kHosts[] = {"127.0.0.1", "127.0.0.2"};
/// Bytes of the files write_generator_files() makes (for the time estimate of sendfile).
constexpr std::uint64_t kFileBytes = 100 * 1024;
constexpr std::uint64_t kDirFileBytes[] = {1000, 50 * 1024, 200 * 1024 + 7};
/// What an iteration-bound step may take at most by the estimate below; keeps each run short.
constexpr double kStepBudgetMs = 150;
/// The most system calls one operation may take on the slave's side (size / rsize): rsize=1 on
/// 200 KB was 204,800 calls per operation, seconds per step on a loaded machine, beyond any
/// estimate's reach. Smaller rsizes are raised to keep within it.
constexpr std::uint64_t kMaxCallsPerOp = 2048;
/// What one such call costs, for the estimate (a loaded two-core machine).
constexpr double kCallMs = 0.002;
/// A timed step has room for at least this many estimated passes over its body. Whether a step
/// with room for one or two completes any is the machine's load, not the profile's (seed 314: a
/// 100 ms step whose one pass moved 600 KB in 100-byte writes took 46 to 97 ms beside a soak,
/// and more beside builds): the profile would be valid and its outcome a coin.
constexpr double kPassesPerTimedStep = 10;
/// Linux's shortest delayed-ACK timer (TCP_DELACK_MIN). Without tcp_nodelay a small write waits
/// for the ACK of the data before it (Nagle), and a receiver that sends nothing back delays that
/// ACK by this much: the classic stall, correct and correctly measured, that the estimate counts.
constexpr double kDelayedAckMs = 40;
/// A timed step has room for at least this many passes' delayed-ACK stalls.
constexpr double kStallsPerTimedStep = 3;

/// splitmix64: a portable stream (equal seeds give equal profiles with any standard library).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (the modulo bias is irrelevant here).
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
  bool chance(unsigned percent) { return next() % 100 < percent; }
  template <class T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[next() % N];
  }

 private:
  std::uint64_t state_;
};

struct Connection {
  std::uint32_t id = 0;  ///< 0: the strand's anonymous connection
  std::string host;
  bool master_accepts = false;
  bool nodelay = false;  ///< tcp_nodelay on its connect or accept
  bool lasting = true;   ///< open across the repeats of a body (not opened and closed in it)
};

/// One data operation of a body on a connection, in the order the master runs them.
struct Use {
  std::uint32_t id = 0;
  bool nodelay = false;
  bool lasting = true;
  bool master_sends = false;  ///< write/send/sendfile; the slave sends for read/recv
  std::uint64_t count = 1;
};

/// One transaction of one group, with what the time estimate needs.
struct Txn {
  std::vector<std::string> flowops;  ///< rendered <flowop .../> elements
  std::optional<milliseconds> duration;
  std::uint64_t iterations = 1;
  double iteration_ms = 0;  ///< estimated cost of one pass over the body
  std::vector<Use> uses;    ///< for the delayed-ACK stalls of one pass
  std::string attributes;   ///< name=, rate=
};

struct Group {
  std::uint64_t strands = 1;
  bool nprocs = false;
  std::string name;
  std::vector<Txn> txns;
};

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : random_(seed) {}

  GeneratedProfile run(std::uint64_t seed) {
    GeneratedProfile out;
    out.seed = seed;
    const bool two_hosts = random_.chance(35);
    const std::uint64_t n_groups = random_.between(1, 3);
    std::vector<Group> groups;
    for (std::uint64_t g = 0; g < n_groups; ++g) groups.push_back(make_group(g, two_hosts));
    out.two_slaves = hosts_used_.size() > 1;
    out.nominal = nominal(groups);
    out.text = render(seed, groups);
    return out;
  }

 private:
  Group make_group(std::uint64_t index, bool two_hosts) {
    Group group;
    group.strands = random_.chance(10) ? 6 : random_.between(1, 4);
    group.nprocs = random_.chance(10);
    if (random_.chance(30)) group.name = fmt::format("g{}", index);
    next_conn_id_ = 1;
    // Connections that stay open from the set-up transaction to the tear-down.
    std::vector<Connection> open;
    const std::uint64_t n_open = random_.between(random_.chance(15) ? 0 : 1, 3);
    for (std::uint64_t i = 0; i < n_open; ++i) {
      const bool anonymous = i == 0 && random_.chance(50);
      open.push_back(new_connection(anonymous ? 0 : fresh_id(), two_hosts));
    }
    const bool anonymous_is_open = !open.empty() && open.front().id == 0;

    Txn setup;
    for (auto& c : open) {
      if (random_.chance(10)) add_think_or_nop(setup);
      add_open(setup, c);
    }
    if (setup.flowops.empty()) add_think_or_nop(setup);
    group.txns.push_back(std::move(setup));

    const std::uint64_t n_body = random_.between(1, 3);
    for (std::uint64_t b = 0; b < n_body; ++b) {
      Txn body;
      const std::uint64_t items = random_.between(1, 5);
      bool cycled = false;
      for (std::uint64_t i = 0; i < items; ++i) {
        const auto roll = random_.between(0, 99);
        if (roll < 55 && !open.empty()) {
          add_io(body, open[random_.next() % open.size()]);
        } else if (roll < 65 && !open.empty()) {
          add_sendfile(body, open[random_.next() % open.size()]);
        } else if (roll < 82 && !cycled) {
          // A connection opened and closed within one pass, so every repeat of the body finds
          // it closed again: uperf's connect/disconnect-per-iteration pattern.
          cycled = true;
          const bool anonymous = !anonymous_is_open && random_.chance(50);
          Connection c = new_connection(anonymous ? 0 : fresh_id(), two_hosts);
          c.lasting = false;
          add_open(body, c);
          const std::uint64_t uses = random_.between(0, 3);
          for (std::uint64_t u = 0; u < uses; ++u) add_io(body, c);
          add_flowop(body, "disconnect", conn_option(c), 0.05);
        } else {
          add_think_or_nop(body);
        }
      }
      // The stalls are the kernel's timer, not the machine's load, so a timed step needs room
      // for a few of them rather than ten.
      const double stalls_ms = kDelayedAckMs * static_cast<double>(delayed_ack_stalls(body.uses));
      const double room_ms =
          body.iteration_ms * kPassesPerTimedStep + stalls_ms * kStallsPerTimedStep;
      body.iteration_ms += stalls_ms;
      if (random_.chance(45)) {
        const auto picked = random_.pick({100, 150, 200, 300});
        // Rounded up to 50 ms; never shorter than picked (a value change only: the random
        // stream is drawn as before, so every other seed's profile stays the same).
        const auto room = static_cast<std::int64_t>(std::ceil(room_ms / 50.0) * 50.0);
        body.duration = milliseconds(std::max<std::int64_t>(picked, room));
      } else {
        body.iterations = random_.between(1, 40);
        const double per_strand = std::max(1.0, static_cast<double>(group.strands) / 2.0);
        const double fits = kStepBudgetMs / std::max(0.001, body.iteration_ms * per_strand);
        body.iterations = std::clamp<std::uint64_t>(
            body.iterations, 1, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(fits)));
      }
      if (random_.chance(20)) body.attributes += fmt::format(" name=\"body{}\"", b);
      if (random_.chance(10)) {
        // A duration step's rate is checked (the run fails when it falls behind: docs/results.md,
        // "The rate rule"), so it is one a loaded machine under the sanitizers still keeps: a
        // period of at least 50 ms and four passes' estimate, longer than the stalls such a
        // machine has. An iterations step only takes longer at 2k a second.
        const double period_ms = std::max(50.0, 4.0 * body.iteration_ms);
        body.attributes += body.duration ? fmt::format(" rate=\"{:.3g}\"", 1000.0 / period_ms)
                                         : std::string(" rate=\"2k\"");
      }
      group.txns.push_back(std::move(body));
    }

    if (!open.empty() && random_.chance(70)) {
      Txn teardown;
      for (std::size_t i = open.size(); i-- > 0;)
        add_flowop(teardown, "disconnect", conn_option(open[i]), 0.05);
      group.txns.push_back(std::move(teardown));
    }
    return group;
  }

  std::uint32_t fresh_id() {
    // Ids are unique within the group, sometimes large (any u32 but 0 is valid).
    const std::uint32_t id = random_.chance(10)
                                 ? static_cast<std::uint32_t>(random_.between(1000, 4000000000U))
                                 : next_conn_id_;
    ++next_conn_id_;
    return id;
  }

  Connection new_connection(std::uint32_t id, bool two_hosts) {
    Connection c;
    c.id = id;
    c.host = two_hosts ? random_.pick(kHosts) : kHosts[0];
    c.master_accepts = random_.chance(20);
    hosts_used_.insert(c.host);
    return c;
  }

  static std::string conn_option(const Connection& c) {
    return c.id == 0 ? std::string() : fmt::format("conn={}", c.id);
  }

  void add_flowop(Txn& txn, const std::string& type, const std::string& options, double cost_ms) {
    txn.flowops.push_back(fmt::format(R"(<flowop type="{}" options="{}"/>)", type, options));
    txn.iteration_ms += cost_ms;
  }

  void add_open(Txn& txn, Connection& c) {
    std::string options = fmt::format("remotehost={} protocol=tcp", c.host);
    if (c.id != 0) options += " " + conn_option(c);
    c.nodelay = random_.chance(30);
    if (c.nodelay) options += " tcp_nodelay";
    if (random_.chance(10)) options += random_.chance(50) ? " wndsz=64k" : " wndsz=256k";
    add_flowop(txn, c.master_accepts ? "accept" : "connect", options, 0.5);
  }

  std::string size_spec(std::uint64_t& max_bytes) {
    static constexpr std::uint64_t kFixed[] = {1,    7,    64,    100,   512,
                                               1024, 4096, 16384, 65536, 204800};
    if (random_.chance(70)) {
      max_bytes = random_.pick(kFixed);
      return std::to_string(max_bytes);
    }
    static constexpr std::uint64_t kLow[] = {1, 16, 64, 1000};
    static constexpr std::uint64_t kHigh[] = {128, 4096, 65536};
    const std::uint64_t low = random_.pick(kLow);
    const std::uint64_t high = std::max(low, random_.pick(kHigh));
    max_bytes = high;
    return fmt::format("rand({},{})", low, high);
  }

  void add_io(Txn& txn, const Connection& c) {
    static constexpr const char* kTypes[] = {"write", "read", "send", "recv"};
    const std::string type = random_.pick(kTypes);
    std::uint64_t max_bytes = 0;
    std::string options = "size=" + size_spec(max_bytes);
    std::uint64_t per_call = max_bytes;
    if (random_.chance(15)) {
      const auto picked = static_cast<std::uint64_t>(random_.pick({1, 100, 1024, 8192}));
      per_call = std::max<std::uint64_t>(picked, (max_bytes + kMaxCallsPerOp - 1) / kMaxCallsPerOp);
      options += fmt::format(" rsize={}", per_call);
    }
    std::uint64_t count = 1;
    if (random_.chance(20)) {
      count = random_.between(2, 3);
      options += fmt::format(" count={}", count);
    }
    if (c.id != 0) options += " " + conn_option(c);
    if (random_.chance(10)) options += " canfail";
    if (random_.chance(5)) options += " timeout=5s";
    const double calls =
        static_cast<double>((max_bytes + per_call - 1) / std::max<std::uint64_t>(1, per_call));
    add_flowop(txn, type, options,
               static_cast<double>(count) *
                   (0.05 + static_cast<double>(max_bytes) / 1e5 + calls * kCallMs));
    txn.uses.push_back({c.id, c.nodelay, c.lasting, type == "write" || type == "send", count});
  }

  void add_sendfile(Txn& txn, const Connection& c) {
    std::string options;
    std::string type = "sendfile";
    std::uint64_t bytes = kFileBytes;
    const auto roll = random_.between(0, 2);
    if (roll == 0) {
      options = "file=$file";
    } else if (roll == 1) {
      options = "dir=$dir";
      bytes = kDirFileBytes[2];
    } else {
      type = "sendfilev";
      const std::uint64_t nfiles = random_.between(1, 3);
      options = fmt::format("dir=$dir nfiles={}", nfiles);
      bytes = nfiles * kDirFileBytes[2];
    }
    if (random_.chance(50)) options += fmt::format(" size={}", random_.pick({4096, 65536}));
    if (c.id != 0) options += " " + conn_option(c);
    if (random_.chance(10)) options += " canfail";
    add_flowop(txn, type, options, 0.1 + static_cast<double>(bytes) / 1e5);
    txn.uses.push_back({c.id, c.nodelay, c.lasting, true, 1});
  }

  /// How many of one pass's operations may wait a delayed ACK: on a connection without
  /// tcp_nodelay, each that sends the same way as the one before it on that connection (nothing
  /// came back to carry the ACK), counting the wrap to the next pass on a connection that stays
  /// open. An operation the other way carries the ACK with its data.
  static std::uint64_t delayed_ack_stalls(const std::vector<Use>& uses) {
    std::set<std::uint32_t> ids;
    for (const auto& u : uses) ids.insert(u.id);
    std::uint64_t stalls = 0;
    for (const std::uint32_t id : ids) {
      std::vector<bool> sends;  // who sends, in order, each repeat of count apart
      bool nodelay = false;
      bool lasting = true;
      for (const auto& u : uses) {
        if (u.id != id) continue;
        nodelay = u.nodelay;
        lasting = u.lasting;
        sends.insert(sends.end(), u.count, u.master_sends);
      }
      if (nodelay) continue;
      for (std::size_t i = 1; i < sends.size(); ++i) {
        if (sends[i] == sends[i - 1]) ++stalls;
      }
      if (lasting && sends.front() == sends.back()) ++stalls;
    }
    return stalls;
  }

  void add_think_or_nop(Txn& txn) {
    if (random_.chance(40)) {
      std::string options = random_.chance(20) ? "count=2" : "";
      add_flowop(txn, "nop", options, 0.01);
      return;
    }
    static constexpr const char* kThinks[] = {"50us", "200us", "1ms", "3ms"};
    static constexpr double kThinkMs[] = {0.05, 0.2, 1, 3};
    const std::size_t which = random_.next() % 4;
    std::string options = fmt::format("duration={}", kThinks[which]);
    if (which <= 2 && random_.chance(25)) options += " busy";
    add_flowop(txn, "think", options, kThinkMs[which] + 0.05);
  }

  static milliseconds nominal(const std::vector<Group>& groups) {
    std::size_t steps = 0;
    for (const auto& g : groups) steps = std::max(steps, g.txns.size());
    double total_ms = 0;
    for (std::size_t t = 0; t < steps; ++t) {
      double longest = 0;
      for (const auto& g : groups) {
        if (t >= g.txns.size()) continue;
        const Txn& txn = g.txns[t];
        const double per_strand = std::max(1.0, static_cast<double>(g.strands) / 2.0);
        const double ms = txn.duration
                              ? static_cast<double>(txn.duration->count())
                              : txn.iteration_ms * static_cast<double>(txn.iterations) * per_strand;
        longest = std::max(longest, ms);
      }
      total_ms += longest + 20;  // the barrier's round trips
    }
    return milliseconds(static_cast<std::int64_t>(total_ms) + 1);
  }

  static std::string render(std::uint64_t seed, const std::vector<Group>& groups) {
    std::string out =
        fmt::format("<?xml version=\"1.0\"?>\n<profile name=\"generated seed {}\">\n", seed);
    for (const auto& g : groups) {
      out += fmt::format("  <group {}=\"{}\"{}>\n", g.nprocs ? "nprocs" : "nthreads", g.strands,
                         g.name.empty() ? "" : fmt::format(" name=\"{}\"", g.name));
      for (const auto& t : g.txns) {
        const std::string bound = t.duration ? fmt::format("duration=\"{}ms\"", t.duration->count())
                                             : fmt::format("iterations=\"{}\"", t.iterations);
        out += fmt::format("    <transaction {}{}>\n", bound, t.attributes);
        for (const auto& f : t.flowops) out += "      " + f + "\n";
        out += "    </transaction>\n";
      }
      out += "  </group>\n";
    }
    out += "</profile>\n";
    return out;
  }

  Random random_;
  std::uint32_t next_conn_id_ = 1;
  std::set<std::string> hosts_used_;
};

}  // namespace

GeneratedProfile generate_profile(std::uint64_t seed) { return Generator(seed).run(seed); }

std::vector<std::string> write_generator_files(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  auto write = [](const fs::path& path, std::uint64_t bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'f');
  };
  write(folder / "file.bin", kFileBytes);
  for (std::size_t i = 0; i < std::size(kDirFileBytes); ++i) {
    write(folder / "files" / fmt::format("f{}.bin", i), kDirFileBytes[i]);
  }
  return {"--set", fmt::format("file={}", (folder / "file.bin").string()), "--set",
          fmt::format("dir={}", (folder / "files").string())};
}

}  // namespace volley::test
