#pragma once
// The process exit status says what kind of failure happened. Only cli::App picks one.

namespace volley::core {

enum class ExitCode : int {
  kOk = 0,            ///< the run finished and met no error beyond what `canfail` allows
  kRunFailed = 1,     ///< the run failed: slave lost, unreachable, or errors beyond `canfail`
  kBadInput = 2,      ///< bad profile or bad command line: nothing was run
  kInterrupted = 130  ///< stopped by SIGINT/SIGTERM; what was measured is still reported
};

constexpr int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace volley::core
