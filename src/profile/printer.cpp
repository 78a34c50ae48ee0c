#include "volley/profile/printer.hpp"

#include <fmt/format.h>

#include "flowop_specs.hpp"
#include "volley/core/units.hpp"

namespace volley::profile {
namespace {

using core::format_duration;

std::string common_text(const FlowopCommon& c) {
  std::string out;
  if (c.count != 1) out += fmt::format(" count={}", c.count);
  if (c.connection != 0) out += fmt::format(" conn={}", c.connection);
  if (c.canfail) out += " canfail";
  if (c.timeout) out += fmt::format(" timeout={}", format_duration(*c.timeout));
  return out;
}

std::string quoted_name(const std::string& name) {
  return name.empty() ? std::string() : fmt::format(" \"{}\"", name);
}

}  // namespace

std::string to_text(const Profile& profile) {
  std::string out = fmt::format("profile{}", quoted_name(profile.name));
  if (!profile.file.empty()) out += fmt::format(" ({})", profile.file);
  out += '\n';
  for (std::size_t g = 0; g < profile.groups.size(); ++g) {
    const Group& group = profile.groups[g];
    out += fmt::format("  group {}{}: {}={}\n", g + 1, quoted_name(group.name),
                       group.from_nprocs ? "nprocs" : "nthreads", group.nthreads);
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const Transaction& txn = group.transactions[t];
      std::string bound;
      if (const auto* it = std::get_if<Iterations>(&txn.bound)) {
        bound = fmt::format("iterations={}", it->count);
      } else {
        bound = fmt::format("duration={}", format_duration(std::get<Duration>(txn.bound).length));
      }
      if (txn.rate_per_s) bound += fmt::format(" rate={}/s", *txn.rate_per_s);
      out += fmt::format("    transaction {}{}: {}\n", t + 1, quoted_name(txn.name), bound);
      for (const Flowop& op : txn.flowops) {
        out += fmt::format("      {}{}{}\n", op.type, detail::spec_text(op.spec),
                           common_text(op.common));
      }
    }
  }
  return out;
}

}  // namespace volley::profile
