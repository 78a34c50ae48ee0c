#pragma once
// A slave's CPU and NIC figures travel as the JSON the sampling module writes; these read them
// back on the master. Missing or malformed input gives nullopt (the report then says "missing").
#include <optional>

#include <nlohmann/json.hpp>

#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/nic_sampler.hpp"

namespace volley::control {

std::optional<sampling::CpuUsage> cpu_usage_from_json(const nlohmann::json& j);
std::optional<sampling::NicRates> nic_rates_from_json(const nlohmann::json& j);

}  // namespace volley::control
