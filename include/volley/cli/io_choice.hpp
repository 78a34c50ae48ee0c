#pragma once
// --io: which engine waits for the sockets (engine::IoEngine), as `volley run` and `volley serve`
// take it: epoll (the default), uring, or auto (io_uring where this machine can set a ring up,
// else epoll, saying so).
#include <string>
#include <variant>

#include <CLI/CLI.hpp>

#include "volley/core/exit_code.hpp"
#include "volley/engine/io_engine.hpp"

namespace volley::cli {

/// Adds --io to `cmd`, its value checked (epoll, uring or auto) into `choice`.
void add_io_option(CLI::App& cmd, std::string& choice);

/// Why --io cannot be had: one sentence, and the exit status it calls for (kBadInput for a
/// VOLLEY_IO that names no engine, kRunFailed where io_uring cannot be set up).
struct IoProblem {
  std::string why;
  core::ExitCode code = core::ExitCode::kRunFailed;
};

/// The engine `choice` (empty: $VOLLEY_IO, else epoll) stands for on this machine. "uring" where
/// io_uring cannot be set up is a problem; "auto" then falls back to epoll, and `note` says so.
std::variant<engine::IoEngine, IoProblem> resolve_io(const std::string& choice, std::string& note);

/// "epoll" or "uring".
const char* io_name(engine::IoEngine io);

}  // namespace volley::cli
