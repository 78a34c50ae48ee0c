// compile(): a Profile becomes a Plan with dense stat slots; scan_file_sets() reads sendfile sizes.
#include "support/temp_dir.hpp"
#include "volley/engine/plan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace volley::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

profile::Flowop op(std::string type, profile::FlowopSpec spec, std::uint32_t line = 1) {
  profile::Flowop f;
  f.type = std::move(type);
  f.spec = std::move(spec);
  f.location = {"test.xml", line, 3};
  return f;
}

profile::Flowop write_op(std::uint64_t bytes) {
  return op("write", profile::WriteOp{profile::SizeSpec::fixed(bytes), {}, {}});
}

profile::Flowop read_op(std::uint64_t min, std::uint64_t max) {
  return op("read", profile::ReadOp{profile::SizeSpec{min, max}, {}, {}});
}

profile::Flowop accept_op(std::optional<std::uint16_t> port) {
  profile::AcceptOp a;
  a.connection.remotehost = "m";
  a.connection.port = port;
  return op("accept", a);
}

profile::Transaction txn(std::vector<profile::Flowop> ops, std::uint64_t iterations = 1) {
  profile::Transaction t;
  t.bound = profile::Iterations{iterations};
  t.flowops = std::move(ops);
  return t;
}

profile::Transaction timed_txn(std::vector<profile::Flowop> ops, std::chrono::nanoseconds d) {
  profile::Transaction t;
  t.bound = profile::Duration{d};
  t.flowops = std::move(ops);
  return t;
}

profile::Group group(std::string name, std::uint64_t strands, std::vector<profile::Transaction> t) {
  profile::Group g;
  g.name = std::move(name);
  g.nthreads = strands;
  g.transactions = std::move(t);
  return g;
}

