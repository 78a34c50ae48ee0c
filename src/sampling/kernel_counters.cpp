// The readers of /proc/net/snmp, /proc/net/netstat and /proc/net/softnet_stat.
#include "volley/sampling/kernel_counters.hpp"

#include <charconv>
#include <string>

#include <fmt/format.h>

#include "volley/sampling/text_file.hpp"

namespace volley::sampling {
namespace {

// "Tcp:" -> "Tcp"; empty when the field is not a group label.
std::string_view group_of(std::string_view label) {
  if (label.size() < 2 || label.back() != ':') return {};
  return label.substr(0, label.size() - 1);
}

std::string line_error(std::size_t index, std::string_view what) {
  return "line " + std::to_string(index + 1) + ": " + std::string(what);
}

// Adds one header/value pair's counters to `out`; an error text when they do not match.
std::string add_pair(std::string_view header, std::string_view values, std::size_t index,
                     ProtocolCounterMap& out) {
  const auto names = split_fields(header);
  const auto numbers = split_fields(values);
  const auto group = group_of(names.front());
  if (group.empty()) return line_error(index, "no \"Group:\" label");
  if (numbers.empty() || numbers.front() != names.front()) {
    return line_error(index + 1, "not the values of " + std::string(group));
  }
  if (numbers.size() != names.size()) {
    return line_error(index + 1, "the number of values differs from the header's");
  }
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (const auto v = parse_u64(numbers[i])) {
      out.insert_or_assign(std::string(group) + "." + std::string(names[i]), *v);
    } else if (!parse_i64(numbers[i])) {
      return line_error(index + 1, fmt::format("'{}' is not an integer", numbers[i]));
    }
  }
  return {};
}

std::optional<std::uint32_t> parse_hex32(std::string_view text) {
  std::uint32_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

// Reads one protocol file into the sample, or notes why it could not.
void read_pairs(const std::filesystem::path& root, const char* relative, KernelSample& sample) {
  const auto text = read_text_file(root / relative);
  if (!text) {
    sample.problems.push_back(std::string(relative) + ": unreadable");
    return;
  }
  auto parsed = parse_snmp_pairs(*text);
  if (auto* error = std::get_if<std::string>(&parsed)) {
    sample.problems.push_back(std::string(relative) + ": " + *error);
    return;
  }
  sample.protocol.merge(std::get<ProtocolCounterMap>(parsed));
}

}  // namespace

ParseResult<ProtocolCounterMap> parse_snmp_pairs(std::string_view text) {
  std::vector<std::pair<std::size_t, std::string_view>> lines;  // (index, line), blank ones out
  const auto all = split_lines(text);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!trim(all[i]).empty()) lines.emplace_back(i, all[i]);
  }
  ProtocolCounterMap out;
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    if (i + 1 == lines.size()) return line_error(lines[i].first, "a header without values");
    auto error = add_pair(lines[i].second, lines[i + 1].second, lines[i].first, out);
    if (!error.empty()) return error;
  }
  return out;
}

ParseResult<std::vector<SoftnetCpu>> parse_softnet_stat(std::string_view text) {
  std::vector<SoftnetCpu> out;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto fields = split_fields(lines[i]);
    if (fields.empty()) continue;
    if (fields.size() < 3) return line_error(i, "fewer than three columns");
    std::uint32_t v[3] = {};
    for (std::size_t c = 0; c < 3; ++c) {
      const auto parsed = parse_hex32(fields[c]);
      if (!parsed) return line_error(i, fmt::format("'{}' is not hexadecimal", fields[c]));
      v[c] = *parsed;
    }
    // Kernels since 5.10 print the CPU's number in column 13 (offline CPUs have no line).
    std::optional<std::uint32_t> cpu = fields.size() >= 13 ? parse_hex32(fields[12]) : std::nullopt;
    out.push_back(
        SoftnetCpu{cpu.value_or(static_cast<std::uint32_t>(out.size())), v[0], v[1], v[2]});
  }
  if (out.empty()) return std::string("no CPU line");
  return out;
}

KernelSample sample_kernel_counters(const std::filesystem::path& root) {
  KernelSample sample;
  read_pairs(root, "proc/net/snmp", sample);
  read_pairs(root, "proc/net/netstat", sample);
  if (const auto text = read_text_file(root / "proc/net/softnet_stat")) {
    auto parsed = parse_softnet_stat(*text);
    if (auto* cpus = std::get_if<std::vector<SoftnetCpu>>(&parsed)) {
      sample.softnet = std::move(*cpus);
    } else {
      sample.problems.push_back("proc/net/softnet_stat: " + std::get<std::string>(parsed));
    }
  } else {
    sample.problems.push_back("proc/net/softnet_stat: unreadable");
  }
  sample.taken = std::chrono::steady_clock::now();
  return sample;
}

}  // namespace volley::sampling
