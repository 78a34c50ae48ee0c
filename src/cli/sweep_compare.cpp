#include "volley/cli/commands.hpp"
#include "volley/core/exit_code.hpp"

namespace volley::cli {

void add_sweep_and_compare(CLI::App& /*app*/, SweepCompareOptions& /*options*/) {}

int sweep_or_compare_command(CLI::App& /*app*/, const SweepCompareOptions& /*options*/) {
  return core::to_int(core::ExitCode::kBadInput);
}

}  // namespace volley::cli
