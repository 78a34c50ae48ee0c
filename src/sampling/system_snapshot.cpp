#include "volley/sampling/system_snapshot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <map>
#include <set>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "volley/sampling/text_file.hpp"

extern char** environ;  // POSIX: the process environment, passed on to spawned commands

namespace volley::sampling {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxCommandOutput = 16u << 20;
/// A helper (tc) that has not finished in this time is killed and counts as missing: a hung tool
/// must not hold up a run, nor a slave's stop.
constexpr int kCommandTimeoutMs = 1000;

/// Sysctls that hold secrets (tcp_fastopen_key, netdev_rss_key, ...): they never enter a
/// snapshot, which travels to the master and into result documents.
bool is_secret_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("key") != std::string::npos || lower.find("secret") != std::string::npos;
}

// Names of the entries of `dir` (sorted); nullopt when it cannot be listed.
std::optional<std::vector<std::string>> list_dir(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return std::nullopt;
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool is_cpu_dir_name(std::string_view name) {
  return name.size() > 3 && name.starts_with("cpu") && parse_u64(name.substr(3)).has_value();
}

// Orders "cpu2" before "cpu10".
bool cpu_name_less(const std::string& a, const std::string& b) {
  return parse_u64(std::string_view(a).substr(3)) < parse_u64(std::string_view(b).substr(3));
}

// Collects leaves while recording every source that could not be read.
class SnapshotReader {
 public:
  SnapshotReader(fs::path root, const CommandRunner& run) : root_(std::move(root)), run_(run) {}

  json read() {
    json s = json::object();
    s["schema_version"] = 1;
    s["kernel"] = {{"osrelease", text("proc/sys/kernel/osrelease", "kernel.osrelease")},
                   {"ostype", text("proc/sys/kernel/ostype", "kernel.ostype")},
                   {"version", text("proc/version", "kernel.version")}};
    s["hostname"] = text("proc/sys/kernel/hostname", "hostname");
    s["cpu"] = cpu();
    s["memory"] = memory();
    s["sysctl"] = sysctls();
    s["interfaces"] = interfaces();
    s["missing"] = missing_;  // std::set: sorted, unique
    return s;
  }

 private:
  // Trimmed file text, or null (and `key` recorded as missing).
  json text(const fs::path& relative, const std::string& key) {
    if (auto t = read_text_file(root_ / relative)) return normalize_whitespace(*t);
    return absent(key);
  }
  // An integer file, or null (and `key` recorded as missing).
  json integer(const fs::path& relative, const std::string& key) {
    if (auto t = read_text_file(root_ / relative)) {
      if (auto v = parse_i64(trim(*t))) return *v;
    }
    return absent(key);
  }
  json absent(const std::string& key) {
    missing_.insert(key);
    return nullptr;
  }

  json cpu() {
    json c = json::object();
    c["model"] = nullptr;
    c["count"] = nullptr;
    if (const auto info = read_text_file(root_ / "proc/cpuinfo")) {
      std::int64_t count = 0;
      std::optional<std::string> model;
      for (const auto line : split_lines(*info)) {
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const auto key = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (key == "processor") ++count;
        // x86 "model name"; arm and others "Processor"/"cpu model"/"cpu".
        if (!model &&
            (key == "model name" || key == "Processor" || key == "cpu model" || key == "cpu") &&
            !value.empty()) {
          model = std::string(value);
        }
      }
      c["count"] = count > 0 ? json(count) : absent("cpu.count");
      c["model"] = model ? json(*model) : absent("cpu.model");
    } else {
      absent("cpu.count");
      absent("cpu.model");
    }
    c["online"] = text("sys/devices/system/cpu/online", "cpu.online");
    frequencies(c);
    return c;
  }

  void frequencies(json& c) {
    const fs::path base = root_ / "sys/devices/system/cpu";
    std::vector<std::string> cpus;
    if (const auto names = list_dir(base)) {
      for (const auto& n : *names) {
        std::error_code ec;
        if (is_cpu_dir_name(n) && fs::is_directory(base / n / "cpufreq", ec)) cpus.push_back(n);
      }
    }
    if (cpus.empty()) {
      c["governor"] = absent("cpu.governor");
      c["cur_freq_khz"] = absent("cpu.cur_freq_khz");
      return;
    }
    std::sort(cpus.begin(), cpus.end(), cpu_name_less);
    json governor = json::object();
    json freq = json::object();
    const fs::path rel = "sys/devices/system/cpu";
    for (const auto& n : cpus) {
      governor[n] = text(rel / n / "cpufreq/scaling_governor", "cpu.governor." + n);
      freq[n] = integer(rel / n / "cpufreq/scaling_cur_freq", "cpu.cur_freq_khz." + n);
    }
    c["governor"] = std::move(governor);
    c["cur_freq_khz"] = std::move(freq);
  }

  json memory() {
    if (const auto info = read_text_file(root_ / "proc/meminfo")) {
      for (const auto line : split_lines(*info)) {
        const auto fields = split_fields(line);
        if (fields.size() >= 2 && fields[0] == "MemTotal:") {
          if (const auto kb = parse_u64(fields[1])) return json{{"total_kb", *kb}};
        }
      }
    }
    return json{{"total_kb", absent("memory.total_kb")}};
  }

  json sysctls() {
    json out = json::object();
    const auto add_dir = [&](const char* dir, const char* prefix, std::string_view name_prefix,
                             const char* missing_key) {
      const auto names = list_dir(root_ / dir);
      if (!names) {
        absent(missing_key);
        return;
      }
      for (const auto& n : *names) {
        std::error_code ec;
        if (!n.starts_with(name_prefix) || is_secret_name(n) ||
            !fs::is_regular_file(root_ / dir / n, ec)) {
          continue;
        }
        const std::string key = std::string(prefix) + n;
        out[key] = text(fs::path(dir) / n, "sysctl." + key);
      }
    };
    add_dir("proc/sys/net/core", "net.core.", "", "sysctl.net.core");
    add_dir("proc/sys/net/ipv4", "net.ipv4.", "tcp_", "sysctl.net.ipv4.tcp");
    return out;
  }

  json interfaces() {
    const auto qdiscs = qdisc_by_device();  // first, so a missing tc is recorded either way
    const auto names = list_dir(root_ / "sys/class/net");
    if (!names) return absent("interfaces");
    const auto irqs = interrupt_names();
    json out = json::object();
    for (const auto& name : *names) {
      std::error_code ec;
      if (!fs::is_directory(root_ / "sys/class/net" / name, ec)) continue;  // e.g. bonding_masters
      out[name] = interface(name, irqs, qdiscs);
    }
    return out;
  }

  json interface(const std::string& name,
                 const std::optional<std::map<std::string, std::vector<std::string>>>& irqs,
                 const std::optional<std::map<std::string, std::string>>& qdiscs) {
    const fs::path dir = fs::path("sys/class/net") / name;
    const std::string key = "interfaces." + name + ".";
    json i = json::object();
    i["mtu"] = integer(dir / "mtu", key + "mtu");
    i["tx_queue_len"] = integer(dir / "tx_queue_len", key + "tx_queue_len");
    i["operstate"] = text(dir / "operstate", key + "operstate");
    i["speed_mbps"] = integer(dir / "speed", key + "speed_mbps");
    if (const auto queues = list_dir(root_ / dir / "queues")) {
      std::int64_t rx = 0;
      std::int64_t tx = 0;
      json rps = json::object();
      json xps = json::object();
      for (const auto& q : *queues) {
        if (q.starts_with("rx-")) {
          ++rx;
          rps[q] = text(dir / "queues" / q / "rps_cpus", fmt::format("{}rps_cpus.{}", key, q));
        } else if (q.starts_with("tx-")) {
          ++tx;
          xps[q] = text(dir / "queues" / q / "xps_cpus", fmt::format("{}xps_cpus.{}", key, q));
        }
      }
      i["rx_queues"] = rx;
      i["tx_queues"] = tx;
      i["rps_cpus"] = std::move(rps);
      i["xps_cpus"] = std::move(xps);
    } else {
      i["rx_queues"] = absent(key + "rx_queues");
      i["tx_queues"] = absent(key + "tx_queues");
      i["rps_cpus"] = absent(key + "rps_cpus");
      i["xps_cpus"] = absent(key + "xps_cpus");
    }
    if (!irqs) {
      i["irqs"] = absent(key + "irqs");
    } else {
      json affinity = json::object();
      for (const auto& [irq, labels] : *irqs) {
        if (!names_interface(labels, name)) continue;
        affinity[irq] = text(fs::path("proc/irq") / irq / "smp_affinity_list",
                             fmt::format("{}irqs.{}", key, irq));
      }
      i["irqs"] = std::move(affinity);
    }
    if (qdiscs) {
      const auto it = qdiscs->find(name);
      i["qdisc"] = it != qdiscs->end() ? json(it->second) : json(nullptr);
    }
    return i;
  }

  // IRQ number -> the description fields after its per-CPU counts; nullopt if unreadable.
  std::optional<std::map<std::string, std::vector<std::string>>> interrupt_names() {
    const auto text_ = read_text_file(root_ / "proc/interrupts");
    if (!text_) return std::nullopt;
    const auto lines = split_lines(*text_);
    if (lines.empty()) return std::nullopt;
    const std::size_t cpus = split_fields(lines[0]).size();  // "CPU0 CPU1 ..."
    std::map<std::string, std::vector<std::string>> out;
    for (std::size_t l = 1; l < lines.size(); ++l) {
      const auto fields = split_fields(lines[l]);
      if (fields.empty() || !fields[0].ends_with(':')) continue;
      const auto irq = fields[0].substr(0, fields[0].size() - 1);
      if (!parse_u64(irq)) continue;  // NMI, LOC, ...
      std::vector<std::string> labels;
      for (std::size_t f = 1 + cpus; f < fields.size(); ++f) labels.emplace_back(fields[f]);
      out.emplace(std::string(irq), std::move(labels));
    }
    return out;
  }

  // An IRQ belongs to `ifname` when a description field is the name or starts with the name
  // followed by a separator ("eth0-TxRx-3", "eth0:lsc", "eth0@pci").
  static bool names_interface(const std::vector<std::string>& labels, const std::string& ifname) {
    if (ifname == "lo") return false;
    return std::any_of(labels.begin(), labels.end(), [&ifname](const std::string& label) {
      if (!label.starts_with(ifname)) return false;
      if (label.size() == ifname.size()) return true;
      const char next = label[ifname.size()];
      return next == '-' || next == '_' || next == ':' || next == '@' || next == '.';
    });
  }

  // `tc qdisc show` output grouped by device ("fq_codel 0: root refcnt 2 limit 10240p ...").
  std::optional<std::map<std::string, std::string>> qdisc_by_device() {
    std::optional<std::string> output;
    if (run_) output = run_({"tc", "qdisc", "show"});
    if (!output) {
      absent("qdisc");
      return std::nullopt;
    }
    std::map<std::string, std::string> out;
    std::string* current = nullptr;
    for (const auto line : split_lines(*output)) {
      const auto fields = split_fields(line);
      if (fields.empty()) continue;
      if (fields[0] == "qdisc") {
        std::string device;
        std::string description;
        for (std::size_t f = 1; f < fields.size(); ++f) {
          if (fields[f] == "dev" && f + 1 < fields.size()) {
            device = std::string(fields[++f]);
            continue;
          }
          if (!description.empty()) description.push_back(' ');
          description.append(fields[f]);
        }
        current = device.empty() ? nullptr : &out[device];
        if (current != nullptr) {
          if (!current->empty()) current->append("; ");
          current->append(description);
        }
      } else if (current != nullptr) {
        current->push_back(' ');
        current->append(normalize_whitespace(line));
      }
    }
    return out;
  }

  fs::path root_;
  const CommandRunner& run_;
  std::set<std::string> missing_;
};

void flatten(const json& value, const std::string& prefix, std::map<std::string, json>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) {
      flatten(child, prefix.empty() ? key : fmt::format("{}.{}", prefix, key), out);
    }
    return;
  }
  out.emplace(prefix, value);
}

