// deploy/kubernetes/ must not rot. render.sh writes its manifests for N master-slave pairs; these
// tests render them for 2 and for 16 pairs (no cluster) and check what a cluster would be given:
// every volley command line passes volley's own parser (define_command_line) and the profile of
// `run` passes `volley check`; master I, with the index Kubernetes gives it, loads slave I by the
// StatefulSet pod's own name, and each slave has exactly one master; every container's CPU and
// memory requests equal its limits; the merge names all N documents; results travel through
// pod-local volumes and container logs, never a shared volume; the first failed master fails the
// Job. Command lines are written in one known form, a flow sequence of double-quoted strings on
// one line (`command: ["volley", "run", ...]`), which is also JSON; a volley command in any other
// form fails the test rather than go unchecked. The objects are read with python3-yaml (the tests
// that need them are skipped without it). run.sh and image.sh run against stand-ins for kubectl
// and docker.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/paths.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "volley/cli/command_line.hpp"
#include "volley/core/wall_time.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path& example_dir() {
  static const fs::path dir = source_dir() / "deploy/kubernetes";
  return dir;
}

/// Runs ARGS (ARGS[0] found on PATH) with render.sh's and image.sh's settings unset, as a user
/// who set none would.
ProcessResult run_script(std::vector<std::string> args) {
  std::vector<std::string> full{"/usr/bin/env"};
  for (const char* name : {"VOLLEY_IMAGE", "VOLLEY_CPUS", "VOLLEY_MEMORY", "VOLLEY_STRANDS",
                           "VOLLEY_DEADLINE", "DOCKER"}) {
    full.insert(full.end(), {"-u", name});
  }
  full.insert(full.end(), args.begin(), args.end());
  Process p(std::move(full));
  return p.wait(std::chrono::seconds(60));
}

struct VolleyLine {
  std::string where;  // file:line
  std::vector<std::string> args;
};

/// The volley command lines of the rendered manifests; a line that mentions volley as a command
/// in another form is a test failure.
std::vector<VolleyLine> volley_lines(const std::vector<fs::path>& files) {
  std::vector<VolleyLine> out;
  const std::regex flow(R"(^\s*(command|args):\s*(\[.*\])\s*$)");
  const std::regex other_form(R"(^\s*(-\s*"?volley"?\s*$|(command|args):.*volley))");
  for (const auto& path : files) {
    std::istringstream in(read_file(path));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string where = fmt::format("{}:{}", path.filename().string(), n);
      std::smatch m;
      if (std::regex_match(line, m, flow)) {
        const auto seq = json::parse(m[2].str(), nullptr, false);
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

/// What Kubernetes would substitute in master `index`'s command, and where the packaged profiles
/// are in the source tree.
std::string resolve(std::string arg, const std::string& start_at, std::size_t index) {
  arg = std::regex_replace(arg, std::regex(R"(\$\(START_AT\))"), start_at);
  arg = std::regex_replace(arg, std::regex(R"(\$\(JOB_COMPLETION_INDEX\))"), std::to_string(index));
  const std::string packaged = "/usr/share/volley/profiles/";
  if (arg.rfind(packaged, 0) == 0)
    arg = (source_dir() / "profiles" / arg.substr(packaged.size())).string();
  return arg;
}

/// A command line of master `index` (resolved) through volley's own parser; nullopt (and a
/// failure) when it refuses it.
std::optional<cli::CommandLine> parse_volley(const std::vector<std::string>& line,
                                             std::size_t index = 0,
                                             const std::string& start_at = "1") {
  std::vector<std::string> args;
  for (std::size_t i = line.size(); i-- > 1;)  // CLI11 takes them reversed
    args.push_back(resolve(line[i], start_at, index));
  CLI::App app;
  cli::CommandLine cl;
  cli::define_command_line(app, cl);
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    ADD_FAILURE() << "volley's parser refuses it: " << e.what();
    return std::nullopt;
  }
  return cl;
}

/// The value NAME has in `--set NAME=VALUE` settings.
std::string set_value(const std::vector<std::string>& sets, const std::string& name) {
  for (const auto& s : sets) {
    if (s.rfind(name + "=", 0) == 0) return s.substr(name.size() + 1);
  }
  return "";
}

/// Every key named `key` anywhere in `j`.
std::size_t count_key(const json& j, const std::string& key) {
  std::size_t n = 0;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) n += (k == key) + count_key(v, key);
  } else if (j.is_array()) {
    for (const auto& v : j) n += count_key(v, key);
  }
  return n;
}

