#pragma once
// A real `volley run --local` of a profile text, through the CLI, with its JSON document: the
// block the integration tests of whole runs share.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {

struct LocalRun {
  ProcessResult process;
  nlohmann::json doc;  ///< discarded when the run wrote no (or no valid) document
};

/// Writes `xml` to `dir`/p.xml and runs `volley run p.xml --local --json r.json -q EXTRA...`,
/// killed after `limit` (a hang guard).
LocalRun run_local(const TempDir& dir, const std::string& xml, std::vector<std::string> extra = {},
                   std::chrono::milliseconds limit = std::chrono::seconds(60));

/// The JSON document in `path`; discarded when it is missing or malformed.
nlohmann::json read_json(const std::filesystem::path& path);

}  // namespace volley::test