Plan compile_ok(const profile::Profile& p, std::vector<FileSet> sets = {}) {
  core::Diagnostics diags;
  auto plan = compile(p, std::move(sets), diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  EXPECT_FALSE(diags.has_errors());
  return plan ? std::move(*plan) : Plan{};
}

TEST(Compile, SlotsAreDenseTxnSlotThenItsFlowops) {
  profile::Profile p;
  p.groups.push_back(
      group("a", 2, {txn({write_op(10), read_op(5, 5)}), txn({op("nop", profile::NopOp{})})}));
  p.groups.push_back(group("b", 3, {txn({op("think", profile::ThinkOp{1ms, false})})}));
  const Plan plan = compile_ok(p);

  ASSERT_EQ(plan.groups.size(), 2U);
  EXPECT_EQ(plan.groups[0].name, "a");
  EXPECT_EQ(plan.groups[0].strands, 2U);
  EXPECT_EQ(plan.total_strands, 5U);
  ASSERT_EQ(plan.slots.size(), 7U);  // (1 + 2) + (1 + 1) + (1 + 1)

  const auto& t0 = plan.groups[0].txns[0];
  EXPECT_EQ(t0.slot, 0U);
  ASSERT_EQ(t0.ops.size(), 2U);
  EXPECT_EQ(t0.ops[0].slot, 1U);
  EXPECT_EQ(t0.ops[0].type, "write");
  EXPECT_EQ(t0.ops[1].slot, 2U);
  EXPECT_FALSE(t0.uncorrected_slot.has_value());
  EXPECT_EQ(plan.groups[0].txns[1].slot, 3U);
  EXPECT_EQ(plan.groups[0].txns[1].ops[0].slot, 4U);
  EXPECT_EQ(plan.groups[1].txns[0].slot, 5U);
  EXPECT_EQ(plan.groups[1].txns[0].ops[0].slot, 6U);

  // Each slot knows what it belongs to.
  EXPECT_EQ(plan.slots[0].group, 0U);
  EXPECT_EQ(plan.slots[0].txn, 0U);
  EXPECT_FALSE(plan.slots[0].flowop.has_value());
  EXPECT_EQ(plan.slots[2].flowop, std::optional<std::size_t>(1));
  EXPECT_EQ(plan.slots[4].txn, 1U);
  EXPECT_EQ(plan.slots[4].flowop, std::optional<std::size_t>(0));
  EXPECT_EQ(plan.slots[6].group, 1U);
  EXPECT_EQ(plan.slots[6].flowop, std::optional<std::size_t>(0));
  for (const auto& s : plan.slots) EXPECT_FALSE(s.uncorrected);
}

TEST(Compile, TxnCountIsTheMostTransactionsOfAnyGroup) {
  profile::Profile p;
  p.groups.push_back(group("a", 1, {txn({}), txn({})}));
  p.groups.push_back(group("b", 1, {txn({}), txn({}), txn({})}));
  p.groups.push_back(group("c", 1, {}));
  EXPECT_EQ(compile_ok(p).txn_count, 3U);
  EXPECT_EQ(compile_ok(profile::Profile{}).txn_count, 0U);
}

TEST(Compile, AcceptPortsAreCollectedWithZeroForNegotiated) {
  profile::Profile p;
  p.groups.push_back(group("a", 1, {txn({accept_op(std::nullopt), accept_op(20001)})}));
  p.groups.push_back(group("b", 2, {txn({accept_op(20001)}), txn({accept_op(20002)})}));
  const Plan plan = compile_ok(p);
  EXPECT_EQ(plan.accept_ports, (std::set<std::uint16_t>{0, 20001, 20002}));
}

TEST(Compile, PlainStreamIsAWriteOrReadWithoutChunkOrTimeout) {
  profile::Flowop chunked_write = write_op(64);
  std::get<profile::WriteOp>(chunked_write.spec).chunk_bytes = 16;
  profile::Flowop chunked_read = read_op(64, 64);
  std::get<profile::ReadOp>(chunked_read.spec).chunk_bytes = 16;
  profile::Flowop timed_read = read_op(64, 64);
  timed_read.common.timeout = 1s;
  profile::Profile p;
  p.groups.push_back(group("a", 1,
                           {txn({write_op(64), read_op(1, 64), chunked_write, chunked_read,
                                 timed_read, accept_op(std::nullopt)})}));
  const Plan plan = compile_ok(p);
  std::vector<bool> plain;
  for (const OpPlan& o : plan.groups[0].txns[0].ops) plain.push_back(o.plain_stream);
  EXPECT_EQ(plain, (std::vector<bool>{true, true, false, false, false, false}));
}

TEST(Compile, ReadStreamIsADurationTransactionOfPlainReadsOnOneConnection) {
  profile::RecvFileOp recvfile;
  recvfile.source.path = "/f";
  auto read_stream = [&](profile::Transaction t) {
    profile::Profile p;
    p.groups.push_back(group("a", 1, {std::move(t)}));
    const Plan plan = compile_ok(p, {FileSet{recvfile.source, {FileEntry{"/f", 100}}}});
    std::vector<bool> flags;
    for (const OpPlan& o : plan.groups[0].txns[0].ops) flags.push_back(o.read_stream);
    return flags;
  };
  EXPECT_EQ(read_stream(timed_txn({read_op(65536, 65536)}, 1s)), std::vector<bool>{true});
  EXPECT_EQ(read_stream(timed_txn({read_op(1, 65536), read_op(65536, 65536)}, 1s)),
            (std::vector<bool>{true, true}));
  // The mirror of a sendfile reads a stream too.
  EXPECT_EQ(read_stream(timed_txn({op("recvfile", recvfile)}, 1s)), std::vector<bool>{true});

  // The peer's next bytes may wait for this side (a write), for a count of iterations, for the
  // peer's pace, or come on another connection: no read stream.
  EXPECT_EQ(read_stream(timed_txn({write_op(64), read_op(64, 64)}, 1s)),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(read_stream(txn({read_op(65536, 65536)}, 100)), std::vector<bool>{false});
  profile::Transaction paced = timed_txn({read_op(65536, 65536)}, 1s);
  paced.rate_per_s = 10.0;
  EXPECT_EQ(read_stream(paced), std::vector<bool>{false});
  profile::Flowop other_connection = read_op(65536, 65536);
  other_connection.common.connection = 2;
  EXPECT_EQ(read_stream(timed_txn({read_op(65536, 65536), other_connection}, 1s)),
            (std::vector<bool>{false, false}));
  profile::Flowop chunked = read_op(65536, 65536);
  std::get<profile::ReadOp>(chunked.spec).chunk_bytes = 16;
  EXPECT_EQ(read_stream(timed_txn({chunked}, 1s)), std::vector<bool>{false});
  profile::Flowop timed = read_op(65536, 65536);
  timed.common.timeout = 1s;
  EXPECT_EQ(read_stream(timed_txn({timed}, 1s)), std::vector<bool>{false});
}

TEST(Compile, NoAcceptNoListener) {
  profile::Profile p;
  profile::ConnectOp c;
  c.connection.remotehost = "x";
  c.connection.port = 5000;
  p.groups.push_back(group("a", 1, {txn({op("connect", c)})}));
  EXPECT_TRUE(compile_ok(p).accept_ports.empty());
}

TEST(Compile, IoBufferIsClampedBetween256KiBAnd4MiB) {
  auto buffer_for = [](std::vector<profile::Flowop> ops) {
    profile::Profile p;
    p.groups.push_back(group("a", 1, {txn(std::move(ops))}));
    return compile_ok(p).io_buffer_bytes;
  };
  EXPECT_EQ(buffer_for({}), 256U * 1024);
  EXPECT_EQ(buffer_for({write_op(1)}), 256U * 1024);
  EXPECT_EQ(buffer_for({write_op(100000)}), 256U * 1024);
  EXPECT_EQ(buffer_for({write_op(1000000)}), 1000000U);
  EXPECT_EQ(buffer_for({write_op(1000), read_op(10, 2000000)}), 2000000U);  // random: the max
  EXPECT_EQ(buffer_for({write_op(std::uint64_t{3} << 30)}), 4U * 1024 * 1024);
  EXPECT_EQ(buffer_for({read_op(4U * 1024 * 1024, 4U * 1024 * 1024)}), 4U * 1024 * 1024);
}

TEST(Compile, UncorrectedSlotOnlyForRateTransactions) {
  profile::Profile p;
  profile::Transaction paced = txn({write_op(10)}, 100);
  paced.rate_per_s = 1000.0;
  p.groups.push_back(group("a", 1, {txn({write_op(10)}), paced}));
  const Plan plan = compile_ok(p);
  const auto& plain = plan.groups[0].txns[0];
  const auto& rated = plan.groups[0].txns[1];
  EXPECT_FALSE(plain.uncorrected_slot.has_value());
  ASSERT_TRUE(rated.uncorrected_slot.has_value());
  EXPECT_EQ(rated.rate_per_s, std::optional<double>(1000.0));
  // txn0: 0, write: 1; txn1: 2, uncorrected: 3, write: 4.
  EXPECT_EQ(rated.slot, 2U);
  EXPECT_EQ(*rated.uncorrected_slot, 3U);
  EXPECT_EQ(rated.ops[0].slot, 4U);
  ASSERT_EQ(plan.slots.size(), 5U);
  EXPECT_TRUE(plan.slots[3].uncorrected);
  EXPECT_FALSE(plan.slots[3].flowop.has_value());
  int uncorrected = 0;
  for (const auto& s : plan.slots) uncorrected += s.uncorrected ? 1 : 0;
  EXPECT_EQ(uncorrected, 1);
}

TEST(TimedSteps, DurationStepsOnly) {
  profile::Profile p;
  p.groups.push_back(group("a", 1, {txn({}), timed_txn({}, 1s), txn({})}));
  p.groups.push_back(group("b", 1, {txn({}), txn({}), txn({}), timed_txn({}, 2s)}));
  EXPECT_EQ(timed_steps(compile_ok(p)), (std::vector<std::size_t>{1, 3}));
}

TEST(TimedSteps, AllStepsWhenNoDuration) {
  profile::Profile p;
  p.groups.push_back(group("a", 1, {txn({}), txn({}), txn({})}));
  EXPECT_EQ(timed_steps(compile_ok(p)), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(timed_steps(compile_ok(profile::Profile{})).empty());
}

TEST(TimedSteps, AGroupWithoutStrandsDoesNotMakeAStepTimed) {
  profile::Profile p;
  p.groups.push_back(group("a", 1, {txn({}), txn({})}));
  p.groups.push_back(group("idle", 0, {timed_txn({}, 1s), txn({})}));
  EXPECT_EQ(timed_steps(compile_ok(p)), (std::vector<std::size_t>{0, 1}));
}

TEST(DisplayNames, DefaultsAndGivenNames) {
  GroupPlan g;
  EXPECT_EQ(group_display_name(g, 0), "group0");
  g.name = "clients";
  EXPECT_EQ(group_display_name(g, 0), "clients");
  TxnPlan t;
  EXPECT_EQ(txn_display_name(t, 0), "txn1");
  t.name = "warmup";
  EXPECT_EQ(txn_display_name(t, 4), "warmup");
}

// ---- sendfile sources ------------------------------------------------------------------------

/// A scratch folder whose files hold `bytes` bytes each.
class TempDir : public test::TempDir {
 public:
  fs::path write(const std::string& relative, std::size_t bytes) const {
    return test::TempDir::write(relative, std::string(bytes, 'z'));
  }
};

profile::Profile sendfile_profile(const std::string& path, bool directory) {
  profile::Profile p;
  profile::SendfileOp s;
  s.source = {path, directory};
  p.groups.push_back(group("a", 1, {txn({op("sendfile", s, 7)})}));
  return p;
}

TEST(ScanFileSets, OneFile) {
  TempDir dir;
  const fs::path file = dir.write("one.bin", 1234);
  const auto p = sendfile_profile(file.string(), false);
  core::Diagnostics diags;
  const auto sets = scan_file_sets(p, diags);
  ASSERT_FALSE(diags.has_errors()) << diags.format(nullptr);
  ASSERT_EQ(sets.size(), 1U);
  EXPECT_EQ(sets[0].source, (profile::FileSource{file.string(), false}));
  ASSERT_EQ(sets[0].files.size(), 1U);
  EXPECT_EQ(sets[0].files[0], (FileEntry{file.string(), 1234}));

  const Plan plan = compile_ok(p, sets);
  ASSERT_EQ(plan.file_sets.size(), 1U);
  EXPECT_EQ(plan.groups[0].txns[0].ops[0].file_set, std::optional<std::size_t>(0));
}

TEST(ScanFileSets, FolderIsRecursiveSortedAndSkipsEmptyFiles) {
  TempDir dir;
  dir.write("b.bin", 20);
  dir.write("a.bin", 10);
  dir.write("empty.bin", 0);
  dir.write("sub/c.bin", 30);
  dir.write("sub/deeper/0.bin", 5);
  const auto p = sendfile_profile(dir.path().string(), true);
  core::Diagnostics diags;
  const auto sets = scan_file_sets(p, diags);
  ASSERT_FALSE(diags.has_errors()) << diags.format(nullptr);
  ASSERT_EQ(sets.size(), 1U);
  const auto root = dir.path();
  const std::vector<FileEntry> expected{{(root / "a.bin").string(), 10},
                                        {(root / "b.bin").string(), 20},
                                        {(root / "sub/c.bin").string(), 30},
                                        {(root / "sub/deeper/0.bin").string(), 5}};
  EXPECT_EQ(sets[0].files, expected);
}

TEST(ScanFileSets, TheSameSourceIsScannedOnce) {
  TempDir dir;
  const fs::path file = dir.write("f", 3);
  profile::Profile p = sendfile_profile(file.string(), false);
  profile::SendfilevOp v;
  v.source = {file.string(), false};
  v.nfiles = 2;
  p.groups[0].transactions[0].flowops.push_back(op("sendfilev", v));
  core::Diagnostics diags;
  EXPECT_EQ(scan_file_sets(p, diags).size(), 1U);
  EXPECT_FALSE(diags.has_errors());
}

TEST(ScanFileSets, MissingFileIsALocatedError) {
  TempDir dir;
  const std::string missing = (dir.path() / "nope.bin").string();
  const auto p = sendfile_profile(missing, false);
  core::Diagnostics diags;
  const auto sets = scan_file_sets(p, diags);
  EXPECT_TRUE(sets.empty());
  ASSERT_EQ(diags.error_count(), 1U);
  const auto& d = diags.items()[0];
  EXPECT_EQ(d.location, (core::SourceLocation{"test.xml", 7, 3}));
  EXPECT_NE(d.message.find(missing), std::string::npos) << d.message;
}

TEST(ScanFileSets, MissingOrEmptyFolderIsALocatedError) {
  TempDir dir;
  {
    core::Diagnostics diags;
    const auto sets = scan_file_sets(sendfile_profile((dir.path() / "nope").string(), true), diags);
    EXPECT_TRUE(sets.empty());
    ASSERT_EQ(diags.error_count(), 1U);
    EXPECT_EQ(diags.items()[0].location.line, 7U);
  }
  {
    dir.write("only_empty", 0);
    core::Diagnostics diags;
    const auto sets = scan_file_sets(sendfile_profile(dir.path().string(), true), diags);
    EXPECT_TRUE(sets.empty());
    ASSERT_EQ(diags.error_count(), 1U);
    EXPECT_NE(diags.items()[0].message.find("no non-empty"), std::string::npos);
  }
}

TEST(Compile, SendfileWithoutAFileSetIsALocatedError) {
  const auto p = sendfile_profile("/no/such/file", false);
  core::Diagnostics diags;
  const auto plan = compile(p, {}, diags);
  EXPECT_FALSE(plan.has_value());
  ASSERT_EQ(diags.error_count(), 1U);
  EXPECT_EQ(diags.items()[0].location.line, 7U);
  EXPECT_NE(diags.items()[0].message.find("/no/such/file"), std::string::npos);
}

TEST(Compile, FileSetOfAnotherSourceDoesNotCount) {
  const auto p = sendfile_profile("/data/a", false);
  core::Diagnostics diags;
  // Same path but as a folder: a different source.
  const auto plan = compile(p, {FileSet{{"/data/a", true}, {{"/data/a/x", 1}}}}, diags);
  EXPECT_FALSE(plan.has_value());
  EXPECT_TRUE(diags.has_errors());
}

TEST(Compile, RecvFileOnTheSlaveUsesTheMastersSizes) {
  profile::Profile p;
  profile::RecvFileOp r;
  r.source = {"/master/only", true};
  r.nfiles = 2;
  p.groups.push_back(group("a", 1, {txn({op("sendfile", r)})}));
  const std::vector<FileSet> sets{
      FileSet{{"/other", false}, {{"/other", 9}}},
      FileSet{{"/master/only", true}, {{"/master/only/1", 100}, {"/master/only/2", 200}}}};
  const Plan plan = compile_ok(p, sets);
  EXPECT_EQ(plan.groups[0].txns[0].ops[0].file_set, std::optional<std::size_t>(1));
  EXPECT_EQ(plan.file_sets, sets);
}

}  // namespace
}  // namespace volley::engine
