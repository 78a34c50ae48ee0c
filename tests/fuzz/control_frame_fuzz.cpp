// Fuzz target: a control connection's byte stream as a peer sends it, read the way the channel
// reads it: a 4-byte length checked against the limit before anything is allocated (the greeting
// limit for the first frame, as a slave does before the hello), then the payload decoded as a JSON
// object with a "type". The first byte picks the limit after the greeting, so small limits (and
// frames that straddle them) are reached too. Every decoded message goes to the parser of its
// type. Invariant checked: a payload that decodes re-encodes to a frame that decodes the same.
#include <array>
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"
#include "volley/control/sampling_wire.hpp"
#include "volley/results/result_json.hpp"

namespace {

using namespace volley;
using nlohmann::json;

void dispatch(const json& m) {
  std::string error;
  const std::string type = control::text_field(m, "type");
  if (type == "hello") {
    (void)control::check_hello(m, "peer");
    (void)control::check_load_fits(control::announced_limits(m), 1U << 20, 1U << 16);
  } else if (type == "load") {
    (void)control::load_from_json(m, error);
  } else if (type == "results" || type == "result") {
    if (m.contains("result")) (void)results::run_result_from_json(m["result"], error);
    (void)results::run_result_from_json(m, error);
  }
  for (const char* key : {"cpu", "slave_cpu"}) {
    if (m.contains(key)) (void)control::cpu_usage_from_json(m[key]);
  }
  for (const char* key : {"nic", "slave_nic"}) {
    if (m.contains(key)) (void)control::nic_rates_from_json(m[key]);
  }
  if (m.contains("kernel")) (void)control::kernel_counters_from_json(m["kernel"]);
  for (const char* key : {"step", "port", "token", "seed", "master_port"}) {
    (void)control::uint_field(m, key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  volley::fuzz::FuzzInput in(data, size);
  const std::uint32_t later_limit = 16U << (in.byte() % 21);  // 16 B .. 16 MiB
  std::uint32_t limit = control::kMaxGreetingFrameBytes;
  while (!in.empty()) {
    std::array<std::uint8_t, 4> header{};
    for (auto& b : header) b = in.byte();
    const auto length = control::decode_length(header, limit);
    if (std::holds_alternative<control::DecodeError>(length)) return 0;  // the channel closes here
    const std::string_view payload = in.take(std::get<std::uint32_t>(length));
    if (payload.size() < std::get<std::uint32_t>(length)) return 0;  // the peer went away
    auto decoded = control::decode_payload(payload);
    if (std::holds_alternative<control::DecodeError>(decoded)) return 0;
    const json& m = std::get<json>(decoded);
    const std::string again = control::encode_frame(m);
    const auto round = control::decode_payload(std::string_view(again).substr(4));
    if (!std::holds_alternative<json>(round) || std::get<json>(round) != m) std::abort();
    dispatch(m);
    limit = later_limit;
  }
  return 0;
}
