#include "volley/control/step_bytes_wire.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"
#include "volley/core/printable.hpp"

namespace volley::control {

using nlohmann::json;

namespace {
/// An entry's worst size as compact JSON: five u32 (the last, the peer, only when not 0) and a
/// u64, with brackets and commas.
constexpr std::uint64_t kEntryBytes = 5 * 10 + 20 + 9;
/// Room for the type, the step and the framing around the list.
constexpr std::uint64_t kEnvelopeBytes = 256;
/// At most this many entries per message even when the frame limit would take more, so one
/// message never holds the control thread for long.
constexpr std::size_t kMaxEntriesPerMessage = 50'000;
/// Shortfalls listed in one `drained` (all are counted).
constexpr std::size_t kListedShortfalls = 5;
}  // namespace

std::vector<json> written_messages(std::size_t step,
                                   const std::vector<engine::ConnectionBytes>& entries,
                                   std::uint64_t max_frame_bytes) {
  const std::uint64_t limit = max_frame_bytes == 0 ? kMaxFrameBytes : max_frame_bytes;
  const std::size_t per = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(limit > kEnvelopeBytes ? (limit - kEnvelopeBytes) / kEntryBytes : 1,
                                1, kMaxEntriesPerMessage));
  std::vector<json> out;
  for (std::size_t i = 0; i < entries.size(); i += per) {
    json list = json::array();
    for (std::size_t j = i; j < std::min(entries.size(), i + per); ++j) {
      const auto& e = entries[j];
      json entry = json::array({e.group, e.strand, e.conn, e.serial, e.bytes});
      if (e.peer != 0) entry.push_back(e.peer);  // between a master and its child processes
      list.push_back(std::move(entry));
    }
    out.push_back(message("written", {{"step", step}, {"connections", std::move(list)}}));
  }
  return out;
}

namespace {
bool entry_from(const json& j, engine::ConnectionBytes& e) {
  if (!j.is_array() || j.size() < 5) return false;
  for (std::size_t i = 0; i < 5; ++i) {
    if (!j[i].is_number_unsigned()) return false;
  }
  for (std::size_t i = 0; i < 4; ++i) {
    if (j[i].get<std::uint64_t>() > UINT32_MAX) return false;
  }
  e.group = j[0].get<std::uint32_t>();
  e.strand = j[1].get<std::uint32_t>();
  e.conn = j[2].get<std::uint32_t>();
  e.serial = j[3].get<std::uint32_t>();
  e.bytes = j[4].get<std::uint64_t>();
  return true;
}
}  // namespace

bool append_written(const json& m, std::vector<engine::ConnectionBytes>& into) {
  const auto it = m.find("connections");
  if (it == m.end() || !it->is_array()) return false;
  for (const auto& j : *it) {
    engine::ConnectionBytes e;
    if (!entry_from(j, e)) return false;
    if (j.size() > 5) {  // the peer, between a master and its child processes
      if (!j[5].is_number_unsigned() || j[5].get<std::uint64_t>() > UINT32_MAX) return false;
      e.peer = j[5].get<std::uint32_t>();
    }
    into.push_back(e);
  }
  return true;
}

json drained_message(std::size_t step, const std::vector<engine::DrainShortfall>& shortfalls) {
  json list = json::array();
  for (std::size_t i = 0; i < std::min(shortfalls.size(), kListedShortfalls); ++i) {
    const auto& s = shortfalls[i];
    list.push_back(json::array({s.expected.group, s.expected.strand, s.expected.conn,
                                s.expected.serial, s.expected.bytes, s.got, s.why}));
  }
  return message("drained",
                 {{"step", step}, {"short", std::move(list)}, {"short_total", shortfalls.size()}});
}

bool shortfalls_from(const json& m, std::vector<engine::DrainShortfall>& into,
                     std::uint64_t& total) {
  total = uint_field(m, "short_total").value_or(0);
  const auto it = m.find("short");
  if (it == m.end() || !it->is_array()) return false;
  for (const auto& j : *it) {
    engine::DrainShortfall s;
    if (!entry_from(j, s.expected) || j.size() < 7 || !j[5].is_number_unsigned() ||
        !j[6].is_string()) {
      return false;
    }
    s.got = j[5].get<std::uint64_t>();
    s.why = core::printable(j[6].get<std::string>(), 200);
    into.push_back(std::move(s));
  }
  total = std::max<std::uint64_t>(total, into.size());
  return true;
}

std::string describe_shortfalls(const std::string& side, std::size_t step,
                                const std::vector<engine::DrainShortfall>& listed,
                                std::uint64_t total, const engine::Plan& plan) {
  std::vector<std::string> names;
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    names.push_back(engine::group_display_name(plan.groups[g], g));
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < std::min(listed.size(), kListedShortfalls); ++i) {
    parts.push_back(engine::describe(listed[i], names));
  }
  return fmt::format(
      "after step {}, the {} did not read everything its peer wrote on {} "
      "connection{}: {}{}",
      step, side, total, total == 1 ? "" : "s", fmt::join(parts, "; "),
      total > parts.size() ? fmt::format(" (first {} of {})", parts.size(), total) : "");
}

}  // namespace volley::control
