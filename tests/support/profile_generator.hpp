#pragma once
// Seeded random profiles that are valid by construction, to test the class of profiles rather
// than hand-picked instances: groups of strands, transactions bound by iterations or duration,
// any mix of connect/accept/read/write/send/recv/sendfile/sendfilev/think/nop/disconnect, fixed
// and rand() sizes, rsize, count, canfail, several named connections, and one or two slaves
// (127.0.0.1 and 127.0.0.2, both served by `volley run --local`).
//
// Valid by construction means: every connection is opened before it is used and closed only when
// open (also across the repeats of a transaction body); each profile parses with no error and no
// warning. The mirror rules make the slave's side consistent by themselves (a master write is a
// slave read), so any such profile must either run with equal bytes on both sides or fail with a
// sentence naming why. The same seed gives the same profile on every platform (the generator has
// its own random stream; it does not use <random>'s distributions).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace volley::test {

struct GeneratedProfile {
  std::uint64_t seed = 0;
  std::string text;  ///< the profile; uses $file (one file) and $dir (a folder of files)
  /// What the run should take on an idle machine: the sum over barrier steps of the longest
  /// duration or estimated iteration time. A hang guard adds its own slack to it.
  std::chrono::milliseconds nominal{0};
  bool two_slaves = false;
};

/// The profile for `seed` (any value; equal seeds give equal profiles).
GeneratedProfile generate_profile(std::uint64_t seed);

/// What tests pass as $file and $dir: writes `file.bin` and `files/` (three files of different
/// sizes) under `folder`. Returns the `--set` arguments that name them.
std::vector<std::string> write_generator_files(const std::filesystem::path& folder);

}  // namespace volley::test
