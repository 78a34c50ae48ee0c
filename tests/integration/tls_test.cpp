// protocol=tls end to end: the real CLI, a real slave (`--local`, or `volley serve` with its own
// certificate), real sockets. Both sides count every handshake (full or resumed) and say what it
// negotiated; the bytes both sides count are application bytes and agree; what the kernel cannot
// do (ktls here) fails before any traffic in one sentence, or falls back and says so; a
// certificate the master does not trust fails the run, naming the slave.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"
#include "volley/transport/tls_identity.hpp"
#include "volley/transport/tls_setup.hpp"

namespace volley::test {
namespace {

using nlohmann::json;

/// `strands` strands: a TLS connect with `options`, then `body` bounded by `bound`, then a
/// disconnect.
std::string tls_profile(const std::string& strands, const std::string& options,
                        const std::string& bound, const std::string& body) {
  return R"XML(<?xml version="1.0"?>
<profile name="tls">
  <group nthreads=")XML" +
         strands + R"XML(">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tls )XML" +
         options + R"XML("/></transaction>
    <transaction )XML" +
         bound + ">" + body + R"XML(</transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";
}

/// A connection storm: each iteration a TLS connect with `options` and a disconnect.
std::string storm_profile(const std::string& options, const std::string& iterations) {
  return R"XML(<?xml version="1.0"?>
<profile name="tls storm">
  <group nthreads="1">
    <transaction iterations=")XML" +
         iterations + R"XML("><flowop type="connect" options="remotehost=$h protocol=tls )XML" +
         options + R"XML("/><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";
}

const std::string kTlsPingPong =
    R"(<flowop type="write" options="size=64"/><flowop type="read" options="size=64"/>)";

std::uint64_t tls_count(const json& j, const char* key) { return j.at(key).get<std::uint64_t>(); }

/// The handshakes of the first flowop of transaction 0 of `side` (the master's document, or one
/// of its slaves).
const json& handshakes_of(const json& side) {
  return side.at("groups").at(0).at("transactions").at(0).at("flowops").at(0).at("handshakes");
}

TEST(Tls, APingPongCountsEveryHandshakeOnBothSidesAndItsBytesAgree) {
  const TempDir dir;
  const LocalRun run = run_local(dir, tls_profile("4", "", "duration=\"1s\"", kTlsPingPong));
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  for (const json* side : {&run.doc, &run.doc.at("slaves").at(0)}) {
    const json& h = handshakes_of(*side);
    EXPECT_EQ(tls_count(h.at("full"), "ops"), 4U) << "one full handshake per strand";
    EXPECT_EQ(tls_count(h.at("resumed"), "ops"), 0U);
    EXPECT_NE(h.at("full").at("negotiated").get<std::string>().find("TLSv1.3"), std::string::npos);
    EXPECT_EQ(tls_count(h.at("full").at("latency_ns"), "count"), 4U);
  }
  const json& mine = run.doc.at("groups").at(0).at("transactions").at(1).at("flowops");
  const json& theirs =
      run.doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1).at("flowops");
  EXPECT_GT(tls_count(mine.at(0), "bytes_written"), 0U);
  EXPECT_EQ(tls_count(mine.at(0), "bytes_written"), tls_count(theirs.at(0), "bytes_read"))
      << "application bytes: what the master wrote is what the slave read";
  EXPECT_EQ(tls_count(theirs.at(1), "bytes_written"), tls_count(mine.at(1), "bytes_read"));
  EXPECT_FALSE(run.doc.at("totals").contains("tls_handshakes"))
      << "the timed step has no handshake: the totals cover the timed steps";
}

