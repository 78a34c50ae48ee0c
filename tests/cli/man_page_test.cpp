// docs/volley.1 against the live command line: every subcommand has a `.SS volley NAME` section,
// every visible option of it a `.TP` entry there, and nothing is documented that no longer
// exists. A failure lists exactly what to add or remove, and where.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "support/paths.hpp"
#include "volley/cli/command_line.hpp"
#include "volley/core/build_info.hpp"

namespace volley::test {
namespace {

const std::string kGlobal = "(global)";  // options before the subcommand: `.SH OPTIONS`

/// Option names per section, from the `.TP` tags of the man page. Sections: kGlobal for
/// `.SH OPTIONS`, the subcommand's name for `.SS volley NAME`.
std::map<std::string, std::set<std::string>> documented_options(const std::string& roff) {
  std::map<std::string, std::set<std::string>> out;
  std::istringstream in(roff);
  std::string line;
  std::string section;  // empty: a section that documents no options
  bool tag_next = false;
  const std::regex name(R"((^|[\s,])(--?[A-Za-z][A-Za-z0-9-]*))");
  while (std::getline(in, line)) {
    if (line.rfind(".SH", 0) == 0) {
      section = line == ".SH OPTIONS" ? kGlobal : "";
      if (!section.empty()) out[section];
    } else if (line.rfind(".SS volley ", 0) == 0) {
      section = line.substr(11);
      out[section];
    } else if (line == ".TP") {
      tag_next = true;
      continue;
    } else if (tag_next && !section.empty()) {
      // Roff to text: \- is a dash, \fB \fI \fR \fP switch fonts, quotes group arguments.
      std::string text = std::regex_replace(line, std::regex(R"(\\-)"), "-");
      text = std::regex_replace(text, std::regex(R"(\\f[BIRP])"), "");
      text = std::regex_replace(text, std::regex("\""), " ");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), name);
           it != std::sregex_iterator(); ++it) {
        out[section].insert((*it)[2]);
      }
    }
    tag_next = false;
  }
  return out;
}

/// Every name of every option of `app` (not of its subcommands). `visible_only` leaves out the
/// hidden ones (an empty group: internal to --local) and --help, which the page documents once.
std::set<std::string> option_names(const CLI::App& app, bool visible_only) {
  std::set<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    if (visible_only && (o->get_group().empty() || o == app.get_help_ptr())) continue;
    for (const auto& l : o->get_lnames()) out.insert("--" + l);
    for (const auto& s : o->get_snames()) out.insert("-" + s);
  }
  return out;
}

TEST(ManPage, DocumentsEveryOptionOfTheLiveCommandLineAndNoOther) {
  CLI::App app;
  cli::CommandLine cl;
  cli::define_command_line(app, cl);
  auto documented = documented_options(read_file(source_dir() / "docs/volley.1"));

  std::map<std::string, const CLI::App*> commands{{kGlobal, &app}};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands[sub->get_name()] = sub;
  }
  std::ostringstream missing;
  std::ostringstream stale;
  for (const auto& [name, cmd] : commands) {
    const std::string where = name == kGlobal ? ".SH OPTIONS" : ".SS volley " + name;
    if (documented.count(name) == 0) {
      missing << "  no section `" << where << "` for the subcommand `volley " << name << "`\n";
      continue;
    }
    for (const auto& option : option_names(*cmd, true)) {
      if (documented[name].count(option) == 0) {
        missing << "  " << (name == kGlobal ? "volley" : "volley " + name) << " " << option
                << "  (add a .TP entry under `" << where << "`)\n";
      }
    }
    const auto existing = option_names(*cmd, false);
    for (const auto& option : documented[name]) {
      if (existing.count(option) == 0) {
        stale << "  " << option << " under `" << where << "`\n";
      }
    }
  }
  for (const auto& [name, options] : documented) {
    if (commands.count(name) == 0) stale << "  the section `.SS volley " << name << "` (no such subcommand)\n";
  }
  EXPECT_EQ(missing.str(), "") << "docs/volley.1 does not document:\n" << missing.str();
  EXPECT_EQ(stale.str(), "") << "docs/volley.1 documents what the command line no longer has:\n"
                             << stale.str();
}

TEST(ManPage, TitleLineNamesThisVersion) {
  const std::string roff = read_file(source_dir() / "docs/volley.1");
  const std::string expected = "\"volley " + std::string(core::version()) + "\"";
  EXPECT_NE(roff.find(expected), std::string::npos)
      << "the .TH line of docs/volley.1 should name " << expected << " (CMakeLists.txt's version)";
}

TEST(ManPage, RendersWithoutWarnings) {
  if (std::system("command -v man >/dev/null 2>&1") != 0) GTEST_SKIP() << "man is not installed";
  const std::string command = "MANWIDTH=80 man --warnings -l '" +
                              (source_dir() / "docs/volley.1").string() + "' 2>&1 >/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string warnings;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) warnings += buffer;
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_EQ(warnings, "");
}

}  // namespace
}  // namespace volley::test
