#include "volley/engine/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "volley/profile/flowop_traits.hpp"

namespace volley::engine {

namespace fs = std::filesystem;

namespace {

/// Reads and writes go through one buffer per worker: large enough for the biggest message (so
/// a 64 KiB write is one system call) but bounded, since a 3 GiB write just loops over it. A
/// read of a stream of large messages asks for all of it (what the socket holds, up to the
/// buffer: StreamOps::ask); a read with chunk= or a UDP datagram may use the whole buffer too.
constexpr std::uint64_t kMinBuffer = std::uint64_t{256} * 1024;
constexpr std::uint64_t kMaxBuffer = std::uint64_t{4} * 1024 * 1024;

std::uint64_t largest_message(const profile::FlowopSpec& spec) {
  if (const auto* w = std::get_if<profile::WriteOp>(&spec)) return w->size.max_bytes;
  if (const auto* r = std::get_if<profile::ReadOp>(&spec)) return r->size.max_bytes;
  return 0;
}

/// See OpPlan::plain_stream.
bool plain_stream(const profile::Flowop& op) {
  if (op.common.timeout) return false;
  if (const auto* w = std::get_if<profile::WriteOp>(&op.spec))
    return !w->chunk_bytes && !w->zerocopy;
  if (const auto* r = std::get_if<profile::ReadOp>(&op.spec)) return !r->chunk_bytes;
  return false;
}

/// See OpPlan::read_stream: every flowop of `txn` is a plain read (or a sendfile's mirror) on one
/// connection.
bool reads_one_stream(const profile::Transaction& txn) {
  if (txn.rate_per_s || !std::holds_alternative<profile::Duration>(txn.bound)) return false;
  if (txn.flowops.empty()) return false;
  return std::all_of(txn.flowops.begin(), txn.flowops.end(), [&](const profile::Flowop& op) {
    const bool reads =
        std::holds_alternative<profile::ReadOp>(op.spec)
            ? plain_stream(op)
            : std::holds_alternative<profile::RecvFileOp>(op.spec) && !op.common.timeout;
    return reads && op.common.connection == txn.flowops.front().common.connection;
  });
}

void scan_one(const profile::FileSource& source, const core::SourceLocation& where,
              std::vector<FileSet>& sets, core::Diagnostics& diags) {
  if (std::any_of(sets.begin(), sets.end(), [&](const FileSet& s) { return s.source == source; })) {
    return;
  }
  FileSet set{source, {}};
  std::error_code ec;
  if (!source.is_directory) {
    const auto size = fs::file_size(source.path, ec);
    if (ec) {
      diags.error(where, fmt::format("cannot send file '{}': {}", source.path, ec.message()));
      return;
    }
    set.files.push_back(FileEntry{source.path, size});
  } else {
    fs::recursive_directory_iterator it(source.path, fs::directory_options::skip_permission_denied,
                                        ec);
    if (ec) {
      diags.error(where, fmt::format("cannot read folder '{}': {}", source.path, ec.message()));
      return;
    }
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      const auto size = it->file_size(file_ec);
      if (file_ec || size == 0) continue;
      set.files.push_back(FileEntry{it->path().string(), size});
    }
    // Directory order is arbitrary; sorted, a seed picks the same file on every run.
    std::sort(set.files.begin(), set.files.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
    if (set.files.empty()) {
      diags.error(where,
                  fmt::format("folder '{}' holds no non-empty regular file to send", source.path));
      return;
    }
  }
  sets.push_back(std::move(set));
}

}  // namespace

std::vector<FileSet> scan_file_sets(const profile::Profile& profile, core::Diagnostics& diags) {
  std::vector<FileSet> sets;
  for (const auto& group : profile.groups) {
    for (const auto& txn : group.transactions) {
      for (const auto& op : txn.flowops) {
        if (const auto* source = profile::file_source(op.spec)) {
          scan_one(*source, op.location, sets, diags);
        }
      }
    }
  }
  return sets;
}

std::optional<Plan> compile(const profile::Profile& profile, std::vector<FileSet> file_sets,
                            core::Diagnostics& diags) {
  Plan plan;
  plan.file_sets = std::move(file_sets);
  std::uint64_t largest = 0;
  bool ok = true;
  auto next_slot = [&plan](SlotInfo info) {
    plan.slots.push_back(info);
    return static_cast<std::uint32_t>(plan.slots.size() - 1);
  };
  for (std::size_t g = 0; g < profile.groups.size(); ++g) {
    const auto& group = profile.groups[g];
    GroupPlan gp{group.name, group.nthreads, {}};
    plan.total_strands += group.nthreads;
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const auto& txn = group.transactions[t];
      TxnPlan tp{txn.name,
                 txn.bound,
                 txn.rate_per_s,
                 {},
                 next_slot(SlotInfo{g, t, {}, false, SlotPart::kWhole}),
                 {}};
      const bool read_stream = reads_one_stream(txn);
      if (txn.rate_per_s)
        tp.uncorrected_slot = next_slot(SlotInfo{g, t, {}, true, SlotPart::kWhole});
      for (std::size_t f = 0; f < txn.flowops.size(); ++f) {
        const auto& op = txn.flowops[f];
        OpPlan opp{
            op.type, op.spec, op.common, next_slot(SlotInfo{g, t, f, false, SlotPart::kWhole}),
            {},      false,   {}};
        opp.plain_stream = plain_stream(op);
        if (const auto* c = profile::connection_options(op.spec);
            c != nullptr && c->protocol == profile::Protocol::kTls) {
          opp.handshakes = HandshakeSlots{next_slot(SlotInfo{g, t, f, false, SlotPart::kHandshake}),
                                          next_slot(SlotInfo{g, t, f, false, SlotPart::kResumed})};
        }
        opp.read_stream = read_stream;
        if (const auto* w = std::get_if<profile::WriteOp>(&op.spec)) opp.zerocopy = w->zerocopy;
        plan.zerocopy = plan.zerocopy || opp.zerocopy;
        largest = std::max(largest, largest_message(op.spec));
        if (const auto* source = profile::file_source(op.spec)) {
          const auto it = std::find_if(plan.file_sets.begin(), plan.file_sets.end(),
                                       [&](const FileSet& s) { return s.source == *source; });
          if (it == plan.file_sets.end() || it->files.empty()) {
            diags.error(op.location, fmt::format("no file sizes are known for '{}'", source->path));
            ok = false;
          } else {
            opp.file_set = static_cast<std::size_t>(it - plan.file_sets.begin());
          }
        }
        tp.ops.push_back(std::move(opp));
      }
      gp.txns.push_back(std::move(tp));
    }
    plan.txn_count = std::max(plan.txn_count, gp.txns.size());
    plan.groups.push_back(std::move(gp));
  }
  plan.connections = profile::connection_sites(profile);
  for (const auto& c : plan.connections) {
    if (c.opens == profile::OnConnection::kAccepts && profile.groups[c.group].nthreads > 0) {
      plan.accept_ports.insert(c.port.value_or(0));
    }
  }
  plan.io_buffer_bytes = std::clamp(largest, kMinBuffer, kMaxBuffer);
  if (!ok) return std::nullopt;
  return plan;
}

