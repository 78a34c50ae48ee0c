// Fuzz target: the per-interval messages of a run, `interval` (the master asks a slave for its
// part of an interval) and `interval_counts` (the slave's answer: UDP counts, TCP state and
// kernel counters, merged into the master's interval report). The input is the message's JSON
// text.
// Invariants checked: an accepted part lists at most kMaxIntervalEntries transactions of each
// kind, and written back as the slave writes it, parses back to the same part.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "volley/control/interval_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley::control;
  using nlohmann::json;
  const json m = json::parse(reinterpret_cast<const char*>(data),
                             reinterpret_cast<const char*>(data) + size, nullptr,
                             /*allow_exceptions=*/false);
  if (m.is_discarded()) return 0;
  if (const auto interval = interval_requested(m)) {
    if (interval_requested(interval_request(*interval)) != interval) std::abort();
  }
  const auto part = interval_part_from_json(m);
  if (!part) return 0;
  if (part->txns.size() > kMaxIntervalEntries || part->tcp.size() > kMaxIntervalEntries)
    std::abort();
  const json again =
      part->missing.empty()
          ? interval_counts_message(part->interval, part->txns, part->tcp, part->kernel)
          : interval_missing_message(part->interval, part->missing);
  const auto round = interval_part_from_json(again);
  if (!round || round->interval != part->interval || round->missing != part->missing) std::abort();
  if (part->missing.empty() && round->txns != part->txns) std::abort();
  if (part->missing.empty() && round->tcp.size() != part->tcp.size()) std::abort();
  if (part->missing.empty() && round->kernel != part->kernel) std::abort();
  if (part->kernel && part->kernel->size() > kMaxIntervalCounters) std::abort();
  for (std::size_t i = 0; part->missing.empty() && i < part->tcp.size(); ++i) {
    const TxnTcp& a = part->tcp[i];
    const TxnTcp& b = round->tcp[i];
    if (a.group != b.group || a.txn != b.txn || !(a.tcp == b.tcp)) std::abort();
  }
  return 0;
}