std::string show(const std::optional<json>& v) {
  if (!v) return "(absent)";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> run_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return std::nullopt;
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (rc != 0) return std::nullopt;

  std::string out;
  bool too_big = false;
  bool timed_out = false;
  char buffer[4096];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kCommandTimeoutMs);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() + static_cast<std::size_t>(n) > kMaxCommandOutput) {
      too_big = true;
      break;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  read_end.reset();  // a child still writing gets EPIPE and exits
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  if (too_big || timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

nlohmann::json read_system_snapshot(const std::filesystem::path& root) {
  std::error_code ec;
  const bool real_root = fs::equivalent(root, "/", ec);
  const CommandRunner run = real_root ? CommandRunner(run_command) : CommandRunner();
  return read_system_snapshot(root, run);
}

nlohmann::json read_system_snapshot(const std::filesystem::path& root, const CommandRunner& run) {
  return SnapshotReader(root, run).read();
}

std::string SnapshotDifference::to_string() const {
  return key + ": " + show(before) + " -> " + show(after);
}

std::vector<SnapshotDifference> diff_snapshots(const nlohmann::json& a, const nlohmann::json& b) {
  std::map<std::string, json> left;
  std::map<std::string, json> right;
  flatten(a, "", left);
  flatten(b, "", right);
  std::vector<SnapshotDifference> out;
  auto l = left.begin();
  auto r = right.begin();
  while (l != left.end() || r != right.end()) {
    if (r == right.end() || (l != left.end() && l->first < r->first)) {
      out.push_back({l->first, l->second, std::nullopt});
      ++l;
    } else if (l == left.end() || r->first < l->first) {
      out.push_back({r->first, std::nullopt, r->second});
      ++r;
    } else {
      if (l->second != r->second) out.push_back({l->first, l->second, r->second});
      ++l;
      ++r;
    }
  }
  return out;
}

}  // namespace volley::sampling
