// A mistyped command, option or option of a command, through the real binary: volley names the
// word and the closest name it has, and exits 2 (bad input) before anything runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/paths.hpp"
#include "support/process.hpp"

namespace volley::test {
namespace {

const std::string kProfile = (source_dir() / "profiles" / "pingpong.xml").string();

ProcessResult volley(const std::vector<std::string>& args) {
  return run_volley(args, std::chrono::seconds(20));
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CommandLineErrors, MistypedOptionOfRunGetsTheClosestOption) {
  const ProcessResult r = volley({"run", kProfile, "--jsno", "out.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "volley run: unknown option '--jsno'; did you mean '--json'?")) << r.err;
  // The value given with `=` is not part of the name.
  const ProcessResult with_value = volley({"run", kProfile, "--jsno=out.json"});
  EXPECT_EQ(with_value.exit_code, 2);
  EXPECT_TRUE(has(with_value.err, "unknown option '--jsno'; did you mean '--json'?"))
      << with_value.err;
}

TEST(CommandLineErrors, MistypedCommandGetsTheClosestCommand) {
  const ProcessResult r = volley({"rn", kProfile});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "volley: unknown command 'rn'; did you mean 'run'?")) << r.err;
  const ProcessResult serve = volley({"sevre"});
  EXPECT_EQ(serve.exit_code, 2);
  EXPECT_TRUE(has(serve.err, "unknown command 'sevre'; did you mean 'serve'?")) << serve.err;
}

TEST(CommandLineErrors, EveryCommandSuggestsAmongItsOwnOptions) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases{
      {{"serve", "--max-sesions", "3"},
       "volley serve: unknown option '--max-sesions'; did you mean '--max-sessions'?"},
      {{"check", kProfile, "--strikt"},
       "volley check: unknown option '--strikt'; did you mean '--strict'?"},
      {{"dump", kProfile, "--hots", "h"},
       "volley dump: unknown option '--hots'; did you mean '--host'?"},
      {{"sweep", kProfile, "--vary", "t=1,2", "--repet", "3"},
       "volley sweep: unknown option '--repet'; did you mean '--repeat'?"},
      {{"compare", "a.json", "b.json", "--htm", "x.html"},
       "volley compare: unknown option '--htm'; did you mean '--html'?"},
      {{"merge", "a.json", "b.json", "--jsn", "x.json"},
       "volley merge: unknown option '--jsn'; did you mean '--json'?"},
      // An option of another command is not suggested: `serve` has no --json.
      {{"serve", "--jsno", "x"}, "volley serve: unknown option '--jsno' (`volley serve --help`"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = volley(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.front() << ": " << r.err;
    EXPECT_TRUE(has(r.err, c.said)) << c.args.front() << ": " << r.err;
  }
}

TEST(CommandLineErrors, AWordFarFromEverythingIsNamedWithoutASuggestion) {
  const ProcessResult option = volley({"run", kProfile, "--zzzzzzzz"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_TRUE(has(option.err,
                  "volley run: unknown option '--zzzzzzzz' (`volley run --help` lists "
                  "the options)"))
      << option.err;
  EXPECT_FALSE(has(option.err, "did you mean")) << option.err;

  const ProcessResult command = volley({"frobnicate", kProfile});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_TRUE(has(command.err,
                  "volley: unknown command 'frobnicate'; the commands are run, serve, "
                  "check, dump, sweep, compare, merge and search"))
      << command.err;
  EXPECT_FALSE(has(command.err, "did you mean")) << command.err;

  const ProcessResult stray = volley({"run", kProfile, "extra"});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_TRUE(has(stray.err, "volley run: unexpected argument 'extra'")) << stray.err;

  const ProcessResult nothing = volley({});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_TRUE(has(nothing.err, "volley: no command given; the commands are run, serve"))
      << nothing.err;
}

TEST(CommandLineErrors, AMistypedOptionIsNamedBeforeWhatItCaused) {
  // `--jsno` takes no value, so `x` fills the profile argument and is no file: the cause is named.
  const ProcessResult r = volley({"run", "--jsno", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "unknown option '--jsno'; did you mean '--json'?")) << r.err;
  // Before the command, only volley's own options count.
  const ProcessResult before = volley({"--jsno", "run", kProfile});
  EXPECT_EQ(before.exit_code, 2);
  EXPECT_TRUE(has(before.err, "volley: unknown option '--jsno'")) << before.err;
}

TEST(CommandLineErrors, HelpAndVersionStillExitZero) {
  EXPECT_EQ(volley({"--version"}).exit_code, 0);
  EXPECT_EQ(volley({"run", "--help"}).exit_code, 0);
}

}  // namespace
}  // namespace volley::test

namespace volley::test {
namespace {

// Durations and sizes are read and checked by the command line itself, the same way for every
// command: a bad value is refused with the option's name and why, exit status 2, nothing run.
TEST(CommandLineValues, BadDurationOnRunAndSweep) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases{
      {{"run", kProfile, "--interval", "5x"},
       "volley run: --interval: invalid duration '5x': unknown unit 'x' (use ns, us, ms, s, min or "
       "h)"},
      {{"run", kProfile, "-i", "50ms"},
       "volley run: --interval: '50ms' is too short: the shortest interval is 100ms (shorter ones "
       "cost more throughput than they show)"},
      {{"run", kProfile, "--connect-timeout", "0"},
       "volley run: --connect-timeout: '0' must be at least 1ms"},
      {{"run", kProfile, "--step-grace", "-1s"},
       "volley run: --step-grace: invalid duration '-1s': must not be negative"},
      {{"run", kProfile, "--link-timeout", "soon"},
       "volley run: --link-timeout: invalid duration 'soon': expected a number"},
      {{"run", kProfile, "--max-duration", "400h", "--max-duration", "9000h"},
       "volley run: --max-duration: duration '9000h' is too long: the most is 8760h (365 days)"},
      {{"sweep", kProfile, "--vary", "t=1,2", "--connect-timeout", "abc"},
       "volley sweep: --connect-timeout: invalid duration 'abc': expected a number"},
      {{"sweep", kProfile, "--vary", "t=1,2", "--connect-timeout", "0"},
       "volley sweep: --connect-timeout: '0' must be at least 1ms"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = volley(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.said << "\n" << r.err;
    EXPECT_TRUE(has(r.err, c.said)) << r.err;
  }
}

TEST(CommandLineValues, BadSizeAndCountOnRunSweepAndServe) {
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::vector<Case> cases{
      {{"serve", "--max-io-bytes", "1.3k"},
       "volley serve: --max-io-bytes: invalid size '1.3k': not a whole number"},
      {{"serve", "--max-frame-bytes", "1k"},
       "volley serve: --max-frame-bytes: '1k' is not a size in 4k..1g bytes"},
      {{"serve", "--max-profile-bytes", "12q"},
       "volley serve: --max-profile-bytes: invalid size '12q': unknown suffix 'q'"},
      {{"run", kProfile, "--workers", "2k"},
       "volley run: --workers: '2k' is not a whole number in 0..1024"},
      {{"sweep", kProfile, "--vary", "t=1,2", "--workers", "5000"},
       "volley sweep: --workers: '5000' is not a whole number in 0..1024"},
      {{"sweep", kProfile, "--vary", "t=1,2", "-P", "0"},
       "volley sweep: --port: '0' is not a whole number in 1..65535"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = volley(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.said << "\n" << r.err;
    EXPECT_TRUE(has(r.err, c.said)) << r.err;
  }
}

TEST(CommandLineValues, SizesTakeSuffixesAndAmbiguousDurationsAreSaid) {
  // A good size with a suffix passes the command line (the key check that follows refuses the
  // non-loopback address, so nothing is served).
  const ProcessResult size =
      volley({"serve", "--listen", "192.0.2.1:1", "--max-profile-bytes", "2m"});
  EXPECT_EQ(size.exit_code, 2) << size.err;
  EXPECT_TRUE(has(size.err, "refusing to listen on")) << size.err;
  // `2m` is milliseconds, as in a profile, and volley says so.
  const ProcessResult ms = volley({"run", kProfile, "--max-duration", "2m", "--set", "t=1", "--set",
                                   "h=127.0.0.1", "--json", "/nonexistent-dir/x.json"});
  EXPECT_TRUE(has(ms.err, "volley: warning: --max-duration: '2m' is read as milliseconds"))
      << ms.err;
}

}  // namespace
}  // namespace volley::test
