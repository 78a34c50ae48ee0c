#include <iostream>
#include <set>

#include <fmt/format.h>

#include "volley/cli/commands.hpp"
#include "volley/cli/profile_loader.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/host_port.hpp"
#include "volley/profile/connections.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/printer.hpp"

namespace volley::cli {

namespace {

std::optional<profile::Variables> variables_from(const CheckOptions& options) {
  std::string error;
  auto bindings = parse_bindings(options.set, error);
  if (!bindings) {
    std::cerr << "volley: " << error << "\n";
    return std::nullopt;
  }
  return profile::Variables{std::move(*bindings), environment_map()};
}

std::set<std::string> remote_hosts(const profile::Profile& p) {
  std::set<std::string> hosts;
  for (const auto& c : profile::connection_sites(p)) hosts.insert(c.remotehost);
  return hosts;
}

}  // namespace

int check_command(const CheckOptions& options) {
  auto variables = variables_from(options);
  if (!variables) return core::to_int(core::ExitCode::kBadInput);
  bool all_ok = true;
  for (const auto& path : options.profiles) {
    auto loaded = load_profile(path, *variables, options.strict);
    if (!loaded.parsed.profile) {
      all_ok = false;
      std::cout << fmt::format("{}: {} error(s)\n", path, loaded.parsed.diagnostics.error_count());
      continue;
    }
    std::uint64_t strands = 0;
    for (const auto& g : loaded.parsed.profile->groups) strands += g.nthreads;
    std::cout << fmt::format("{}: ok (profile '{}', {} group(s), {} strand(s), {} warning(s))\n",
                             path, loaded.parsed.profile->name,
                             loaded.parsed.profile->groups.size(), strands,
                             loaded.parsed.diagnostics.warning_count());
  }
  return core::to_int(all_ok ? core::ExitCode::kOk : core::ExitCode::kBadInput);
}

int dump_command(const CheckOptions& options) {
  auto variables = variables_from(options);
  if (!variables) return core::to_int(core::ExitCode::kBadInput);
  auto loaded = load_profile(options.profiles.front(), *variables, options.strict);
  if (!loaded.parsed.profile) return core::to_int(core::ExitCode::kBadInput);
  const auto& p = *loaded.parsed.profile;
  std::cout << "# master\n" << profile::to_text(p);
  // `--host [::1]` names the slave of `remotehost=::1` (the profile's brackets are removed too).
  const core::HostPort wanted = core::parse_host_port(options.host);
  const std::string& only = wanted.error.empty() && !wanted.port ? wanted.host : options.host;
  for (const auto& host : remote_hosts(p)) {
    if (!options.host.empty() && host != only) continue;
    std::cout << fmt::format("\n# slave serving remotehost '{}'\n", host)
              << profile::to_text(profile::mirror(p, host));
  }
  return core::to_int(core::ExitCode::kOk);
}

}  // namespace volley::cli