// A TLS 1.3 client's handshake ends one flight before the server's, so the master can end its
// connect step while the slave still waits for its client's Finished: that wait must outlive the
// master's end of the step. Spread over processes, the slave is that late every time.
TEST(Tls, AnAcceptsHandshakeOutlivesTheMastersEndOfTheStep) {
  const TempDir dir;
  const LocalRun run =
      run_local(dir, tls_profile("16", "", "duration=\"1s\"", kTlsPingPong), {"--processes", "2"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const json& slave = run.doc.at("slaves").at(0);
  ASSERT_EQ(slave.at("processes").size(), 2U);
  EXPECT_EQ(tls_count(handshakes_of(slave).at("full"), "ops"), 16U);
  EXPECT_EQ(tls_count(handshakes_of(run.doc).at("full"), "ops"), 16U);
}

// Streams of large messages over TLS, whose readers wake at a mark (TlsOps::expect): one-way
// 1 MiB writes (the slave reads them as a read stream, its mark at the most until the master's
// end of the step), random sizes one way and both ways, a duration step whose end cuts reads in
// flight, then an iterations step on the same connections. Every byte agrees on both sides, and
// no reader waits past the step's end for bytes OpenSSL already holds: the run ends ok, in about
// its time.
TEST(Tls, StreamsOfLargeAndRandomSizesEndTheirStepsWithEveryByteReadAndNoStall) {
  const TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="tls streams">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tls"/></transaction>
    <transaction duration="2s"><flowop type="write" options="size=1m"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tls"/></transaction>
    <transaction duration="2s"><flowop type="write" options="size=rand(1,2000000)"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tls"/></transaction>
    <transaction duration="2s">
      <flowop type="write" options="size=rand(1,300000)"/>
      <flowop type="read" options="size=rand(1,100000)"/>
    </transaction>
    <transaction iterations="20">
      <flowop type="write" options="size=1m"/>
      <flowop type="read" options="size=7"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  EXPECT_EQ(run.doc.at("status"), "ok") << run.doc.dump();
  ASSERT_FALSE(run.doc.at("comparison").empty());
  for (const json& row : run.doc.at("comparison")) {
    EXPECT_EQ(row.at("master_bytes"), row.at("slave_bytes")) << row.dump();
  }
  EXPECT_GT(tls_count(run.doc.at("groups").at(0).at("transactions").at(1).at("flowops").at(0),
                      "bytes_written"),
            std::uint64_t{10} << 20)
      << "the stream moved";
  EXPECT_EQ(tls_count(run.doc.at("groups").at(2).at("transactions").at(2), "transactions"), 40U);
  EXPECT_LT(took, std::chrono::seconds(20)) << "a reader stalled at a step's end";
}

TEST(Tls, ResumeResumesEveryConnectAfterTheFirst) {
  for (const std::string version : {"1.3", "1.2"}) {
    const TempDir dir;
    const LocalRun run = run_local(dir, storm_profile("resume tls_version=" + version, "20"));
    ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
    for (const json* side : {&run.doc, &run.doc.at("slaves").at(0)}) {
      const json& h = handshakes_of(*side);
      EXPECT_EQ(tls_count(h.at("full"), "ops"), 1U) << version;
      EXPECT_EQ(tls_count(h.at("resumed"), "ops"), 19U) << version;
      EXPECT_NE(h.at("resumed").at("negotiated").get<std::string>().find("TLSv" + version),
                std::string::npos);
    }
    EXPECT_EQ(tls_count(run.doc.at("totals").at("tls_handshakes"), "resumed"), 19U);
    EXPECT_EQ(run.doc.at("status"), "ok");
  }
}

TEST(Tls, TheVersionAndCipherAskedForAreTheOnesNegotiated) {
  const TempDir dir;
  const LocalRun run =
      run_local(dir, storm_profile("tls_version=1.2 cipher=ECDHE-ECDSA-CHACHA20-POLY1305", "3"));
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  EXPECT_EQ(handshakes_of(run.doc).at("full").at("negotiated"),
            "TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305");
  EXPECT_EQ(handshakes_of(run.doc.at("slaves").at(0)).at("full").at("negotiated"),
            "TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305");
}

TEST(Tls, KernelTlsWhereTheKernelHasNoneFailsBeforeAnyTrafficOrFallsBackAndSaysSo) {
  if (transport::kernel_tls_missing().empty()) GTEST_SKIP() << "this kernel has TLS";
  const TempDir dir;
  const LocalRun required = run_local(dir, storm_profile("ktls", "3"));
  EXPECT_EQ(required.process.exit_code, 1);
  EXPECT_NE(required.process.err.find("ktls: this kernel has no TLS"), std::string::npos)
      << required.process.err;
  if (required.doc.is_object()) {
    EXPECT_EQ(tls_count(required.doc.at("totals"), "ops"), 0U) << "nothing ran";
  }
  const LocalRun fallback = run_local(dir, storm_profile("ktls=try", "3"));
  ASSERT_EQ(fallback.process.exit_code, 0) << fallback.process.err;
  EXPECT_NE(handshakes_of(fallback.doc)
                .at("full")
                .at("negotiated")
                .get<std::string>()
                .find("OpenSSL's record layer: this kernel has no TLS"),
            std::string::npos);
}

/// A certificate and key of its own for `volley serve`, in `dir`.
struct OwnCertificate {
  std::string cert;
  std::string key;
  std::string fingerprint;
};

OwnCertificate own_certificate(const TempDir& dir, const std::string& name) {
  auto made = transport::TlsIdentity::generate();
  const auto& id = std::get<transport::TlsIdentity>(made);
  OwnCertificate out{dir.write(name + ".crt", id.cert_pem()).string(),
                     dir.write(name + ".key", id.key_pem()).string(), id.fingerprint()};
  ::chmod(out.key.c_str(), 0600);
  return out;
}

/// Runs `openssl ARGS...`; a test failure when it fails.
void tls_test_openssl(std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/bin/openssl");
  Process p(args);
  const ProcessResult r = p.wait(std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

/// A CA (`ca.crt`) made with the openssl command, and a certificate it signs for each entry of
/// `alt_names` (a subjectAltName, e.g. "IP:127.0.0.1,DNS:localhost"), with its key: NAME.crt,
/// NAME.key for names leaf0, leaf1...
std::vector<OwnCertificate> ca_signed(const TempDir& dir,
                                      const std::vector<std::string>& alt_names) {
  const std::string at = dir.path().string() + "/";
  tls_test_openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "1", "-subj", "/CN=volley test CA", "-keyout", at + "ca.key",
                    "-out", at + "ca.crt"});
  std::vector<OwnCertificate> out;
  for (std::size_t i = 0; i < alt_names.size(); ++i) {
    const std::string name = at + "leaf" + std::to_string(i);
    const auto ext =
        dir.write("leaf" + std::to_string(i) + ".ext", "subjectAltName=" + alt_names[i] + "\n");
    tls_test_openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                      "-subj", "/CN=127.0.0.1", "-keyout", name + ".key", "-out", name + ".csr"});
    tls_test_openssl({"x509", "-req", "-in", name + ".csr", "-CA", at + "ca.crt", "-CAkey",
                      at + "ca.key", "-set_serial", std::to_string(i + 2), "-days", "1", "-extfile",
                      ext.string(), "-out", name + ".crt"});
    ::chmod((name + ".key").c_str(), 0600);
    out.push_back(OwnCertificate{name + ".crt", name + ".key", ""});
  }
  return out;
}

