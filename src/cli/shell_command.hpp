#pragma once
// A user's command, run through /bin/sh -c as the user who runs volley, on this host: what an
// interleaved comparison runs to switch a setting. Its output goes to stderr (stdout may carry
// the JSON document), and volley waits for it to end.
#include <string>

namespace volley::cli {

/// "" when `command` ran and exited 0; else a sentence: its exit status or the signal that
/// ended it, or why it could not start.
std::string run_shell(const std::string& command);

}  // namespace volley::cli
