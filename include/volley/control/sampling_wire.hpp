#pragma once
// A slave's CPU, NIC and kernel counter figures travel as the JSON the sampling module writes;
// these read them back on the master. Missing or malformed input gives nullopt (the report then
// says "missing").
#include <cstddef>
#include <optional>

#include <nlohmann/json.hpp>

#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/kernel_counters.hpp"
#include "volley/sampling/nic_sampler.hpp"

namespace volley::control {

std::optional<sampling::CpuUsage> cpu_usage_from_json(const nlohmann::json& j);
std::optional<sampling::NicRates> nic_rates_from_json(const nlohmann::json& j);
inline constexpr std::size_t kMaxKernelCpus = 1u << 14;
inline constexpr std::size_t kMaxKernelProblems = 16;

/// The peer's kernel counters. Names not among sampling::watched_protocol_counters() are left
/// out (a newer peer may watch more), so only known names reach a report. Counters must be
/// integers of 0..2^64-1, CPU numbers of 0..2^32-1, every text a string; at most kMaxKernelCpus
/// CPUs and kMaxKernelProblems problems (each cut to 512 bytes).
std::optional<sampling::KernelCounterDeltas> kernel_counters_from_json(const nlohmann::json& j);

}  // namespace volley::control
