#include "volley/engine/run_result.hpp"

namespace volley::engine {

SlotCounters RunResult::totals() const {
  SlotCounters sum;
  for (const auto& g : groups) {
    for (const auto& t : g.transactions) {
      for (const auto& f : t.flowops) sum.merge(f.stats.counters);
    }
  }
  return sum;
}

std::uint64_t RunResult::transactions() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) {
    for (const auto& t : g.transactions) n += t.stats.counters.ops;
  }
  return n;
}

}  // namespace volley::engine