/// A pod spec's init containers and containers, in order.
std::vector<json> all_containers(const json& pod_spec) {
  std::vector<json> out;
  for (const char* k : {"initContainers", "containers"}) {
    for (const auto& c : pod_spec.value(k, json::array())) out.push_back(c);
  }
  return out;
}

/// A container's command.
std::vector<std::string> command_of(const json& container) {
  return container.value("command", std::vector<std::string>{});
}

/// The container whose command starts with `volley SUB`.
json volley_container(const json& pod_spec, const std::string& sub) {
  for (const auto& c : all_containers(pod_spec)) {
    const json cmd = c.value("command", json::array());
    if (cmd.size() > 1 && cmd[0] == "volley" && cmd[1] == sub) return c;
  }
  ADD_FAILURE() << "no container runs volley " << sub;
  return json::object();
}

/// The volume mounted at `path` in container `c`, or "".
std::string volume_at(const json& c, const std::string& path) {
  for (const auto& m : c.value("volumeMounts", json::array())) {
    if (m.value("mountPath", "") == path) return m.value("name", "");
  }
  return "";
}

/// The manifests rendered for GetParam() pairs, as files and (with python3-yaml) as documents.
class KubernetesPairs : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override {
    const ProcessResult r = run_script({"bash", (example_dir() / "render.sh").string(),
                                        std::to_string(pairs()), dir_.path().string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const auto& e : fs::directory_iterator(dir_.path())) files_.push_back(e.path());
    std::sort(files_.begin(), files_.end());
    for (const auto& f : files_) {
      const std::string text = read_file(f);
      EXPECT_FALSE(std::regex_search(text, std::regex("@[A-Z]+@"))) << f << ": a placeholder left";
    }
  }

  [[nodiscard]] std::size_t pairs() const { return GetParam(); }

  /// Loads docs_; false when the test is skipped (no python3-yaml) or failed (not YAML).
  bool documents_loaded() {
    load_documents();
    return !IsSkipped() && !HasFatalFailure();
  }

  /// Every document of every manifest, keyed "Kind name"; skips the test without python3-yaml.
  void load_documents() {
    if (std::system("python3 -c 'import yaml' >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "python3-yaml is not installed (scripts/install-deps.sh installs it)";
    }
    std::vector<std::string> args{
        "python3", "-c",
        "import sys, json, yaml\n"
        "json.dump([d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f))], sys.stdout)"};
    for (const auto& f : files_) args.push_back(f.string());
    const ProcessResult r = run_script(args);
    ASSERT_EQ(r.exit_code, 0) << "not valid YAML: " << r.err;
    for (const auto& d : json::parse(r.out)) {
      docs_[d.at("kind").get<std::string>() + " " +
            d.at("metadata").at("name").get<std::string>()] = d;
    }
  }

  /// A copy (missing keys read as null), or an empty object and a failure.
  json doc(const std::string& kind_and_name) {
    const auto it = docs_.find(kind_and_name);
    if (it == docs_.end()) {
      ADD_FAILURE() << kind_and_name << " is missing";
      return json::object();
    }
    return it->second;
  }

  /// The pod specs of the slaves, the masters and the merge.
  std::map<std::string, json> pod_specs() {
    return {{"slaves", doc("StatefulSet volley-slave")["spec"]["template"]["spec"]},
            {"masters", doc("Job volley-master")["spec"]["template"]["spec"]},
            {"merge", doc("Pod volley-merge")["spec"]}};
  }

  TempDir dir_;
  std::vector<fs::path> files_;
  std::map<std::string, json> docs_;
};

TEST_P(KubernetesPairs, EveryVolleyCommandLineParsesAndItsProfileChecks) {
  // A start time as run.sh writes it: Unix seconds, a minute ahead.
  const std::string start_at = std::to_string(core::unix_now_ns() / 1'000'000'000 + 60);
  std::set<std::string> seen;
  for (const VolleyLine& line : volley_lines(files_)) {
    SCOPED_TRACE(line.where);
    const auto cl = parse_volley(line.args, pairs() - 1, start_at);
    if (!cl) continue;
    const std::string sub = line.args.at(1);
    seen.insert(sub);
    if (sub == "run") {
      const auto t = core::parse_wall_time(cl->run.start_at);
      EXPECT_TRUE(t.unix_ns.has_value()) << t.error;
      if (t.unix_ns) {
        EXPECT_EQ(core::check_start_time(*t.unix_ns, core::unix_now_ns()), "");
      }
      EXPECT_FALSE(cl->run.json.empty()) << "a master must write its document for the merge";
      EXPECT_EQ(cli::check_command(cli::CheckOptions{{cl->run.profile}, cl->run.set, true, ""}), 0)
          << "volley check " << cl->run.profile << " fails";
      // Master I loads slave I (MasterILoadsSlaveIAloneByItsStableName ties the names to the
      // objects; this holds without python3-yaml too).
      for (std::size_t i = 0; i < pairs(); ++i) {
        const auto master = parse_volley(line.args, i, start_at);
        ASSERT_TRUE(master);
        EXPECT_EQ(set_value(master->run.set, "h"), fmt::format("volley-slave-{}.volley-slave", i));
      }
    }
    if (sub == "merge") {
      std::vector<std::string> expected;
      for (std::size_t i = 0; i < pairs(); ++i)
        expected.push_back(fmt::format("/results/master-{}.json", i));
      EXPECT_EQ(cl->merge.documents, expected) << "the merge must name every master's document";
      EXPECT_FALSE(cl->merge.json.empty());
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"serve", "run", "merge"}));
}

TEST_P(KubernetesPairs, ObjectsAreTheExpectedKindsAndNoSharedVolume) {
  if (!documents_loaded()) return;
  std::set<std::string> names;
  for (const auto& [name, d] : docs_) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"StatefulSet volley-slave", "Service volley-slave",
                                          "Job volley-master", "Pod volley-merge"}));
  for (const auto& [name, d] : docs_) {
    EXPECT_EQ(count_key(d, "persistentVolumeClaim"), 0U) << name << " mounts a shared volume";
  }
}

