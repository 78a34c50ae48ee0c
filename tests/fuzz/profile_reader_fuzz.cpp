// Fuzz target: a profile as the slave receives it from any peer, and as `volley run`/`check` read
// a file. The bytes are the XML text; it goes through everything a load does: lenient XML repair
// (bare attribute values, stray end tags), variable expansion (a few bound names, so `$h` and
// `${n}` resolve and others do not), parsing, validation, mirroring for every remotehost, the
// printer, and compiling the slave's plan. Any crash, hang or runaway allocation is a finding.
#include <map>
#include <set>
#include <string>

#include "fuzz_input.hpp"
#include "volley/engine/plan.hpp"
#include "volley/profile/flowop_hosts.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/profile/printer.hpp"

namespace {

using namespace volley;

/// The sizes the master would send for every sendfile source (the slave has no files): one file
/// per source, so compile() runs its sendfile paths without touching the disk.
std::vector<engine::FileSet> made_up_file_sets(const profile::Profile& p) {
  std::set<std::pair<std::string, bool>> seen;
  std::vector<engine::FileSet> sets;
  auto add = [&](const profile::FileSource& s) {
    if (seen.emplace(s.path, s.is_directory).second) {
      sets.push_back({s, {{s.path + "/f", 4096}}});
    }
  };
  for (const auto& g : p.groups) {
    for (const auto& t : g.transactions) {
      for (const auto& f : t.flowops) {
        if (const auto* op = std::get_if<profile::SendfileOp>(&f.spec)) add(op->source);
        if (const auto* op = std::get_if<profile::SendfilevOp>(&f.spec)) add(op->source);
        if (const auto* op = std::get_if<profile::RecvFileOp>(&f.spec)) add(op->source);
      }
    }
  }
  return sets;
}

void compile_and_print(const profile::Profile& p) {
  core::Diagnostics diags;
  auto plan = engine::compile(p, made_up_file_sets(p), diags);
  if (plan) (void)engine::timed_steps(*plan);
  (void)diags.format(nullptr);
  (void)profile::to_text(p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  profile::Variables vars;
  vars.bindings = {{"h", "127.0.0.1"}, {"n", "2"}, {"size", "64k"}, {"t", "1s"}, {"proto", "tcp"}};
  vars.environment = {{"HOME", "/nonexistent"}, {"nthr", "4"}};
  const auto parsed = profile::parse_profile(text, "fuzz.xml", vars);
  (void)parsed.diagnostics.format(nullptr);
  if (!parsed.profile) return 0;
  const profile::Profile& master = *parsed.profile;
  compile_and_print(master);
  // The slave's side: one mirror per host the master talks to, and the all-hosts mirror.
  std::set<std::string> hosts{""};
  for (const auto& group : profile::flowop_hosts(master)) {
    for (const auto& txn : group) hosts.insert(txn.begin(), txn.end());
  }
  for (const auto& host : hosts) compile_and_print(profile::mirror(master, host));
  return 0;
}
