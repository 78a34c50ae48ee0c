#pragma once
// The end-of-step byte counts on the wire (docs/control-protocol.md, "The end of a step"): each
// side's `written` messages list what it wrote per data connection during a step, split so that
// no message exceeds the receiver's frame limit, and the slave's `drained` names the connections
// its drain left short.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/engine/plan.hpp"
#include "volley/engine/step_bytes.hpp"

namespace volley::control {

/// `written{step, connections: [[group, strand, conn, serial, bytes], ...]}` messages for
/// `entries`, each within `max_frame_bytes` (0: the 16 MiB default). None when `entries` is empty.
std::vector<nlohmann::json> written_messages(std::size_t step,
                                             const std::vector<engine::ConnectionBytes>& entries,
                                             std::uint64_t max_frame_bytes);
/// Appends a `written` message's entries to `into`; false when it is malformed.
bool append_written(const nlohmann::json& message, std::vector<engine::ConnectionBytes>& into);

/// `drained{step, short: [[group, strand, conn, serial, bytes, got, why], ...], short_total}`:
/// at most a few shortfalls are listed, all are counted.
nlohmann::json drained_message(std::size_t step,
                               const std::vector<engine::DrainShortfall>& shortfalls);
/// The shortfalls a `drained` message lists, and how many there were in all.
bool shortfalls_from(const nlohmann::json& message, std::vector<engine::DrainShortfall>& into,
                     std::uint64_t& total);

/// One sentence for a side's drain shortfalls: "after step 2, slave h's drain was short on 3
/// connections: group 'g' strand 0 the anonymous connection (#0): read ... (first 3 of 12)".
std::string describe_shortfalls(const std::string& side, std::size_t step,
                                const std::vector<engine::DrainShortfall>& listed,
                                std::uint64_t total, const engine::Plan& plan);

}  // namespace volley::control