TEST_P(KubernetesPairs, MasterILoadsSlaveIAloneByItsStableName) {
  if (!documents_loaded()) return;
  json slaves = doc("StatefulSet volley-slave");
  json service = doc("Service volley-slave");
  json job = doc("Job volley-master");
  // Each slave pod has a DNS name of its own: a headless Service that governs the StatefulSet.
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  EXPECT_EQ(slaves["spec"]["serviceName"], service["metadata"]["name"]);
  EXPECT_EQ(slaves["spec"]["replicas"], pairs());
  const json labels = slaves["spec"]["template"]["metadata"]["labels"];
  for (const json* selector :
       {&service["spec"]["selector"], &slaves["spec"]["selector"]["matchLabels"]}) {
    for (const auto& [k, v] : selector->items()) EXPECT_EQ(labels.value(k, json()), v) << k;
  }
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], pairs());
  EXPECT_EQ(job["spec"]["parallelism"], pairs()) << "every master at once";

  const json master = volley_container(job["spec"]["template"]["spec"], "run");
  const auto serve =
      parse_volley(command_of(volley_container(slaves["spec"]["template"]["spec"], "serve")));
  ASSERT_TRUE(serve);
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < pairs(); ++i) {
    const auto run = parse_volley(command_of(master), i);
    ASSERT_TRUE(run);
    const std::string host = set_value(run->run.set, "h");
    EXPECT_EQ(host, fmt::format("{}-{}.{}", slaves["metadata"]["name"].get<std::string>(), i,
                                service["metadata"]["name"].get<std::string>()))
        << "master " << i << " must load slave " << i;
    hosts.insert(host);
    EXPECT_EQ(serve->serve.listen, fmt::format("0.0.0.0:{}", run->run.port));
  }
  EXPECT_EQ(hosts.size(), pairs()) << "two masters load one slave";
  EXPECT_EQ(service["spec"]["ports"][0]["port"], 20000);
}

TEST_P(KubernetesPairs, EveryContainerRequestsWhatItIsLimitedTo) {
  if (!documents_loaded()) return;
  for (const auto& [pod, spec] : pod_specs()) {
    for (const json& c : all_containers(spec)) {
      SCOPED_TRACE(pod + ": " + c.value("name", "?"));
      json res = c.value("resources", json::object());
      for (const char* what : {"cpu", "memory"}) {
        ASSERT_TRUE(res.contains("requests") && res["requests"].contains(what)) << what;
        ASSERT_TRUE(res.contains("limits") && res["limits"].contains(what)) << what;
        EXPECT_EQ(res["requests"][what], res["limits"][what]) << what;
      }
      // volley counts the node's cores, not the container's: --workers must say how many.
      const auto cmd = command_of(c);
      if (cmd.size() > 1 && cmd[0] == "volley" && cmd[1] != "merge") {
        const auto cl = parse_volley(cmd);
        ASSERT_TRUE(cl);
        const std::size_t workers = cmd[1] == "run" ? cl->run.workers : cl->serve.workers;
        EXPECT_EQ(std::to_string(workers), res["limits"]["cpu"].get<std::string>());
      }
    }
  }
}