TEST(Tls, ASlaveWithItsOwnCertificateIsTrustedByPin) {
  const TempDir dir;
  const OwnCertificate mine = own_certificate(dir, "slave");
  Serve serve({"--tls-cert", mine.cert, "--tls-key", mine.key});
  ASSERT_TRUE(serve.listening());
  const auto profile = dir.write("p.xml", storm_profile("", "3"));
  {
    const ProcessResult r =
        run_volley({"run", profile.string(), "-P", serve.port_text(), "--set", "h=127.0.0.1", "-q",
                    "--json", (dir.path() / "r.json").string()},
                   std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json doc = read_json(dir.path() / "r.json");
    EXPECT_EQ(tls_count(handshakes_of(doc).at("full"), "ops"), 3U);
  }
  // A CA the slave's certificate is not from: the run fails on the handshakes, naming the slave.
  const OwnCertificate stranger = own_certificate(dir, "stranger");
  const ProcessResult refused =
      run_volley({"run", profile.string(), "-P", serve.port_text(), "--set", "h=127.0.0.1", "-q",
                  "--tls-ca", stranger.cert},
                 std::chrono::seconds(60));
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  const std::string said = refused.out + refused.err;
  EXPECT_NE(said.find("tls_handshake"), std::string::npos) << said;
  EXPECT_NE(said.find("TLS handshake with 127.0.0.1"), std::string::npos) << said;
  EXPECT_NE(said.find("certificate verify failed"), std::string::npos) << said;
  // The slave served on: another run still works.
  EXPECT_EQ(
      run_volley({"run", profile.string(), "-P", serve.port_text(), "--set", "h=127.0.0.1", "-q"},
                 std::chrono::seconds(60))
          .exit_code,
      0);
}

// With --tls-ca the slave's certificate must come from the CA and name the host the master
// connected to in its subjectAltName: an IP address for an address, a DNS name for a name. A
// certificate for another host fails the run (exit 1) with a tls_handshake error naming it.
TEST(Tls, ACaVerifiedSlaveMustBeTheHostConnectedTo) {
  const TempDir dir;
  const std::vector<OwnCertificate> leaves =
      ca_signed(dir, {"IP:127.0.0.1,DNS:localhost", "IP:127.0.0.2,DNS:elsewhere.invalid"});
  ASSERT_EQ(leaves.size(), 2U);
  const std::string ca = (dir.path() / "ca.crt").string();
  const auto profile = dir.write("p.xml", storm_profile("", "3"));
  const auto run_against = [&](const Serve& serve, const std::string& host) {
    return run_volley({"run", profile.string(), "-P", serve.port_text(), "--set", "h=" + host, "-q",
                       "--tls-ca", ca, "--json", (dir.path() / "r.json").string()},
                      std::chrono::seconds(60));
  };
  {
    Serve right({"--tls-cert", leaves[0].cert, "--tls-key", leaves[0].key});
    ASSERT_TRUE(right.listening());
    for (const std::string host : {"127.0.0.1", "localhost"}) {
      const ProcessResult r = run_against(right, host);
      EXPECT_EQ(r.exit_code, 0) << host << ": " << r.out << r.err;
      EXPECT_EQ(tls_count(handshakes_of(read_json(dir.path() / "r.json")).at("full"), "ops"), 3U)
          << host;
    }
  }
  Serve wrong({"--tls-cert", leaves[1].cert, "--tls-key", leaves[1].key});
  ASSERT_TRUE(wrong.listening());
  for (const auto& [host, why] :
       {std::pair<std::string, std::string>{"127.0.0.1", "IP address mismatch"},
        {"localhost", "hostname mismatch"}}) {
    const ProcessResult r = run_against(wrong, host);
    EXPECT_EQ(r.exit_code, 1) << host << ": " << r.out << r.err;
    const std::string said = r.out + r.err;
    EXPECT_NE(said.find("tls_handshake"), std::string::npos) << said;
    EXPECT_NE(said.find("TLS handshake with " + host), std::string::npos) << said;
    EXPECT_NE(said.find(why + ": the certificate's subjectAltName does not name " + host),
              std::string::npos)
        << said;
  }
}

TEST(Tls, ServeRefusesToStartWithACertificateThatIsNotItsKeysNamingTheFile) {
  const TempDir dir;
  const OwnCertificate one = own_certificate(dir, "one");
  const OwnCertificate two = own_certificate(dir, "two");
  const ProcessResult r =
      run_volley({"serve", "--listen", "127.0.0.1:1", "--tls-cert", one.cert, "--tls-key", two.key},
                 std::chrono::seconds(10));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tls-key '" + two.key + "' is not the key of the certificate"),
            std::string::npos)
      << r.err;
  const ProcessResult missing = run_volley(
      {"serve", "--listen", "127.0.0.1:1", "--tls-cert", one.cert, "--tls-key", "/nonexistent"},
      std::chrono::seconds(10));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--tls-key '/nonexistent': cannot read it"), std::string::npos)
      << missing.err;
  const ProcessResult half = run_volley(
      {"serve", "--listen", "127.0.0.1:1", "--tls-cert", one.cert}, std::chrono::seconds(10));
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_NE(half.err.find("--tls-cert needs --tls-key"), std::string::npos) << half.err;
}

