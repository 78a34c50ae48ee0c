#include "volley/cli/uperf_args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace volley::cli {
namespace {

using Args = std::vector<std::string>;
using Action = UperfTranslation::Action;

TEST(UperfArgs, RecognisesUperfCommandLinesOnly) {
  EXPECT_TRUE(is_uperf_command_line({"-m", "p.xml"}));
  EXPECT_TRUE(is_uperf_command_line({"-s"}));
  EXPECT_TRUE(is_uperf_command_line({"-vaR", "-m", "p.xml"}));
  EXPECT_TRUE(is_uperf_command_line({"-mp.xml"}));  // the value glued on
  EXPECT_TRUE(is_uperf_command_line({"-V"}));
  EXPECT_FALSE(is_uperf_command_line({}));
  EXPECT_FALSE(is_uperf_command_line({"run", "p.xml"}));
  EXPECT_FALSE(is_uperf_command_line({"--version"}));
  EXPECT_FALSE(is_uperf_command_line({"-h"}));  // volley's own help
  EXPECT_FALSE(is_uperf_command_line({"-q"}));  // not a uperf letter: volley's parser says so
}

TEST(UperfArgs, WrapperCommandLinesBecomeARun) {
  // benchmark-wrapper and k8s-netperf: uperf -v -a -R -i 1 -m PROFILE -P PORT
  const Args expected{"run",    "p.xml", "--uperf-output=aR", "--interval", "1000ms",
                      "--port", "30000"};
  EXPECT_EQ(translate_uperf_args({"-v", "-a", "-R", "-i", "1", "-m", "p.xml", "-P", "30000"}).args,
            expected);
  // The same flags clustered, and values glued to their letter, as getopt allows.
  EXPECT_EQ(translate_uperf_args({"-vaR", "-i1", "-mp.xml", "-P30000"}).args, expected);
  EXPECT_EQ(translate_uperf_args({"-vaRi", "1", "-m", "p.xml", "-P", "30000"}).args, expected);
  EXPECT_EQ(translate_uperf_args({"-vaR", "-i", "1", "-m", "p.xml", "-P", "30000"}).action,
            Action::kRun);
}

TEST(UperfArgs, WithoutRawVolleysOwnReportWithANote) {
  const auto t = translate_uperf_args({"-vai", "1", "-m", "p.xml"});
  EXPECT_EQ(t.args, (Args{"run", "p.xml", "--interval", "1000ms"}));
  ASSERT_EQ(t.notes.size(), 1U);
  EXPECT_NE(t.notes[0].find("add -R"), std::string::npos);
  // -n: no statistics, so no live lines.
  EXPECT_EQ(translate_uperf_args({"-n", "-m", "p.xml"}).args, (Args{"run", "p.xml", "--quiet"}));
}

TEST(UperfArgs, SlaveWithPort) {
  EXPECT_EQ(translate_uperf_args({"-s"}).args, (Args{"serve"}));
  EXPECT_EQ(translate_uperf_args({"-s", "-P", "30000"}).args, (Args{"serve", "--listen", "30000"}));
  EXPECT_EQ(translate_uperf_args({"-vs", "-P30000", "--workers", "2"}).args,
            (Args{"serve", "--listen", "30000", "--workers", "2"}));
}

TEST(UperfArgs, VolleyLongOptionsPassThrough) {
  EXPECT_EQ(
      translate_uperf_args({"-m", "p.xml", "--local", "--set", "h=127.0.0.1", "--json", "-", "-R"})
          .args,
      (Args{"run", "p.xml", "--uperf-output=R", "--local", "--set", "h=127.0.0.1", "--json", "-"}));
}

TEST(UperfArgs, ResponseTimesAndAcceptedFlagsHaveNotes) {
  const auto t = translate_uperf_args(
      {"-m", "p.xml", "-X", "times.txt", "-p", "-e", "-E", "a,b", "-k", "-S", "tcp"});
  EXPECT_EQ(t.action, Action::kRun);
  EXPECT_EQ(t.args, (Args{"run", "p.xml", "--latency-log", "times.txt"}));
  EXPECT_EQ(t.notes.size(), 6U);  // -X, -p, -e, -E, -k, -S
  for (const std::string& note : t.notes) EXPECT_EQ(note.front(), '-') << note;
}

TEST(UperfArgs, VersionAndUsageAnswerAtOnce) {
  EXPECT_EQ(translate_uperf_args({"-V"}).action, Action::kVersion);
  EXPECT_EQ(translate_uperf_args({"-v", "-h"}).action, Action::kUsage);
  EXPECT_EQ(translate_uperf_args({"-m", "p.xml", "-V"}).action, Action::kVersion);
  EXPECT_NE(uperf_usage().find("-R"), std::string::npos);
}

TEST(UperfArgs, BadCommandLinesNameTheFlag) {
  const auto error = [](const Args& args) {
    const auto t = translate_uperf_args(args);
    EXPECT_EQ(t.action, Action::kError);
    EXPECT_TRUE(t.args.empty());
    return t.error;
  };
  EXPECT_NE(error({"-m", "p.xml", "-s"}).find("-m and -s"), std::string::npos);
  EXPECT_NE(error({"-v"}).find("-m PROFILE"), std::string::npos);
  EXPECT_NE(error({"-m"}).find("-m needs a value"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "-i", "0"}).find("-i '0'"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "-i", "fast"}).find("-i 'fast'"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "-i", "500us"}).find("-i '500us'"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "-P", "70000"}).find("-P '70000'"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "-z"}).find("unknown option -z"), std::string::npos);
  EXPECT_NE(error({"-m", "p.xml", "extra"}).find("'extra'"), std::string::npos);
}

TEST(UperfArgs, IntervalInUperfsUnits) {
  EXPECT_EQ(uperf_interval_ms("1"), 1000U);  // no unit: seconds
  EXPECT_EQ(uperf_interval_ms("2s"), 2000U);
  EXPECT_EQ(uperf_interval_ms("0.5"), 500U);
  EXPECT_EQ(uperf_interval_ms("100m"), 100U);  // m is milliseconds
  EXPECT_EQ(uperf_interval_ms("100ms"), 100U);
  EXPECT_EQ(uperf_interval_ms("1min"), 1U);  // only the first letter counts, as in uperf
  EXPECT_EQ(uperf_interval_ms("2000000u"), 2000U);
  EXPECT_EQ(uperf_interval_ms("500u"), 0U);  // under 1 ms: uperf's "Incorrect interval"
  EXPECT_EQ(uperf_interval_ms("x"), 0U);
  EXPECT_EQ(uperf_interval_ms("5h"), 0U);
  EXPECT_EQ(uperf_interval_ms(""), 0U);
}

}  // namespace
}  // namespace volley::cli