TEST_P(KubernetesPairs, ResultsTravelThroughPodVolumesAndLogs) {
  if (!documents_loaded()) return;
  auto specs = pod_specs();
  for (const std::string sub : {"run", "merge"}) {
    SCOPED_TRACE(sub);
    json spec = specs[sub == "run" ? "masters" : "merge"];
    // The document volley writes is what the one container `result` prints, from an emptyDir.
    const json volley = volley_container(spec, sub);
    const auto cl = parse_volley(command_of(volley));
    ASSERT_TRUE(cl);
    const fs::path document = sub == "run" ? cl->run.json : cl->merge.json;
    ASSERT_EQ(spec["containers"].size(), 1U);
    json result = spec["containers"][0];
    EXPECT_EQ(result["name"], "result");
    EXPECT_EQ(result["command"], json::array({"cat", document.string()}));
    const std::string volume = volume_at(volley, document.parent_path().string());
    EXPECT_EQ(volume_at(result, document.parent_path().string()), volume);
    for (const auto& v : spec["volumes"]) {
      if (v["name"] == volume) {
        EXPECT_TRUE(v.contains("emptyDir")) << volume;
      }
    }
    EXPECT_EQ(spec["restartPolicy"], "Never");
  }
  // The merge reads what run.sh uploads into the init container `upload`, on the same volume.
  json upload = specs["merge"]["initContainers"][0];
  EXPECT_EQ(upload["name"], "upload");
  EXPECT_EQ(volume_at(upload, "/results"),
            volume_at(volley_container(specs["merge"], "merge"), "/results"));
}

TEST_P(KubernetesPairs, TheFirstFailedMasterFailsTheJob) {
  if (!documents_loaded()) return;
  json job = doc("Job volley-master");
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  EXPECT_GT(job["spec"].value("activeDeadlineSeconds", 0), 0);
  EXPECT_GT(doc("Pod volley-merge")["spec"].value("activeDeadlineSeconds", 0), 0);
}

TEST_P(KubernetesPairs, EveryVariableOfACommandIsDefinedInItsContainer) {
  if (!documents_loaded()) return;
  for (const auto& [pod, spec] : pod_specs()) {
    for (const json& c : all_containers(spec)) {
      // Kubernetes substitutes $(NAME) for the container's variables and leaves others as text;
      // it gives every container of an Indexed Job's pods JOB_COMPLETION_INDEX.
      std::set<std::string> defined;
      for (const auto& e : c.value("env", json::array())) defined.insert(e.value("name", ""));
      if (pod == "masters") defined.insert("JOB_COMPLETION_INDEX");
      const std::string cmd = c.value("command", json::array()).dump();
      const std::regex var(R"(\$\(([A-Za-z_][A-Za-z0-9_]*)\))");
      for (std::sregex_iterator it(cmd.begin(), cmd.end(), var), end; it != end; ++it) {
        EXPECT_EQ(defined.count((*it)[1]), 1U)
            << pod << ", " << c.value("name", "") << ": " << (*it)[0];
      }
    }
  }
}

std::string pairs_name(const ::testing::TestParamInfo<std::size_t>& p) {
  return fmt::format("pairs{}", p.param);
}
INSTANTIATE_TEST_SUITE_P(Rendered, KubernetesPairs, ::testing::Values(2, 16), pairs_name);

TEST(KubernetesExample, RenderRefusesWhatNoManifestCouldHold) {
  const TempDir dir;
  const std::string render = (example_dir() / "render.sh").string();
  EXPECT_EQ(run_script({"bash", render, "0", dir.path().string()}).exit_code, 2);
  EXPECT_EQ(run_script({"VOLLEY_IMAGE=a|b", "bash", render, "2", dir.path().string()}).exit_code,
            2);
  EXPECT_EQ(run_script({"VOLLEY_CPUS=1.5", "bash", render, "2", dir.path().string()}).exit_code, 2);
}

