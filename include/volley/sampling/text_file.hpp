#pragma once
/// \file
/// volley::sampling reads what the host says about itself: CPU time (/proc/stat, getrusage), NIC
/// counters (/proc/net/dev) and OS tunings (/proc/sys, /sys). Every reader takes a root directory
/// ("/" on a real host, a fake tree in tests) and reports missing sources as values; none throws.
/// It does not time anything on the hot path (that is volley::stats) and prints nothing.
///
/// This header holds the small text helpers the readers share.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volley::sampling {

/// Whole contents of a small text file (procfs and sysfs files report size 0, so this reads until
/// EOF). nullopt when the file cannot be opened or read (e.g. EINVAL from /sys/class/net/lo/speed)
/// or is larger than `max_bytes`. Thread: any.
[[nodiscard]] std::optional<std::string> read_text_file(const std::filesystem::path& path,
                                                        std::size_t max_bytes = 16u << 20);

/// `text` without leading and trailing whitespace. Thread: any.
[[nodiscard]] std::string_view trim(std::string_view text);

/// `text` trimmed, with every inner run of whitespace collapsed to one space ("4096\t131072" ->
/// "4096 131072"). Thread: any.
[[nodiscard]] std::string normalize_whitespace(std::string_view text);

/// Whitespace-separated fields of `line` (views into it). Thread: any.
[[nodiscard]] std::vector<std::string_view> split_fields(std::string_view line);

/// Lines of `text`, without their '\n'. Thread: any.
[[nodiscard]] std::vector<std::string_view> split_lines(std::string_view text);

/// Decimal unsigned integer (the whole of `text`, no sign, no spaces); nullopt otherwise.
/// Thread: any.
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view text);

/// Decimal signed integer (the whole of `text`, optional '-'); nullopt otherwise. Thread: any.
[[nodiscard]] std::optional<std::int64_t> parse_i64(std::string_view text);

}  // namespace volley::sampling
