#pragma once
// The sections of the final text report (private to src/report). Each returns its lines, every
// one ending in '\n', or an empty string when it has nothing to show.
#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report::detail {

std::string run_header_section(const RunReport& report);
std::string transactions_section(const RunReport& report);
std::string flowops_section(const RunReport& report);
std::string flowop_latency_section(const RunReport& report);
std::string totals_section(const RunReport& report);
std::string cpu_section(const RunReport& report);
std::string nic_section(const RunReport& report);
std::string kernel_section(const RunReport& report);
std::string tcp_section(const RunReport& report);
std::string bottleneck_section(const RunReport& report);
std::string run_statistics_section(const RunReport& report);
std::string datagram_section(const RunReport& report);
std::string tls_section(const RunReport& report);
std::string zerocopy_section(const RunReport& report);

}  // namespace volley::report::detail