TEST(KubernetesExample, ImageContextHoldsOnlyTheDockerfileAndThePackage) {
  // A build folder with the package among other things, and a docker that lists its context.
  const TempDir dir;
  dir.write("build/volley_0.1.0_amd64.deb", "a package");
  dir.write("build/src/CMakeFiles/objects.o", std::string(1 << 20, 'x'));
  const fs::path docker =
      dir.write("docker", "#!/bin/sh\necho \"$@\" > \"$0.args\"\nls -A \"$4\" > \"$0.context\"\n");
  fs::permissions(docker, fs::perms::owner_all);
  const ProcessResult r =
      run_script({"DOCKER=" + docker.string(), "bash", (example_dir() / "image.sh").string(),
                  (dir.path() / "build").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_file(docker.string() + ".context"), "Dockerfile\nvolley_0.1.0_amd64.deb\n");
  std::string args = read_file(docker.string() + ".args");
  EXPECT_EQ(args.rfind("build -t volley:0.1.0 /", 0), 0U) << args;
  args.pop_back();  // the newline
  EXPECT_FALSE(fs::exists(args.substr(args.rfind(' ') + 1))) << "the context is left behind";
  // No package, or two: refused.
  fs::remove(dir.path() / "build/volley_0.1.0_amd64.deb");
  EXPECT_EQ(run_script({"DOCKER=" + docker.string(), "bash", (example_dir() / "image.sh").string(),
                        (dir.path() / "build").string()})
                .exit_code,
            1);
}

/// run.sh against tests/data/kubernetes/fake-kubectl.sh, a kubectl that answers as a cluster
/// would in `scenario`, each master printing `document` as its result.
struct FakeCluster {
  TempDir dir;
  ProcessResult run(const std::string& scenario, std::size_t pairs, const fs::path& document) {
    const fs::path kubectl =
        dir.write("bin/kubectl", read_file(data_dir() / "kubernetes/fake-kubectl.sh"));
    fs::permissions(kubectl, fs::perms::owner_all);
    dir.mkdir("state");
    const char* path = std::getenv("PATH");
    return run_script({"PATH=" + (dir.path() / "bin").string() + ":" + (path ? path : ""),
                       "FAKE_KUBECTL_SCENARIO=" + scenario,
                       "FAKE_KUBECTL_STATE=" + (dir.path() / "state").string(),
                       "FAKE_KUBECTL_DOCUMENT=" + document.string(),
                       "FAKE_KUBECTL_VOLLEY=" VOLLEY_BINARY, "OUT=" + (dir.path() / "out").string(),
                       "bash", (example_dir() / "run.sh").string(), std::to_string(pairs)});
  }
  [[nodiscard]] std::string calls() const { return read_file(dir.path() / "state/calls"); }
};

TEST(KubernetesExample, RunShGathersEveryMastersDocumentAndMergesThem) {
  // A real result document: each fake master prints it, and the merge is volley's own.
  const TempDir scratch;
  const fs::path document = scratch.path() / "master.json";
  const ProcessResult made =
      run_volley({"run", (source_dir() / "profiles/pingpong.xml").string(), "--local", "--set",
                  "t=1", "--max-duration", "1s", "--json", document.string(), "-q"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  FakeCluster cluster;
  const ProcessResult r = cluster.run("succeed", 3, document);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.calls();
  const fs::path out = cluster.dir.path() / "out";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read_file(out / fmt::format("master-{}.json", i)), read_file(document)) << i;
    EXPECT_EQ(read_file(out / fmt::format("master-{}.txt", i)),
              fmt::format("report of volley-master-{}-aaaaa\n", i));
  }
  EXPECT_NE(r.out.find("volley merge: 3 masters, status ok"), std::string::npos) << r.out;
  const json merged = json::parse(read_file(out / "merged.json"), nullptr, false);
  EXPECT_EQ(merged.value("kind", ""), "merge");
  EXPECT_EQ(merged.value("sources", json::array()).size(), 3U);
  // In order: the slaves ready before the masters start; the merge after the last document.
  const std::string calls = cluster.calls();
  const auto at = [&](const std::string& call) { return calls.find(call); };
  EXPECT_LT(at("rollout status statefulset/volley-slave"), at("/masters.yaml"));
  EXPECT_LT(at("logs volley-master-2-aaaaa -c result"), at("/merge.yaml"));
}

TEST(KubernetesExample, RunShStopsAtOnceWhenAMasterFails) {
  for (const std::string scenario : {"pod-failed", "job-failed"}) {
    SCOPED_TRACE(scenario);
    FakeCluster cluster;
    const auto start = std::chrono::steady_clock::now();
    const ProcessResult r = cluster.run(scenario, 3, "/nonexistent");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("the masters failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(scenario == "pod-failed" ? "volley run: slave lost" : "DeadlineExceeded"),
              std::string::npos)
        << "what failed is named: " << r.err;
    EXPECT_EQ(cluster.calls().find("merge.yaml"), std::string::npos) << "no merge after a failure";
  }
}

}  // namespace
}  // namespace volley::test
