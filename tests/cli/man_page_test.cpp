// docs/volley.1 against the live command line: every subcommand has a `.SS volley NAME` section,
// every visible option of it a `.TP` entry there, and nothing is documented that does not exist.
// The ENVIRONMENT section against the sources: every variable that src/ or include/ reads with
// getenv or secure_getenv is named there, and no VOLLEY_ variable the program does not read.
// A failure lists exactly what to add or remove, and where.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
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
    if (commands.count(name) == 0)
      stale << "  the section `.SS volley " << name << "` (no such subcommand)\n";
  }
  EXPECT_EQ(missing.str(), "") << "docs/volley.1 does not document:\n" << missing.str();
  EXPECT_EQ(stale.str(), "") << "docs/volley.1 documents what the command line no longer has:\n"
                             << stale.str();
}

/// The text of the man page's `.SH ENVIRONMENT` section, roff escapes removed.
std::string environment_section(const std::string& roff) {
  std::istringstream in(roff);
  std::string line;
  std::string out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(".SH", 0) == 0) {
      inside = line == ".SH ENVIRONMENT";
      continue;
    }
    if (inside) out += line + "\n";
  }
  out = std::regex_replace(out, std::regex(R"(\\f[BIRP])"), "");
  return std::regex_replace(out, std::regex(R"(\\-)"), "-");
}

/// The variables the program reads: every `getenv(...)` and `secure_getenv(...)` in the C++ files
/// under src/ and include/ (comment lines skipped). An argument that is a string literal is the
/// name; one that is a constant is looked up as `CONSTANT = "NAME"` in the same files. Each name
/// maps to the file that reads it; a constant that cannot be resolved maps from its own spelling
/// prefixed with "?", so that the test fails naming it.
std::map<std::string, std::string> variables_the_program_reads() {
  std::map<std::string, std::string> sources;  // path -> text without comment lines
  for (const char* top : {"src", "include"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      std::istringstream in(read_file(entry.path()));
      std::string line;
      std::string text;
      while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
        text += line + "\n";
      }
      sources[std::filesystem::relative(entry.path(), source_dir()).string()] = text;
    }
  }
  const std::regex call(R"(\b(?:secure_)?getenv\s*\(\s*([^)]*?)\s*\))");
  const std::regex literal(R"re(^"([^"]+)"$)re");
  std::map<std::string, std::string> out;
  for (const auto& [path, text] : sources) {
    if (text.find("getenv") == std::string::npos) continue;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call);
         it != std::sregex_iterator(); ++it) {
      const std::string argument = (*it)[1];
      std::smatch m;
      if (std::regex_match(argument, m, literal)) {
        out[m[1]] = path;
        continue;
      }
      // A constant, possibly qualified: look for its definition with a string literal.
      const auto colon = argument.rfind(':');
      const std::string constant =
          colon == std::string::npos ? argument : argument.substr(colon + 1);
      const std::regex definition("\\b" + constant + R"re(\s*=\s*"([^"]+)")re");
      std::string name = "?" + argument;
      for (const auto& [other, other_text] : sources) {
        std::smatch d;
        if (other_text.find(constant) != std::string::npos &&
            std::regex_search(other_text, d, definition)) {
          name = d[1];
        }
      }
      out[name] = path;
    }
  }
  return out;
}

TEST(ManPage, NamesEveryEnvironmentVariableTheProgramReadsAndNoOther) {
  const std::string section = environment_section(read_file(source_dir() / "docs/volley.1"));
  ASSERT_NE(section, "") << "docs/volley.1 has no `.SH ENVIRONMENT` section";
  const auto read = variables_the_program_reads();
  ASSERT_FALSE(read.empty()) << "found no getenv call under src/ or include/: is the scan broken?";

  std::ostringstream missing;
  for (const auto& [name, path] : read) {
    if (name.front() == '?') {
      missing << "  " << path << " calls getenv(" << name.substr(1)
              << "), a name this test cannot resolve to a string: pass a literal or a constant "
                 "defined as `NAME = \"...\"`\n";
    } else if (!std::regex_search(section,
                                  std::regex("(^|[^A-Za-z0-9_])" + name + "([^A-Za-z0-9_]|$)"))) {
      missing << "  " << name << "  (read in " << path << ")\n";
    }
  }
  std::ostringstream stale;
  const std::regex documented(R"(\bVOLLEY_[A-Z0-9_]+)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), documented);
       it != std::sregex_iterator(); ++it) {
    if (read.count(it->str()) == 0) stale << "  " << it->str() << "\n";
  }
  EXPECT_EQ(missing.str(), "") << "the ENVIRONMENT section of docs/volley.1 does not name:\n"
                               << missing.str();
  EXPECT_EQ(stale.str(), "")
      << "the ENVIRONMENT section of docs/volley.1 names what the program does not read:\n"
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
