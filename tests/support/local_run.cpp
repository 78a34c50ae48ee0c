#include "support/local_run.hpp"

#include <fstream>

namespace volley::test {

LocalRun run_local(const TempDir& dir, const std::string& xml, std::vector<std::string> extra,
                   std::chrono::milliseconds limit) {
  const auto profile = dir.write("p.xml", xml);
  const auto out = dir.path() / "r.json";
  std::vector<std::string> args{"run", profile.string(), "--local", "--json", out.string(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  LocalRun run{run_volley(args, limit), {}};
  run.doc = read_json(out);
  return run;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

}  // namespace volley::test
