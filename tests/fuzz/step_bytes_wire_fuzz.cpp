// Fuzz target: the end-of-step byte counts a peer sends, `written` (what it wrote per data
// connection, read by the other side's drain and by a parent from its children) and `drained`
// (the shortfalls of its drain, turned into the run's error sentence). The input is the message's
// JSON text; each parser sees it, and what they accept is described against a plan with one
// named group, so listed group numbers hit and miss the plan.
// Invariants checked: accepted entries written back (split at a small frame limit, so several
// messages) parse back to the same entries; accepted shortfalls count at least as many as listed.
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "volley/control/step_bytes_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley;
  using nlohmann::json;
  const json m = json::parse(reinterpret_cast<const char*>(data),
                             reinterpret_cast<const char*>(data) + size, nullptr,
                             /*allow_exceptions=*/false);
  if (m.is_discarded()) return 0;
  std::vector<engine::ConnectionBytes> written;
  if (control::append_written(m, written)) {
    std::vector<engine::ConnectionBytes> again;
    for (const json& part : control::written_messages(3, written, 1024)) {
      if (part.dump().size() > 1024 || !control::append_written(part, again)) std::abort();
    }
    if (again != written) std::abort();
  }
  std::vector<engine::DrainShortfall> listed;
  std::uint64_t total = 0;
  if (control::shortfalls_from(m, listed, total)) {
    if (total < listed.size()) std::abort();
    engine::Plan plan;
    plan.groups.push_back(engine::GroupPlan{.name = "g", .strands = 1, .txns = {}});
    (void)control::describe_shortfalls("slave h", 2, listed, total, plan);
    std::vector<engine::DrainShortfall> again;
    std::uint64_t again_total = 0;
    if (!control::shortfalls_from(control::drained_message(2, listed), again, again_total) ||
        again.size() != std::min<std::size_t>(listed.size(), 5)) {
      std::abort();
    }
  }
  return 0;
}