// Private keys travel only where they must (to a side's own child processes, over their
// socketpair): never into what a run writes or says. Both sides accept TLS (each makes a key) and
// spread over processes (each hands its key to its children), with every output asked for.
TEST(Tls, NoPrivateKeyReachesAResultALogOrTheReport) {
  const TempDir dir;
  const auto profile = dir.write("both.xml", R"XML(<?xml version="1.0"?>
<profile name="tls both ways">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tls"/></transaction>
    <transaction iterations="50"><flowop type="write" options="size=64"/><flowop type="read" options="size=64"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="2">
    <transaction iterations="1"><flowop type="accept" options="remotehost=$h protocol=tls"/></transaction>
    <transaction iterations="50"><flowop type="read" options="size=64"/><flowop type="write" options="size=64"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  const ProcessResult r = run_volley(
      {"run", profile.string(), "--local", "--processes", "2", "--json",
       (dir.path() / "r.json").string(), "--csv", (dir.path() / "r.csv").string(), "--html",
       (dir.path() / "r.html").string(), "--latency-log", (dir.path() / "r.lat").string()},
      std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = read_json(dir.path() / "r.json");
  EXPECT_EQ(tls_count(handshakes_of(doc).at("full"), "ops"), 2U) << "the run did use TLS";
  EXPECT_EQ(tls_count(doc.at("groups")
                          .at(1)
                          .at("transactions")
                          .at(0)
                          .at("flowops")
                          .at(0)
                          .at("handshakes")
                          .at("full"),
                      "ops"),
            2U)
      << "the master accepted TLS: it made a key";
  EXPECT_EQ(doc.at("slaves").at(0).at("processes").size(), 2U) << "keys went to children";
  std::string everything = r.out + r.err;
  for (const char* name : {"r.json", "r.csv", "r.html", "r.lat"}) {
    std::ifstream in(dir.path() / name);
    everything.append(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_GT(everything.size(), 1000U) << "the outputs were written";
  EXPECT_EQ(everything.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(everything.find("-----BEGIN"), std::string::npos);
}

}  // namespace
}  // namespace volley::test
