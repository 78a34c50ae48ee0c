#pragma once
// --io: which engine waits for the sockets (engine::IoEngine), as `volley run` and `volley serve`
// take it: epoll (the default), uring, or auto (io_uring where this machine can set a ring up,
// else epoll, saying so).
#include <string>
#include <variant>

#include <CLI/CLI.hpp>

#include "volley/engine/engine.hpp"

namespace volley::cli {

/// Adds --io to `cmd`, its value checked (epoll, uring or auto) into `choice`.
void add_io_option(CLI::App& cmd, std::string& choice);

/// The engine `choice` stands for on this machine. "uring" where io_uring cannot be set up is an
/// error: the sentence says why. "auto" then falls back to epoll, and `note` says so.
std::variant<engine::IoEngine, std::string> resolve_io(const std::string& choice,
                                                       std::string& note);

/// "epoll" or "uring".
const char* io_name(engine::IoEngine io);

}  // namespace volley::cli
