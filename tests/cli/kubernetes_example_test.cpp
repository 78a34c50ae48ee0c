// deploy/kubernetes/ must not rot: every volley command line in the manifests goes through
// volley's own argument parser (define_command_line), and the profiles of `run` lines through
// `volley check` with the same --set values. Command lines are written in one known form, a flow
// sequence of double-quoted strings on one line (`command: ["volley", "run", ...]`), which is
// also JSON; a volley command in any other form fails the test rather than go unchecked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/paths.hpp"
#include "volley/cli/command_line.hpp"
#include "volley/core/wall_time.hpp"
#include "volley/report/json_report.hpp"

namespace volley::test {
namespace {

struct CommandLine {
  std::string where;  // file:line
  std::vector<std::string> args;
};

std::vector<std::filesystem::path> manifests() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() / "deploy/kubernetes")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The volley command lines of every manifest; a line that mentions volley as a command in
/// another form is a test failure.
std::vector<CommandLine> volley_command_lines() {
  std::vector<CommandLine> out;
  const std::regex flow(R"(^\s*(command|args):\s*(\[.*\])\s*$)");
  const std::regex other_form(R"(^\s*(-\s*"?volley"?\s*$|(command|args):.*volley))");
  for (const auto& path : manifests()) {
    std::istringstream in(read_file(path));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string where = fmt::format("{}:{}", path.filename().string(), n);
      std::smatch m;
      if (std::regex_match(line, m, flow)) {
        const auto seq = nlohmann::json::parse(m[2].str(), nullptr, false);
        if (!seq.is_array()) {
          ADD_FAILURE() << where << ": not a flow sequence of quoted strings";
          continue;
        }
        std::vector<std::string> args;
        for (const auto& a : seq) args.push_back(a.get<std::string>());
        if (!args.empty() && args[0] == "volley") out.push_back({where, args});
      } else {
        EXPECT_FALSE(std::regex_search(line, other_form))
            << where << ": write volley command lines as command: [\"volley\", ...] on one line";
      }
    }
  }
  return out;
}

/// What Kubernetes would substitute, and where the packaged profiles are in the source tree.
std::string resolve(std::string arg, const std::string& start_at) {
  arg = std::regex_replace(arg, std::regex(R"(\$\(START_AT\))"), start_at);
  arg = std::regex_replace(arg, std::regex(R"(\$\(INDEX\))"), "0");
  const std::string packaged = "/usr/share/volley/profiles/";
  if (arg.rfind(packaged, 0) == 0)
    arg = (source_dir() / "profiles" / arg.substr(packaged.size())).string();
  return arg;
}

/// The manifest's `completions:` (how many masters run).
std::size_t completions() {
  std::smatch m;
  const std::string text = read_file(source_dir() / "deploy/kubernetes/master-job.yaml");
  EXPECT_TRUE(std::regex_search(text, m, std::regex(R"(\n\s*completions:\s*(\d+))")));
  return m.empty() ? 0 : std::stoul(m[1].str());
}

TEST(KubernetesExample, EveryVolleyCommandLineParsesAndItsProfileChecks) {
  const auto lines = volley_command_lines();
  // A start time as run.sh writes it: RFC 3339, a minute ahead.
  const std::int64_t at = core::unix_now_ns() + 60'000'000'000;
  const std::string start_at = report::iso8601_utc_ms(at);
  std::set<std::string> seen;
  for (const CommandLine& line : lines) {
    SCOPED_TRACE(line.where);
    std::vector<std::string> args;
    for (std::size_t i = line.args.size(); i-- > 1;)
      args.push_back(resolve(line.args[i], start_at));
    CLI::App app;
    cli::CommandLine cl;
    cli::define_command_line(app, cl);
    try {
      app.parse(args);  // CLI11 takes the arguments reversed
    } catch (const CLI::ParseError& e) {
      ADD_FAILURE() << "volley's parser refuses it: " << e.what();
      continue;
    }
    const std::string sub = app.get_subcommands().at(0)->get_name();
    seen.insert(sub);
    if (sub == "run") {
      const auto t = core::parse_wall_time(cl.run.start_at);
      EXPECT_TRUE(t.unix_ns.has_value()) << t.error;
      if (t.unix_ns) {
        EXPECT_EQ(core::check_start_time(*t.unix_ns, core::unix_now_ns()), "");
      }
      EXPECT_FALSE(cl.run.json.empty()) << "a master must write its document for the merge";
      EXPECT_EQ(cli::check_command(cli::CheckOptions{{cl.run.profile}, cl.run.set, true, ""}), 0)
          << "volley check " << cl.run.profile << " fails";
    }
    if (sub == "merge") {
      EXPECT_EQ(cl.merge.documents.size(), completions())
          << "merge-job.yaml must list one document per completion index of master-job.yaml";
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"serve", "run", "merge"}));
}

TEST(KubernetesExample, ManifestsAreValidYamlOfTheExpectedKinds) {
  if (std::system("python3 -c 'import yaml' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-yaml is not installed (scripts/install-deps.sh installs it)";
  }
  std::string command =
      "python3 -c 'import sys, yaml\n"
      "for f in sys.argv[1:]:\n"
      "  for d in yaml.safe_load_all(open(f)):\n"
      "    print(d[\"kind\"], d[\"metadata\"][\"name\"])' ";
  for (const auto& path : manifests()) command += " '" + path.string() + "'";
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << out;
  for (const char* kind : {"Deployment volley-slave", "Service volley-slave", "Job volley-master",
                           "Job volley-merge", "PersistentVolumeClaim volley-results"}) {
    EXPECT_NE(out.find(kind), std::string::npos) << kind << " missing from:\n" << out;
  }
}

}  // namespace
}  // namespace volley::test