std::vector<std::size_t> timed_steps(const Plan& plan) {
  std::vector<std::size_t> steps;
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    for (const auto& group : plan.groups) {
      if (t < group.txns.size() && group.strands > 0 &&
          std::holds_alternative<profile::Duration>(group.txns[t].bound)) {
        steps.push_back(t);
        break;
      }
    }
  }
  if (steps.empty()) {
    for (std::size_t t = 0; t < plan.txn_count; ++t) steps.push_back(t);
  }
  return steps;
}

transport::TlsUses tls_uses(const Plan& plan) {
  transport::TlsUses uses;
  const auto add = [](std::vector<profile::TlsOptions>& into, const profile::TlsOptions& o) {
    if (std::find(into.begin(), into.end(), o) == into.end()) into.push_back(o);
  };
  for (const auto& group : plan.groups) {
    if (group.strands == 0) continue;
    for (const auto& txn : group.txns) {
      for (const auto& op : txn.ops) {
        if (const auto* c = std::get_if<profile::ConnectOp>(&op.spec)) {
          if (c->connection.protocol == profile::Protocol::kTls)
            add(uses.connects, c->connection.tls);
        } else if (const auto* a = std::get_if<profile::AcceptOp>(&op.spec)) {
          if (a->connection.protocol == profile::Protocol::kTls)
            add(uses.accepts, a->connection.tls);
        }
      }
    }
  }
  return uses;
}

std::string group_display_name(const GroupPlan& g, std::size_t index) {
  return g.name.empty() ? fmt::format("group{}", index) : g.name;
}

std::string txn_display_name(const TxnPlan& t, std::size_t index) {
  return t.name.empty() ? fmt::format("txn{}", index + 1) : t.name;
}

}  // namespace volley::engine
