// Fuzz target: one control message's JSON text, given to every parser a peer's message reaches
// (hello and its limits, load, results, the CPU, NIC and kernel counter figures), whatever its
// "type" says: each must refuse what it cannot read with an error value, never throw, crash or
// allocate without bound. Invariant checked: a load, a result or kernel counters that parse,
// written back and parsed again, give the same value.
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "volley/control/message.hpp"
#include "volley/control/sampling_wire.hpp"
#include "volley/results/result_json.hpp"

namespace {

void check_kernel_counters(const nlohmann::json& j) {
  const auto counters = volley::control::kernel_counters_from_json(j);
  if (!counters) return;
  nlohmann::json again;
  volley::sampling::to_json(again, *counters);
  if (volley::control::kernel_counters_from_json(again) != counters) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley;
  using nlohmann::json;
  const json m = json::parse(reinterpret_cast<const char*>(data),
                             reinterpret_cast<const char*>(data) + size, nullptr,
                             /*allow_exceptions=*/false);
  if (m.is_discarded()) return 0;
  (void)control::check_hello(m, "peer");
  const auto limits = control::announced_limits(m);
  (void)control::check_load_fits(limits, 1U << 20, 1U << 16);
  std::string error;
  if (const auto load = control::load_from_json(m, error)) {
    std::string again_error;
    const auto again = control::load_from_json(control::to_json(*load), again_error);
    if (!again || again->profile_text != load->profile_text ||
        again->variables != load->variables || again->file_sets != load->file_sets ||
        again->seed != load->seed) {
      std::abort();
    }
  }
  if (const auto result = results::run_result_from_json(m, error)) {
    std::string again_error;
    if (!results::run_result_from_json(results::to_json(*result), again_error)) std::abort();
  }
  (void)control::cpu_usage_from_json(m);
  (void)control::nic_rates_from_json(m);
  check_kernel_counters(m);
  if (m.is_object()) {
    for (const auto& [key, value] : m.items()) {
      (void)control::text_field(m, key);
      (void)control::uint_field(m, key);
      (void)control::cpu_usage_from_json(value);
      (void)control::nic_rates_from_json(value);
      check_kernel_counters(value);
      (void)results::run_result_from_json(value, error);
    }
  }
  return 0;
}
