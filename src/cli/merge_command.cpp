// `volley merge A.json B.json ...`: one result from masters that ran at the same time. The
// merging itself is analysis::merge_run_documents; this reads the files, prints, writes --json
// and picks the exit code.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "volley/analysis/merge.hpp"
#include "volley/cli/commands.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/report/json_report.hpp"

namespace volley::cli {

CLI::App* add_merge(CLI::App& app, MergeOptions& options) {
  auto* merge = app.add_subcommand(
      "merge", "Combine the results of masters that ran at the same time into one");
  merge
      ->add_option("documents", options.documents,
                   "Result documents (volley run --json) of masters that ran together")
      ->required()
      ->expected(2, -1)
      ->type_name("FILE");
  merge->add_option("--json", options.json, "Write the merged document to FILE (- for stdout)")
      ->type_name("FILE");
  merge->footer(
      "Example:\n  volley merge master-0.json master-1.json --json merged.json\n"
      "Counts and bytes add up; latency percentiles come from the merged histograms (exact);\n"
      "CPU and NIC stay per host; the window is the overlap of the timed parts.\n"
      "Exit status: 0; 1 when some master's run failed (the merge is still written); 2 unreadable\n"
      "documents, different profiles, or masters that did not run at the same time.");
  return merge;
}

int merge_command(const MergeOptions& options) {
  std::vector<analysis::MergeSource> sources;
  for (const std::string& path : options.documents) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << fmt::format("volley: cannot read '{}': {}\n", path, std::strerror(errno));
      return core::to_int(core::ExitCode::kBadInput);
    }
    std::ostringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (doc.is_discarded()) {
      std::cerr << fmt::format("volley: '{}' is not JSON\n", path);
      return core::to_int(core::ExitCode::kBadInput);
    }
    sources.push_back({path, std::move(doc)});
  }
  const analysis::MergeOutcome merged = analysis::merge_run_documents(sources);
  if (!merged.error.empty()) {
    std::cerr << "volley: merge: " << merged.error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  // With --json -, stdout carries the document; the text goes to stderr.
  std::ostream& text = options.json == "-" ? std::cerr : std::cout;
  text << analysis::format_merged(merged.document) << std::flush;
  bool written = true;
  if (!options.json.empty()) {
    if (options.json == "-") {
      report::write_pretty_json(merged.document, std::cout);
      std::cout.flush();
    } else {
      std::ofstream out(options.json, std::ios::binary | std::ios::trunc);
      report::write_pretty_json(merged.document, out);
      out.flush();
      if (!out) {
        std::cerr << fmt::format("volley: cannot write '{}'\n", options.json);
        written = false;
      }
    }
  }
  if (!merged.warning.empty()) {
    std::cerr << "volley: merge: " << merged.warning << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  return core::to_int(written ? core::ExitCode::kOk : core::ExitCode::kRunFailed);
}

}  // namespace volley::cli
