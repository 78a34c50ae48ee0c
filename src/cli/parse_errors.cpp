// What volley prints when CLI11 refuses a command line: a word no command or option knows is
// named with the closest name that exists (the same edit distance as a mistyped flowop in a
// profile); any other refusal is CLI11's message, prefixed by the command it concerns.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "volley/cli/command_line.hpp"
#include "volley/core/suggest.hpp"

namespace volley::cli {
namespace {

/// "volley", "volley run": the command as the user typed it.
std::string command_path(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* at = &cmd; at != nullptr; at = at->get_parent())
    names.push_back(at->get_name());
  std::reverse(names.begin(), names.end());
  std::string path;
  for (const auto& name : names) {
    if (name.empty()) continue;
    path += path.empty() ? name : " " + name;
  }
  return path.empty() ? std::string("volley") : path;
}

/// The deepest subcommand that was parsed (or the app itself): the one whose options count.
const CLI::App& innermost(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    const auto parsed = at->get_subcommands();
    if (parsed.empty()) return *at;
    at = parsed.front();
  }
}

/// An option name as typed, without its value (`--json=x` is `--json`).
std::string option_name(std::string_view word) {
  return std::string(word.substr(0, word.find('=')));
}

bool looks_like_option(std::string_view word) {
  return word.size() > 1 && word.front() == '-' && word != "--";
}

/// The long option closest to `word` among the visible options of `cmd` and of the commands
/// above it (--help), as "--name", or "".
std::string closest_option(const CLI::App& cmd, std::string_view word) {
  // Compared without dashes, so that `-json` and `--jsno` both find --json. One-letter names are
  // left out: any letter is one edit from any other, which suggests nothing useful.
  std::vector<std::string> names;
  for (const CLI::App* at = &cmd; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* o : at->get_options()) {
      if (!o->nonpositional() || o->get_group().empty()) continue;  // hidden: internal options
      for (const auto& name : o->get_lnames()) {
        if (name.size() > 1) names.push_back(name);
      }
    }
  }
  const std::string bare(word.substr(word.find_first_not_of('-')));
  if (bare.size() < 2) return {};
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  const std::string best = core::closest(bare, candidates);
  return best.empty() ? std::string() : "--" + best;
}

std::string unknown_option(const CLI::App& cmd, std::string_view word) {
  const std::string name = option_name(word);
  const std::string path = command_path(cmd);
  const std::string best = closest_option(cmd, name);
  if (!best.empty())
    return fmt::format("{}: unknown option '{}'; did you mean '{}'?", path, name, best);
  return fmt::format("{}: unknown option '{}' (`{} --help` lists the options)", path, name, path);
}

/// A word where a command belongs that names none ("" when no word was given at all).
std::string unknown_command(const CLI::App& app, std::string_view word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  const std::string best = word.empty() ? std::string() : core::closest(word, candidates);
  if (!best.empty())
    return fmt::format("volley: unknown command '{}'; did you mean '{}'?", word, best);
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += i == 0 ? "" : i + 1 == names.size() ? " and " : ", ";
    list += names[i];
  }
  if (word.empty()) return fmt::format("volley: no command given; the commands are {}", list);
  return fmt::format("volley: unknown command '{}'; the commands are {}", word, list);
}

}  // namespace

std::string describe_parse_error(const CLI::App& app, const std::vector<std::string>& args,
                                 const CLI::ParseError& error) {
  const CLI::App& cmd = innermost(app);
  // Words before the command's name belong to `volley` itself.
  std::size_t command_at = 0;
  if (&cmd != &app) {
    command_at = static_cast<std::size_t>(std::find(args.begin(), args.end(), cmd.get_name()) -
                                          args.begin());
  }
  const auto owner = [&](std::size_t i) -> const CLI::App& { return i < command_at ? app : cmd; };
  // The words CLI11 could not place, wherever it left them; the first as typed is named. A
  // mistyped option comes first even after a stray word: the stray word is often its value.
  const std::vector<std::string> left = app.remaining(true);
  const std::set<std::string> unplaced(left.begin(), left.end());
  const std::size_t end =
      static_cast<std::size_t>(std::find(args.begin(), args.end(), "--") - args.begin());
  for (std::size_t i = 0; i < end; ++i) {
    if (unplaced.count(args[i]) != 0 && looks_like_option(args[i])) {
      return unknown_option(owner(i), args[i]);
    }
  }
  for (std::size_t i = 0; i < end; ++i) {
    if (unplaced.count(args[i]) == 0 || looks_like_option(args[i])) continue;
    const CLI::App& at = owner(i);
    if (&at == &app) return unknown_command(app, args[i]);
    return fmt::format("{}: unexpected argument '{}' (`{} --help` lists what it takes)",
                       command_path(at), args[i], command_path(at));
  }
  if (&cmd == &app && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr &&
      app.get_subcommands().empty() && app.get_require_subcommand_min() > 0) {
    return unknown_command(app, "");
  }
  return fmt::format("{}: {}\nRun `{} --help` for more information.", command_path(cmd),
                     error.what(), command_path(cmd));
}

}  // namespace volley::cli
